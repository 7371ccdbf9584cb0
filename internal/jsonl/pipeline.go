package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A big file is decoded in a pipeline: its bytes are cut into chunks of
// whole lines, parsers (one per core) parse the chunks side by side, and
// one goroutine loads what they parsed into the graph in the file's order.
// Reading the file is a stage of the same pipeline (Read), so a chunk is
// parsed while the next is still on its way from the disk, and the
// loading goroutine, the one that cannot be split, starts on the first
// megabyte rather than after the last.

// chunkLen is how many bytes of the file a chunk holds: a chunk ends at
// the last line end in its chunkLen bytes (a line longer than that makes
// its chunk longer).
const chunkLen = 1 << 20

// Read decodes the memory file r holds, as Decode does, reading it a
// chunk at a time while earlier chunks are parsed and loaded. size is the
// size the file had when it was opened (fs.FileInfo.Size), used to size
// the graph's tables; a file that grew since is read to its end all the
// same. The graph holds none of the bytes read (see Decode), so a chunk is
// garbage once its lines are loaded and the file is never in memory
// whole.
//
// tee, when not nil, is written every byte of the file in order, as it is
// read: a caller that wants the file's checksum passes a hash, and needs
// no copy of the file. When a read fails Read returns its error and no
// File: nothing half-read is ever used.
func Read(r io.ReaderAt, size int64, tee io.Writer) (*File, error) {
	return read(r, size, chunkLen, parsers(), tee)
}

// parsers is how many chunks are parsed at once: one per core.
func parsers() int { return max(1, runtime.GOMAXPROCS(0)) }

func read(r io.ReaderAt, size int64, chunk, nparsers int, tee io.Writer) (*File, error) {
	f := &File{Graph: graph.New()}
	reserve(f.Graph, max(size, 0), func(off int64, p []byte) int {
		n, _ := r.ReadAt(p, off)
		return n
	})
	var err error
	decodeChunks(f, nparsers, func(emit func([]byte)) {
		err = readChunks(r, chunk, tee, emit)
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readChunks reads r to its end, about chunk bytes at a time, each time
// into a buffer of its own, and hands emit the whole lines read so far,
// then at the end the rest (a last line without its line end). A line
// longer than a chunk is read on until its end, in a buffer that grows as
// it needs. It returns the first read error.
func readChunks(r io.ReaderAt, chunk int, tee io.Writer, emit func([]byte)) error {
	var off int64
	var carry []byte // the start of a line whose end is not read yet
	for {
		buf := make([]byte, len(carry), len(carry)+max(chunk, len(carry)))
		copy(buf, carry)
		n, err := r.ReadAt(buf[len(carry):cap(buf)], off)
		if n > 0 && tee != nil {
			tee.Write(buf[len(carry) : len(carry)+n])
		}
		buf = buf[:len(carry)+n]
		off += int64(n)
		if errors.Is(err, io.EOF) {
			if len(buf) > 0 {
				emit(buf)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading at byte %d: %w", off, err)
		}
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 {
			carry = buf
			continue
		}
		emit(buf[: i+1 : i+1])
		carry = buf[i+1:]
	}
}

// decodePipelined decodes data in the pipeline, cut into chunks of chunk
// bytes, with nparsers parsers.
func decodePipelined(data []byte, chunk, nparsers int) *File {
	f := &File{Graph: graph.New()}
	reserve(f.Graph, int64(len(data)), func(off int64, p []byte) int { return copy(p, data[off:]) })
	decodeChunks(f, nparsers, func(emit func([]byte)) {
		for len(data) > 0 {
			end := len(data)
			if end > chunk {
				if i := bytes.IndexByte(data[chunk:], '\n'); i >= 0 {
					end = chunk + i + 1
				}
			}
			emit(data[:end:end])
			data = data[end:]
		}
	})
	return f
}

// parsedChunk is a chunk's lines, parsed: items numbered from 1 within
// the chunk, which has lines lines.
type parsedChunk struct {
	batch
	lines int
}

// chunkJob is a chunk to parse, and where its parse goes.
type chunkJob struct {
	data   []byte
	parsed chan *parsedChunk
}

// decodeChunks runs the pipeline: produce hands emit the file's chunks in
// order, each of whole lines but perhaps the last one; nparsers goroutines
// parse them; this goroutine loads them into f in order, as they come.
// It returns after produce returns and every chunk is loaded.
func decodeChunks(f *File, nparsers int, produce func(emit func([]byte))) {
	inflight := 2 * nparsers // chunks parsed ahead of the loader, at most
	ordered := make(chan chan *parsedChunk, inflight)
	jobs := make(chan chunkJob, nparsers)
	free := make(chan *parsedChunk, inflight+nparsers)
	for range nparsers {
		go func() {
			var d decoder
			for j := range jobs {
				var p *parsedChunk
				select {
				case p = <-free:
				default:
					p = &parsedChunk{}
				}
				d.strs = p.strs[:0]
				p.lines = forEachLine(j.data, func(n int, line []byte) {
					p.items = append(p.items, d.parseLine(n, line))
				})
				p.strs = d.strs
				j.parsed <- p
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer close(jobs)
		produce(func(data []byte) {
			parsed := make(chan *parsedChunk, 1)
			ordered <- parsed
			jobs <- chunkJob{data: data, parsed: parsed}
		})
	}()
	base := 0 // lines in the chunks loaded
	for parsed := range ordered {
		p := <-parsed
		for i := range p.items {
			it := &p.items[i]
			it.line += base
			f.load(it)
		}
		base += p.lines
		clear(p.items)
		clear(p.strs) // the graph copied the observations out
		p.items, p.strs = p.items[:0], p.strs[:0]
		select {
		case free <- p:
		default:
		}
	}
}

// Samples that reserve reads to guess how many lines a file holds.
const (
	samples   = 32
	sampleLen = 16 << 10
)

// reserve sizes g's tables for a file of size bytes (guess); a file under
// pipelineMin bytes is loaded without, as it was before there was a
// pipeline, so a small file is read once, not twice.
func reserve(g *graph.Graph, size int64, readAt func(off int64, p []byte) int) {
	if size < pipelineMin {
		return
	}
	if entities, relations := guess(size, readAt); entities+relations > 0 {
		g.Reserve(entities, relations)
	}
}

// guess returns how many entities and relations a file of size bytes (at
// least samples × sampleLen) holds, guessed from samples spread over it
// read with readAt (which returns how many bytes it read at off), at a
// cost that does not grow with the file: a relation line as this server
// and the reference write it has relationMark, and the other lines are
// taken for entities. A wrong guess costs only time.
func guess(size int64, readAt func(off int64, p []byte) int) (entities, relations int) {
	var read, lines, rels int64
	p := make([]byte, sampleLen)
	for i := range int64(samples) {
		n := readAt(i*(size-sampleLen)/(samples-1), p)
		read += int64(n)
		lines += int64(bytes.Count(p[:n], []byte{'\n'}))
		rels += int64(bytes.Count(p[:n], relationMark))
	}
	if read == 0 {
		return 0, 0
	}
	lines = lines * size / read
	rels = min(lines, rels*size/read)
	return int(lines - rels), int(rels)
}

var relationMark = []byte(`"type":"relation"`)
