package graph

import (
	"fmt"
	"math/rand/v2"
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
	s, want := newRelationSet(0), map[relationKey]*Relation{}
	for range 5000 {
		r := &Relation{From: fmt.Sprint("a", rng.IntN(20)), To: fmt.Sprint(rng.IntN(5)), RelationType: "knows"}
		k := r.key()
		if rng.IntN(3) == 0 {
			s.del(k)
			delete(want, k)
		} else {
			s.put(r)
			want[k] = r
		}
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
	TestGraphAgainstModel(t)
}
