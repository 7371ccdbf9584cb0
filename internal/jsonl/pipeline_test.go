package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// messyFile is a generated memory file of n entities with the lines a
// reader must cope with spread through it: unreadable lines, repeated
// entities and relations, blank lines, CRLF line ends, byte order marks
// and lines longer than a small chunk.
func messyFile(n int, seed uint64) []byte {
	var data []byte
	for i, line := range bytes.SplitAfter(benchFile(n, seed), []byte("\n")) {
		switch i % 13 {
		case 3:
			line = append(bytes.TrimSuffix(line, []byte("\n")), "\r\n"...)
		case 7:
			line = append([]byte("\uFEFF"), line...)
		}
		data = append(data, line...)
		switch i % 31 {
		case 5:
			data = append(data, "garbage\r\n"...)
		case 11:
			data = append(data, line...) // a duplicate entity or relation
		case 17:
			data = append(data, "\n  \n"...)
		case 23:
			data = append(data, `{"type":"entity","name":"long `+strings.Repeat("x", 300)+`","entityType":"t","observations":[]}`+"\n"...)
		case 29:
			data = append(data, `{"type":"relation","from":1}`+"\n"...)
		case 13:
			// A relation whose ends no entity has, and members of
			// other tools: what the graph keeps of them must not be
			// the buffer the line was read into.
			data = fmt.Appendf(data, `{"type":"relation","from":"ghost %d","to":"nobody","relationType":"haunts","w":[%d]}`+"\n", i, i)
		case 19:
			data = fmt.Appendf(data, `{"type":"entity","name":"esc\"aped %d","entityType":"t\u00e9","observations":["a\nb","plain %d"],"x":{"y":%d}}`+"\n", i, i, i)
		}
	}
	return data
}

// checkSameFile fails t unless got decodes data as the serial reader does.
func checkSameFile(t *testing.T, data []byte, got *File) {
	t.Helper()
	want := decode(data, false)
	if !equalSnapshots(snapshot(got.Graph), snapshot(want.Graph)) {
		t.Error("graph differs from the one decoded line by line")
	}
	if !slices.EqualFunc(got.Unreadable, want.Unreadable, bytes.Equal) {
		t.Errorf("Unreadable = %q, want %q", got.Unreadable, want.Unreadable)
	}
	if !slices.Equal(got.Problems, want.Problems) {
		t.Errorf("Problems = %v, want %v", got.Problems, want.Problems)
	}
	if out := encode(nil, got.Graph, got.Unreadable); !bytes.Equal(out, encode(nil, want.Graph, want.Unreadable)) {
		t.Error("the file encodes differently")
	}
}

// TestReadInChunks reads files of many sizes in chunks of many sizes,
// with one parser and several, and checks that each gives the File that
// Decode gives: chunk edges fall inside lines, inside CRLF pairs and byte
// order marks, and a file may end in a torn line.
func TestReadInChunks(t *testing.T) {
	files := map[string][]byte{
		"empty":             nil,
		"one line, no end":  []byte(`{"type":"entity","name":"a","entityType":"t","observations":["x"]}`),
		"only blank lines":  []byte("\n\r\n  \n"),
		"torn last line":    append(benchFile(40, 3), `{"type":"entity","name":"torn","entit`...),
		"messy, 200":        messyFile(200, 4),
		"messy, 3000":       messyFile(3000, 5),
		"relations first":   append(bytes.SplitAfterN(benchFile(300, 6), []byte(`{"type":"relation"`), 2)[1], benchFile(300, 6)...),
		"no final line end": bytes.TrimSuffix(messyFile(100, 7), []byte("\n")),
	}
	for name, data := range files {
		for _, chunk := range []int{1, 7, 100, 4096, chunkLen} {
			for _, nparsers := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/chunk %d/%d parsers", name, chunk, nparsers), func(t *testing.T) {
					if chunk < 100 && len(data) > 200_000 {
						t.Skip("too slow a byte at a time")
					}
					var got bytes.Buffer
					f, err := read(bytes.NewReader(data), int64(len(data)), chunk, nparsers, &got)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), data) {
						t.Fatalf("Read wrote %d bytes to its tee, want the file's %d", got.Len(), len(data))
					}
					checkSameFile(t, data, f)
					pipelined := decodePipelined(data, chunk, nparsers)
					checkSameFile(t, data, pipelined)
					checkHoldsNoneOf(t, data, pipelined)
				})
			}
		}
	}
}

// TestReadSizeChanged reads a file that grew or shrank after its size was
// taken: all of it is read all the same.
func TestReadSizeChanged(t *testing.T) {
	data := messyFile(500, 8)
	for _, size := range []int64{0, 1, 1000, int64(len(data)) - 1, int64(len(data)) + 1000} {
		var got bytes.Buffer
		f, err := read(bytes.NewReader(data), size, 512, 2, &got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("size %d: Read wrote %d bytes to its tee, want the file's %d", size, got.Len(), len(data))
		}
		checkSameFile(t, data, f)
	}
}

// failingReader reads data up to failAt bytes, then fails.
type failingReader struct {
	data   []byte
	failAt int64
}

