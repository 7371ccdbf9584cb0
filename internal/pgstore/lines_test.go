package pgstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// copyStream is COPY's binary format of rows (seq, line), as PostgreSQL
// sends it.
func copyStream(seqs []int64, lines [][]byte) []byte {
	b := append([]byte(nil), copySignature...)
	b = binary.BigEndian.AppendUint32(b, 0) // flags
	b = binary.BigEndian.AppendUint32(b, 4) // an extension of 4 bytes
	b = append(b, "ext!"...)
	for i, l := range lines {
		b = binary.BigEndian.AppendUint16(b, 2)
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(seqs[i]))
		b = binary.BigEndian.AppendUint32(b, uint32(len(l)))
		b = append(b, l...)
	}
	return binary.BigEndian.AppendUint16(b, 0xffff)
}

func TestCopyRowsInAnyPieces(t *testing.T) {
	seqs := []int64{3, 1, 1 << 40, 2}
	lines := [][]byte{[]byte(`{"a":1}`), {}, []byte(strings.Repeat("x", 70_000)), []byte(`{"b":"\n"}`)}
	stream := copyStream(seqs, lines)
	for _, piece := range []int{1, 2, 7, 19, 1000, len(stream)} {
		t.Run(fmt.Sprint(piece), func(t *testing.T) {
			var l lineSink
			c := copyRows{sink: &l}
			for p := stream; len(p) > 0; {
				n := min(piece, len(p))
				if k, err := c.Write(p[:n]); k != n || err != nil {
					t.Fatalf("Write: %d, %v", k, err)
				}
				p = p[n:]
			}
			if err := c.end(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.seqs, seqs) {
				t.Errorf("seqs %v, want %v", l.seqs, seqs)
			}
			for i := range lines {
				if !bytes.Equal(l.line(i), lines[i]) {
					t.Errorf("line %d: %.40q, want %.40q", i, l.line(i), lines[i])
				}
			}
		})
	}
}

func TestCopyRowsRefusesWhatIsNotTheirs(t *testing.T) {
	good := copyStream([]int64{1}, [][]byte{[]byte("{}")})
	null := slices.Clone(good)
	binary.BigEndian.PutUint32(null[len(copySignature)+12+2+12:], 0xffffffff)
	three := slices.Clone(good)
	binary.BigEndian.PutUint16(three[len(copySignature)+12:], 3)
	for name, data := range map[string][]byte{
		"no signature":     append([]byte("PGCOPY?"), good[7:]...),
		"NULL line":        null,
		"three columns":    three,
		"cut short":        good[:len(good)-3],
		"no trailer":       good[:len(good)-2],
		"after the end":    append(slices.Clone(good), good[len(good)-4:]...),
		"nothing":          nil,
		"only a signature": good[:len(copySignature)],
	} {
		t.Run(name, func(t *testing.T) {
			var l lineSink
			c := copyRows{sink: &l}
			_, err := c.Write(data)
			if err == nil {
				err = c.end()
			}
			if !errors.Is(err, errCopyFormat) {
				t.Errorf("err = %v, want errCopyFormat", err)
			}
		})
	}
}

// TestOrderDecodesInSeqOrder reads lines in orders a database gives (in
// order; mostly in order with some rows moved away, as a write leaves them;
// any order) and checks that the lines, their seqs and sums, and what
// decodes are in seq order in each section.
func TestOrderDecodesInSeqOrder(t *testing.T) {
	const n = 3000
	want := make([][]byte, n)
	for i := range want {
		// Lines of 100-600 bytes, so runs are both longer and shorter
		// than shortRun.
		want[i] = fmt.Appendf(nil, `{"type":"entity","name":"e%04d","entityType":"t","observations":[%q]}`, i, strings.Repeat("o", 100+i%500))
	}
	bound := n / 3 // two sections, ordered apart
	rng := rand.New(rand.NewPCG(1, 2))
	orders := map[string]func() []int{
		"in order": func() []int { return perm(n) },
		"some moved": func() []int {
			p := perm(n)
			for range 40 {
				i := rng.IntN(n)
				v := p[i]
				p = append(slices.Delete(p, i, i+1), v)
			}
			return p
		},
		"any order": func() []int { return rng.Perm(n) },
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			// Sections: lines [0, bound) then [bound, n), each read
			// in the order given, the first section first.
			var read []int
			for _, i := range order() {
				if i < bound {
					read = append(read, i)
				}
			}
			for _, i := range order() {
				if i >= bound {
					read = append(read, i)
				}
			}
			// Sequence numbers past 32 bits are sorted another way.
			for _, c := range []struct {
				mapped bool
				base   int64
			}{{false, 10}, {true, 10}, {false, 1 << 33}} {
				mapped := c.mapped
				l := lineSink{mapped: mapped}
				for _, i := range read {
					l.add(c.base+int64(i*3), want[i])
				}
				l.order(bound)
				for i := range want {
					if l.seqs[i] != c.base+int64(i*3) || l.sums[i] != sumLine(want[i]) {
						t.Fatalf("line %d: seq %d, another sum", i, l.seqs[i])
					}
					// A mapped block whose lines were all gathered is
					// given back already.
					if !mapped && !bytes.Equal(l.line(i), want[i]) {
						t.Fatalf("line %d: %.30q", i, l.line(i))
					}
				}
				decode := l.decode
				if mapped {
					decode = l.decodeFreeing
				}
				ents := decode().Graph.Entities()
				if len(ents) != n {
					t.Fatalf("%d entities decode, want %d", len(ents), n)
				}
				for i, e := range ents {
					if e.Name != fmt.Sprintf("e%04d", i) || len(e.Observations) != 1 || e.Observations[0] != strings.Repeat("o", 100+i%500) {
						t.Fatalf("entity %d is %s %.20q", i, e.Name, e.Observations)
					}
				}
				if mapped {
					for b, blk := range l.blocks {
						if l.isMapped[b] && blk != nil {
							t.Errorf("block %d is still mapped after the decode", b)
						}
					}
				}
			}
		})
	}
}

func perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}
