package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTrigramList compares the packed list with a plain slice: its ids,
// intersections with lists of every density, and a join.
func TestTrigramList(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randomIDs := func(n int, gap uint32) []uint32 {
		var ids []uint32
		id := uint32(0)
		for range n {
			id += 1 + rng.Uint32N(gap)
			ids = append(ids, id)
		}
		return ids
	}
	listOf := func(ids []uint32) *trigramList {
		l := &trigramList{}
		for _, id := range ids {
			l.add(id)
			l.add(id) // a repeat is posted once
		}
		return l
	}
	for _, n := range []int{0, 1, trigramBlock - 1, trigramBlock, trigramBlock + 1, 1000} {
		for _, gap := range []uint32{1, 3, 200, 1 << 20} {
			ids := randomIDs(n, gap)
			l := listOf(ids)
			if got := l.ids(); !slices.Equal(got, ids) || int(l.n) != len(ids) {
				t.Fatalf("n %d gap %d: ids() = %v, want %v", n, gap, got, ids)
			}
			for _, m := range []int{0, 1, 5, 300} {
				a := randomIDs(m, gap*2)
				a = append(a, ids[:min(len(ids), 3)]...)
				slices.Sort(a)
				a = slices.Compact(a)
				want := slices.DeleteFunc(slices.Clone(a), func(v uint32) bool { _, ok := slices.BinarySearch(ids, v); return !ok })
				if got := l.intersect(slices.Clone(a)); !slices.Equal(got, want) {
					t.Fatalf("n %d gap %d: intersect(%v) = %v, want %v", n, gap, a, got, want)
				}
			}
			more := randomIDs(100, gap)
			for i := range more {
				more[i] += l.last
			}
			l.join(listOf(more))
			l.clip()
			if got := l.ids(); !slices.Equal(got, append(slices.Clone(ids), more...)) {
				t.Fatalf("n %d gap %d: after join, ids() = %v", n, gap, got)
			}
		}
	}
}
