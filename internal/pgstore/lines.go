package pgstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// lineSink gathers lines from bytea columns into blocks of about
// sinkBlock bytes, "\n" after each, as pieces of a memory file: one
// allocation per block, not one per row, and no block is copied as more
// come (a buffer grown to a memory of 500 MB copied and dropped about
// four times that).
type lineSink struct {
	blocks [][]byte  // whole lines, in the order read
	refs   []lineRef // refs[i]: where line i is
	seqs   []int64   // seqs[i]: line i's sequence number
	sums   []lineSum // sums[i]: line i's sum, taken as it came
	// chunks are the lines in seq order as pieces of a memory file, once
	// order moved some (nil: blocks are in order); chunkBlock[i] is the
	// block chunk i lies in (-1: one of gathered lines), and inBlock[b]
	// how many chunks not yet decoded lie in block b.
	chunks     [][]byte
	chunkBlock []int32
	inBlock    []int32
	// mapped: blocks are mapped outside the Go heap where the system
	// allows (mapBlock), each given back as soon as the decode is done
	// with it (decodeFreeing): a whole read at a million entities holds
	// 500 MB of lines, which the Go heap would hold until a collection
	// long after. isMapped[b]: block b is.
	mapped   bool
	isMapped []bool
}

// lineRef is where a line is: its block, and its offset and length there.
type lineRef struct{ block, off, n uint32 }

// sinkBlock is the size of a lineSink's blocks; a longer line has a
// block of its own.
const sinkBlock = 1 << 20

// add appends line v, of sequence number seq.
func (l *lineSink) add(seq int64, v []byte) {
	n := len(l.blocks)
	if n == 0 || cap(l.blocks[n-1])-len(l.blocks[n-1]) < len(v)+1 {
		l.newBlock(max(sinkBlock, len(v)+1))
		n++
	}
	b := l.blocks[n-1]
	l.refs = append(l.refs, lineRef{uint32(n - 1), uint32(len(b)), uint32(len(v))})
	l.seqs = append(l.seqs, seq)
	l.sums = append(l.sums, sumLine(v))
	b = append(b, v...)
	l.blocks[n-1] = append(b, '\n')
}

// newBlock appends a block of at least size bytes.
func (l *lineSink) newBlock(size int) {
	var b []byte
	if l.mapped {
		page := syscall.Getpagesize()
		b = mapBlock((size + page - 1) / page * page)
	}
	l.isMapped = append(l.isMapped, b != nil)
	if b == nil {
		b = make([]byte, 0, size)
	}
	l.blocks = append(l.blocks, b)
}

// take appends o's lines after l's, and o's blocks with them: o is left
// empty.
func (l *lineSink) take(o *lineSink) {
	base := uint32(len(l.blocks))
	l.blocks = append(l.blocks, o.blocks...)
	l.isMapped = append(l.isMapped, o.isMapped...)
	for _, r := range o.refs {
		r.block += base
		l.refs = append(l.refs, r)
	}
	l.seqs = append(l.seqs, o.seqs...)
	l.sums = append(l.sums, o.sums...)
	*o = lineSink{mapped: o.mapped}
}

// reset gives back what l holds and empties it.
func (l *lineSink) reset() {
	l.free()
	*l = lineSink{mapped: l.mapped}
}

// unmap gives back block b if it is mapped; nothing may point into it.
func (l *lineSink) unmap(b int) {
	if l.isMapped[b] && l.blocks[b] != nil {
		unmapBlock(l.blocks[b])
		l.blocks[b] = nil
	}
}

// free gives back every mapped block: the lines are no longer there.
func (l *lineSink) free() {
	for b := range l.blocks {
		l.unmap(b)
	}
}

// decodeFreeing decodes the lines as decode does, giving back each mapped
// block as soon as the decode is done with it, and the rest at the end:
// the lines are no longer there after.
func (l *lineSink) decodeFreeing() *jsonl.File {
	defer l.free()
	return jsonl.DecodeChunks(l.inOrder(), func(i int) {
		b := i // in order, chunk i is block i
		if l.chunks != nil {
			if b = int(l.chunkBlock[i]); b < 0 {
				return
			}
			if l.inBlock[b]--; l.inBlock[b] > 0 {
				return
			}
		}
		l.unmap(b)
	})
}

// line returns line i, once every line has been read; in a mapped sink,
// until order or the decode gives its block back.
func (l *lineSink) line(i int) []byte {
	r := l.refs[i]
	end := r.off + r.n
	return l.blocks[r.block][r.off:end:end]
}

