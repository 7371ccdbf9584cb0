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
		for i, id := range ids {
			expect := 0.0 // built whole, or grown after: as append grows
			if len(ids)%2 == 1 {
				expect = float64(len(ids)) / float64(i+1) // built a step at a time
			}
			l.add(id, expect)
			l.add(id, expect) // a repeat is posted once
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

// TestReserveGrowsToTheEnd: a list of an index built a step at a time
// grows to about what it holds at the end, in fewer and smaller
// allocations than append makes, and keeps what it held.
func TestReserveGrowsToTheEnd(t *testing.T) {
	const entities, perEntity = 200_000, 3
	final := entities * perEntity
	build := func(stepwise bool) (data []byte, allocated int) {
		for i := range entities {
			expect := 0.0
			if stepwise {
				expect = float64(entities) / float64(i+1)
			}
			for range perEntity {
				before := cap(data)
				data = reserve(data, 1, expect)
				data = append(data, byte(len(data)))
				if cap(data) != before {
					allocated += cap(data)
				}
			}
		}
		for i, b := range data {
			if b != byte(i) {
				t.Fatalf("byte %d changed as the list grew", i)
			}
		}
		return data, allocated
	}
	data, allocated := build(true)
	appended, byAppend := build(false)
	if cap(data) > final+final/8 {
		t.Errorf("cap %d for %d bytes: more than an eighth left over", cap(data), final)
	}
	if allocated > byAppend*3/4 {
		t.Errorf("growing to the end allocated %d bytes for a list of %d, append %d (cap %d): want a quarter less at least", allocated, final, byAppend, cap(appended))
	}
	t.Logf("a list of %d bytes: %d allocated growing to the end, %d by append", final, allocated, byAppend)
	if got := reserve(data[:10:10], 4, 0); cap(got) != 10 || len(got) != 10 {
		t.Errorf("reserve with expect 0 changed the list (len %d cap %d): append grows it", len(got), cap(got))
	}
}
