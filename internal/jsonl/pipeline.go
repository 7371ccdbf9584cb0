package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

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
	decodeChunks(f, nparsers, func(emit func([][]byte, func())) {
		err = readChunks(r, chunk, tee, func(data []byte, release func()) { emit([][]byte{data}, release) })
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readChunks reads r to its end, about chunk bytes at a time, and hands
// emit the whole lines read so far, then at the end the rest (a last line
// without its line end), with a function to call once nothing points into
// them any more. A line longer than a chunk is read on until its end, in a
// buffer that grows as it needs. Buffers given back are read into again,
// so reading a big file costs a few chunks of memory, not the file. It
// returns the first read error.
func readChunks(r io.ReaderAt, chunk int, tee io.Writer, emit func(data []byte, release func())) error {
	spare := make(chan []byte, spareChunks)
	get := func(n int) []byte {
		select {
		case b := <-spare:
			if cap(b) >= n {
				return b[:0]
			}
		default:
		}
		return make([]byte, 0, n)
	}
	release := func(b []byte) func() {
		return func() {
			select {
			case spare <- b:
			default:
			}
		}
	}
	var off int64
	buf := get(chunk) // holds the start of a line whose end is not read yet, then what is read
	for {
		if len(buf) == cap(buf) {
			// A line longer than what was read so far.
			buf = append(make([]byte, 0, 2*cap(buf)), buf...)
		}
		n, err := r.ReadAt(buf[len(buf):cap(buf)], off)
		if n > 0 && tee != nil {
			tee.Write(buf[len(buf) : len(buf)+n])
		}
		buf = buf[:len(buf)+n]
		off += int64(n)
		if errors.Is(err, io.EOF) {
			if len(buf) > 0 {
				emit(buf, release(buf))
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading at byte %d: %w", off, err)
		}
		i := bytes.LastIndexByte(buf, '\n')
		if i < 0 {
			continue
		}
		// The rest goes to the next buffer before this one is emitted:
		// once emitted, it may come back to be read into at any time.
		next := get(len(buf) - (i + 1) + chunk)
		next = append(next, buf[i+1:]...)
		emit(buf[:i+1:i+1], release(buf))
		buf = next
	}
}

// spareChunks bounds the buffers readChunks keeps to read into again: as
// many as the pipeline holds at once (decodeChunks), so one comes back for
// every chunk read once the pipeline is full.
const spareChunks = 8

// decodePipelined decodes data in the pipeline, cut into chunks of chunk
// bytes (each to the end of the line it ends in), with nparsers parsers.
func decodePipelined(data []byte, chunk, nparsers int) *File {
	var chunks [][]byte
	for len(data) > 0 {
		end := len(data)
		if end > chunk {
			if i := bytes.IndexByte(data[chunk:], '\n'); i >= 0 {
				end = chunk + i + 1
			}
		}
		chunks = append(chunks, data[:end:end])
		data = data[end:]
	}
	return decodeParts(chunks, nparsers, nil)
}

// DecodeChunks decodes a memory held in chunks, in order, each of whole
// lines (the last one's line end may be missing), as Decode decodes their
// concatenation, without making it: a caller that gathers a memory from
// many places (the rows of a database) needs no buffer of it whole.
// loaded, when not nil, is called with each chunk's index, in order, once
// nothing points into the chunk any more: the caller may free it then,
// before the last chunk is decoded.
func DecodeChunks(chunks [][]byte, loaded func(i int)) *File {
	if totalLen(chunks) < pipelineMin {
		f := Decode(bytes.Join(chunks, nil))
		if loaded != nil {
			for i := range chunks {
				loaded(i)
			}
		}
		return f
	}
	return decodeParts(chunks, parsers(), loaded)
}

// totalLen is how many bytes chunks hold.
func totalLen(chunks [][]byte) (n int64) {
	for _, c := range chunks {
		n += int64(len(c))
	}
	return n
}

// decodeParts decodes chunks of whole lines in the pipeline, with
// nparsers parsers, calling loaded (if not nil) as DecodeChunks says.
func decodeParts(chunks [][]byte, nparsers int, loaded func(i int)) *File {
	f := &File{Graph: graph.New()}
	reserve(f.Graph, totalLen(chunks), func(off int64, p []byte) int {
		n := 0
		for _, c := range chunks {
			if off >= int64(len(c)) {
				off -= int64(len(c))
				continue
			}
			n += copy(p[n:], c[off:])
			off = 0
			if n == len(p) {
				break
			}
		}
		return n
	})
	decodeChunks(f, nparsers, func(emit func([][]byte, func())) {
		for from := 0; from < len(chunks); {
			// Chunks under chunkLen go to a parser together: a memory
			// gathered from a database's rows comes in many small runs, and
			// the parsers and the loader pass each other a job per piece.
			to, n := from+1, len(chunks[from])
			for ; to < len(chunks) && n+len(chunks[to]) <= chunkLen; to++ {
				n += len(chunks[to])
			}
			pieces := make([][]byte, to-from)
			for k, c := range chunks[from:to] {
				pieces[k] = c[:len(c):len(c)]
			}
			var release func()
			if loaded != nil {
				first, end := from, to
				release = func() {
					for i := first; i < end; i++ {
						loaded(i)
					}
				}
			}
			emit(pieces, release)
			from = to
		}
	})
	return f
}

// parsedChunk is a chunk's lines, parsed: items numbered from 1 within
// the chunk, which has lines lines, and the function to call once they
// are loaded (none: nothing to do).
type parsedChunk struct {
	batch
	lines   int
	release func()
}

// chunkJob is a chunk to parse, in pieces that each hold whole lines, and
// where its parse goes.
type chunkJob struct {
	pieces  [][]byte
	release func()
	parsed  chan *parsedChunk
}

// decodeChunks runs the pipeline: produce hands emit the file's chunks in
// order, each in pieces of whole lines (but perhaps the file's last line), with a function to
// call once the chunk is loaded (or nil); nparsers goroutines parse them;
// this goroutine loads them into f in order, as they come. It returns
// after produce returns and every chunk is loaded.
//
// The chunks emitted and not yet loaded are at most inflight+1 (those
// waiting in ordered, and the one being loaded), so that many
// parsedChunks, and a parser's worth more, are made once and passed round:
// a parser waits for one rather than make another.
func decodeChunks(f *File, nparsers int, produce func(emit func(pieces [][]byte, release func()))) {
	inflight := 2 * nparsers // chunks parsed ahead of the loader, at most
	ordered := make(chan chan *parsedChunk, inflight)
	jobs := make(chan chunkJob, nparsers)
	free := make(chan *parsedChunk, inflight+nparsers+1)
	for range cap(free) {
		free <- &parsedChunk{}
	}
	for range nparsers {
		go func() {
			var d decoder
			for j := range jobs {
				p := <-free
				d.strs = p.strs[:0]
				// One item a line: grown once to the chunk's count, not by
				// doubling (items are a few hundred bytes, and the garbage of
				// growing them was most of what a load allocates and drops).
				lines := 0
				for _, data := range j.pieces {
					lines += bytes.Count(data, []byte{'\n'}) + 1
				}
				p.items = slices.Grow(p.items, lines)
				p.lines = 0
				for _, data := range j.pieces {
					base := p.lines
					p.lines += forEachLine(data, func(n int, line []byte) {
						p.items = append(p.items, d.parseLine(base+n, line))
					})
				}
				p.strs, p.release = d.strs, j.release
				j.parsed <- p
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer close(jobs)
		produce(func(pieces [][]byte, release func()) {
			parsed := make(chan *parsedChunk, 1)
			ordered <- parsed
			jobs <- chunkJob{pieces: pieces, release: release, parsed: parsed}
		})
	}()
	f.Graph.BeginLoad()
	defer f.endLoad()
	base := 0 // lines in the chunks loaded
	for parsed := range ordered {
		p := <-parsed
		for i := range p.items {
			it := &p.items[i]
			it.line += base
			f.load(it)
		}
		base += p.lines
		if p.release != nil {
			p.release() // the graph holds nothing of the chunk (see Decode)
		}
		clear(p.items)
		clear(p.strs) // the graph copied the observations out
		p.items, p.strs, p.release = p.items[:0], p.strs[:0], nil
		free <- p
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