// decode decodes the lines as a memory file.
func (l *lineSink) decode() *jsonl.File { return jsonl.DecodeChunks(l.inOrder(), nil) }

// inOrder returns the lines, once ordered, as pieces of a memory file.
func (l *lineSink) inOrder() [][]byte {
	if l.chunks != nil {
		return l.chunks
	}
	return l.blocks
}

// size is how many bytes the lines take, "\n" after each included.
func (l *lineSink) size() int64 {
	var n int64
	for _, b := range l.blocks {
		n += int64(len(b))
	}
	return n
}

// read appends the lines of a table's rows of one memory, in the order the
// database finds them: sorting is left to order, since a sort in the
// server of a big memory spills to disk (work_mem) and the rows mostly lie
// in seq order already.
func (l *lineSink) read(ctx context.Context, tx pgx.Tx, table string, memory int64) error {
	return l.readSince(ctx, tx, table, memory, -1)
}

// readSince is read of the rows written after revision since only. The
// rows come as COPY's binary format, parsed as they come: a query's rows,
// each scanned into values on its own, cost twice the time at a million.
// The query holds only numbers and the name of a table, never text from
// outside.
func (l *lineSink) readSince(ctx context.Context, tx pgx.Tx, table string, memory, since int64) error {
	query := fmt.Sprintf("COPY (SELECT seq, line FROM %s WHERE memory_id = %d", table, memory)
	if since >= 0 {
		query += fmt.Sprintf(" AND rev > %d", since)
	}
	query += ") TO STDOUT (FORMAT binary)"
	c := copyRows{sink: l}
	if _, err := tx.Conn().PgConn().CopyTo(ctx, &c, query); err != nil {
		return err
	}
	return c.end()
}

// copyRows parses COPY's binary format of rows (seq bigint, line bytea)
// into a lineSink, whatever pieces it comes in.
type copyRows struct {
	sink    *lineSink
	rest    []byte // the start of a row cut between two writes
	header  bool   // the header is read
	trailer bool   // and the trailer
}

// copySignature starts COPY's binary format.
var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

var errCopyFormat = errors.New("unexpected COPY data")

// Write implements io.Writer.
func (c *copyRows) Write(p []byte) (int, error) {
	n := len(p)
	if len(c.rest) > 0 {
		c.rest = append(c.rest, p...)
		p = c.rest
	}
	p, err := c.parse(p)
	if err != nil {
		return 0, err
	}
	c.rest = append(c.rest[:0], p...) // p may lie in rest, further on
	return n, nil
}

// parse parses the rows p holds whole and returns the rest.
func (c *copyRows) parse(p []byte) ([]byte, error) {
	if !c.header {
		// The signature, 32 bits of flags, and the extension's length.
		if len(p) < len(copySignature)+8 {
			return p, nil
		}
		if !bytes.Equal(p[:len(copySignature)], copySignature) {
			return nil, fmt.Errorf("%w: no signature", errCopyFormat)
		}
		ext := int(binary.BigEndian.Uint32(p[len(copySignature)+4:]))
		skip := len(copySignature) + 8 + ext
		if ext < 0 || len(p) < skip {
			return p, nil
		}
		p, c.header = p[skip:], true
	}
	for len(p) >= 2 {
		if c.trailer {
			return nil, fmt.Errorf("%w after its end", errCopyFormat)
		}
		switch fields := int16(binary.BigEndian.Uint16(p)); fields {
		case -1:
			p, c.trailer = p[2:], true
			continue
		case 2:
		default:
			return nil, fmt.Errorf("%w: a row of %d columns", errCopyFormat, fields)
		}
		// 2 bytes of field count, the seq's length (8) and value, the
		// line's length and bytes.
		const head = 2 + 4 + 8 + 4
		if len(p) < head {
			break
		}
		if binary.BigEndian.Uint32(p[2:]) != 8 {
			return nil, fmt.Errorf("%w: a seq of %d bytes", errCopyFormat, int32(binary.BigEndian.Uint32(p[2:])))
		}
		seq := int64(binary.BigEndian.Uint64(p[6:]))
		n := int64(int32(binary.BigEndian.Uint32(p[14:])))
		if n < 0 {
			return nil, fmt.Errorf("%w: a line that is NULL", errCopyFormat)
		}
		if int64(len(p)) < head+n {
			break
		}
		c.sink.add(seq, p[head:head+n])
		p = p[head+n:]
	}
	return p, nil
}