var errDisk = errors.New("disk on fire")

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.failAt {
		return 0, errDisk
	}
	n := copy(p, r.data[off:min(int64(len(r.data)), r.failAt)])
	if n < len(p) {
		if off+int64(n) >= r.failAt {
			return n, errDisk
		}
		return n, io.EOF
	}
	return n, nil
}

// TestReadFails checks that a read error anywhere in the file is reported
// and that no File is returned, so nothing half-read is used.
func TestReadFails(t *testing.T) {
	data := messyFile(2000, 9)
	for _, at := range []int64{0, 1, 5000, int64(len(data)) / 2, int64(len(data)) - 1} {
		f, err := read(failingReader{data, at}, int64(len(data)), 4096, 2, nil)
		if !errors.Is(err, errDisk) {
			t.Errorf("failing at byte %d: err = %v, want %v", at, err, errDisk)
		}
		if f != nil {
			t.Errorf("failing at byte %d: returned a File", at)
		}
	}
}

// TestReserveGuess checks that the sampled guess of the lines in a big
// file is close to their count.
func TestReserveGuess(t *testing.T) {
	data := benchFile(20_000, 10)
	lines := bytes.Count(data, []byte{'\n'})
	rels := bytes.Count(data, relationMark)
	e, gotRels := guess(int64(len(data)), func(off int64, p []byte) int { return copy(p, data[off:]) })
	gotLines := e + gotRels
	if d := gotLines - lines; d < -lines/5 || d > lines/5 {
		t.Errorf("guessed %d lines, the file has %d", gotLines, lines)
	}
	if d := gotRels - rels; d < -rels/5 || d > rels/5 {
		t.Errorf("guessed %d relations, the file has %d", gotRels, rels)
	}
}

// TestDecodeChunks decodes files cut into chunks of whole lines, of many
// sizes, and checks that each gives the File Decode gives the whole.
func TestDecodeChunks(t *testing.T) {
	files := map[string][]byte{
		"empty":             nil,
		"one line, no end":  []byte(`{"type":"entity","name":"a","entityType":"t","observations":["x"]}`),
		"messy, 3000":       messyFile(3000, 5),
		"no final line end": bytes.TrimSuffix(messyFile(3000, 7), []byte("\n")),
	}
	for name, data := range files {
		for _, lines := range []int{1, 50, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d lines a chunk", name, lines), func(t *testing.T) {
				var chunks [][]byte
				rest := data
				for len(rest) > 0 {
					end := 0
					for n := 0; n < lines && end < len(rest); n++ {
						if i := bytes.IndexByte(rest[end:], '\n'); i >= 0 {
							end += i + 1
						} else {
							end = len(rest)
						}
					}
					chunks = append(chunks, rest[:end])
					rest = rest[end:]
				}
				chunks = append(chunks, nil) // an empty chunk changes nothing
				// Each chunk is overwritten as soon as it is said to be
				// loaded, as a caller that frees it would: what decodes
				// is the same all the same.
				orig := bytes.Clone(data)
				var said []int
				f := DecodeChunks(chunks, func(i int) {
					said = append(said, i)
					for j := range chunks[i] {
						chunks[i][j] = '#'
					}
				})
				if len(said) != len(chunks) || !slices.IsSorted(said) || (len(said) > 0 && said[len(said)-1] != len(chunks)-1) {
					t.Fatalf("loaded was called for %v, want each of %d chunks once, in order", said, len(chunks))
				}
				checkSameFile(t, orig, f)
				checkHoldsNoneOf(t, data, f)
			})
		}
	}
}

// TestRepeatedRelationsAtTheirLines: a big load finds its repeated
// relations once it is over (graph.EndLoad), and each is reported at its
// own line, among the other problems in line order, as a line-by-line
// reading of the file finds them.
func TestRepeatedRelationsAtTheirLines(t *testing.T) {
	data := messyFile(3000, 2)
	var want []int // the lines of the relations seen before
	seen := map[[3]string]bool{}
	relations := 0
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(bytes.TrimPrefix(line, []byte("\uFEFF")), "\r")
		var r struct {
			Type, From, To, RelationType any
		}
		if json.Unmarshal(line, &r) != nil || r.Type != "relation" {
			continue
		}
		from, ok1 := r.From.(string)
		to, ok2 := r.To.(string)
		typ, ok3 := r.RelationType.(string)
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		relations++
		k := [3]string{from, to, typ}
		if seen[k] {
			want = append(want, i+1)
		}
		seen[k] = true
	}
	if relations < 5000 || len(want) < 10 {
		t.Fatalf("the test file has %d relations, %d repeated: too few", relations, len(want))
	}
	for _, pipelined := range []bool{false, true} {
		f := decode(data, pipelined)
		var got []int
		for i, p := range f.Problems {
			if i > 0 && p.Line < f.Problems[i-1].Line {
				t.Errorf("problem at line %d after one at line %d", p.Line, f.Problems[i-1].Line)
			}
			if p.Kind == DroppedRelation {
				got = append(got, p.Line)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("pipelined %v: repeated relations reported at lines %v, want %v", pipelined, got, want)
		}
		if n := len(f.Graph.Relations()); n != len(seen) {
			t.Errorf("pipelined %v: %d relations, want %d", pipelined, n, len(seen))
		}
	}
}
