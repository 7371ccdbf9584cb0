package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRelationSetCollisions runs the set, and then the graph against its
// model, with hashes that collide: the overflow must keep every triple
// apart, whatever the order of puts and deletes.
func TestRelationSetCollisions(t *testing.T) {
	saved := relationHash
	t.Cleanup(func() { relationHash = saved })
	relationHash = func(k relationKey) uint64 { return uint64(len(k.from) % 3) }

	rng := rand.New(rand.NewPCG(1, 2))
	newRel := func() *Relation {
		return &Relation{From: fmt.Sprint("a", rng.IntN(20)), To: fmt.Sprint(rng.IntN(5)), RelationType: "knows"}
	}
	s, want := newRelationSet(), map[relationKey]*Relation{}
	// First a load, kept sorted: repeats are found among colliding
	// hashes, and the first of each triple is kept.
	savedMin := sortedMin
	t.Cleanup(func() { sortedMin = savedMin })
	sortedMin = 1
	var loaded []*Relation
	var hashes []uint64
	var wantRepeats []*Relation
	for i := range 60 {
		r := newRel()
		r.seq = uint64(i + 1)
		if want[r.key()] != nil {
			wantRepeats = append(wantRepeats, r)
		} else {
			want[r.key()] = r
		}
		loaded, hashes = append(loaded, r), append(hashes, relationHash(r.key()))
	}
	if got := s.addLoaded(loaded, hashes); !slices.Equal(got, wantRepeats) || len(got) == 0 {
		t.Fatalf("addLoaded dropped %v, want %v", got, wantRepeats)
	}
	if s.loaded.entries == nil {
		t.Fatal("the load was not kept sorted")
	}
	unloaded := false // deletions emptied most of the load, which went to byHash
	for range 5000 {
		r := newRel()
		k := r.key()
		if rng.IntN(3) == 0 {
			s.del(k)
			delete(want, k)
		} else {
			s.put(r)
			want[k] = r
		}
		unloaded = unloaded || s.loaded.entries == nil
		if s.len() != len(want) {
			t.Fatalf("len = %d, want %d", s.len(), len(want))
		}
		for k, r := range want {
			if got := s.get(k); got != r {
				t.Fatalf("get(%v) = %p, want %p", k, got, r)
			}
		}
		if got := s.get(relationKey{"zz", "0", "knows"}); got != nil {
			t.Fatalf("get of a triple never put = %v", got)
		}
	}
	if !unloaded {
		t.Error("the load kept sorted was never given up")
	}
	TestGraphAgainstModel(t)
}