// end checks that the data ended where a whole COPY ends.
func (c *copyRows) end() error {
	if !c.header || !c.trailer || len(c.rest) > 0 {
		return fmt.Errorf("%w: it ended before its end", errCopyFormat)
	}
	return nil
}

// order sorts the lines by seq within each section (lines [0, bounds[0]),
// [bounds[0], bounds[1]), …, [last bound, end)). Lines out of order are
// not copied into new blocks: decode reads the runs of lines that follow
// each other in a block where they lie, and only the lines of short runs
// are gathered into new blocks (a row a write changed lies away from its
// neighbours in the database, but most rows stay in order).
func (l *lineSink) order(bounds ...int) {
	bounds = append(bounds, len(l.seqs))
	sorted, from := true, 0
	for _, to := range bounds {
		sorted = sorted && slices.IsSorted(l.seqs[from:to])
		from = to
	}
	if sorted {
		return
	}
	perm := l.sortedBySeq(bounds)
	l.chunks = l.runs(perm)
	for b, n := range l.inBlock {
		if n == 0 {
			l.unmap(b) // its lines were all gathered
		}
	}
	refs, seqs, sums := make([]lineRef, len(perm)), make([]int64, len(perm)), make([]lineSum, len(perm))
	for k, i := range perm {
		refs[k], seqs[k], sums[k] = l.refs[i], l.seqs[i], l.sums[i]
	}
	l.refs, l.seqs, l.sums = refs, seqs, sums
}

// sortedBySeq returns the lines' indexes sorted by seq within each
// section of order's bounds. Where seqs and indexes fit in 32 bits each
// (always, but for a memory that handed out four billion sequence
// numbers), it sorts them packed into one number: no comparison reads a
// line's seq from afar.
func (l *lineSink) sortedBySeq(bounds []int) []int32 {
	perm := make([]int32, len(l.seqs))
	packable := len(l.seqs) <= math.MaxInt32
	for _, seq := range l.seqs {
		packable = packable && seq >= 0 && seq <= math.MaxUint32
	}
	if !packable {
		for i := range perm {
			perm[i] = int32(i)
		}
		from := 0
		for _, to := range bounds {
			slices.SortFunc(perm[from:to], func(a, b int32) int { return cmp.Compare(l.seqs[a], l.seqs[b]) })
			from = to
		}
		return perm
	}
	packed := make([]uint64, len(l.seqs))
	for i, seq := range l.seqs {
		packed[i] = uint64(seq)<<32 | uint64(i)
	}
	from := 0
	for _, to := range bounds {
		slices.Sort(packed[from:to])
		from = to
	}
	for k, p := range packed {
		perm[k] = int32(uint32(p))
	}
	return perm
}

// shortRun is the length under which a run of lines in order is copied
// into a block of gathered lines rather than decoded where it lies.
const shortRun = 16 << 10

// runs returns the lines in the order perm gives as chunks of whole lines:
// each run of lines that follow each other in one block where it lies, but
// the runs shorter than shortRun, which are gathered into blocks.
func (l *lineSink) runs(perm []int32) [][]byte {
	var chunks [][]byte
	var gathered []byte
	l.chunkBlock, l.inBlock = nil, make([]int32, len(l.blocks))
	flush := func() { // what is gathered goes; the room left stays
		if len(gathered) > 0 {
			chunks = append(chunks, gathered[:len(gathered):len(gathered)])
			l.chunkBlock = append(l.chunkBlock, -1)
			gathered = gathered[len(gathered):]
		}
	}
	for k := 0; k < len(perm); {
		first := l.refs[perm[k]]
		j, end := k+1, first.off+first.n+1
		for ; j < len(perm) && perm[j] == perm[j-1]+1; j++ {
			r := l.refs[perm[j]]
			if r.block != first.block {
				break
			}
			end = r.off + r.n + 1
		}
		run := l.blocks[first.block][first.off:end:end]
		if len(run) >= shortRun {
			flush()
			chunks = append(chunks, run)
			l.chunkBlock = append(l.chunkBlock, int32(first.block))
			l.inBlock[first.block]++
		} else {
			if cap(gathered)-len(gathered) < len(run) {
				flush()
				gathered = make([]byte, 0, max(sinkBlock, len(run)))
			}
			gathered = append(gathered, run...)
		}
		k = j
	}
	flush()
	return chunks
}
