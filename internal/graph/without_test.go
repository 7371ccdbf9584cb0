package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWithoutDead removes random items from lists in seq order, found by
// a binary search each, and from lists out of order, which it walks: the
// result must be the list without them, in order, either way.
func TestWithoutDead(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		n := 1 + rng.IntN(40)
		list := make([]*Entity, n)
		for i := range list {
			list[i] = &Entity{seq: uint64(10 + 3*i)}
		}
		if round%4 == 0 { // out of seq order, as no graph list is, but it must not matter
			list[rng.IntN(n)].seq, list[rng.IntN(n)].seq = list[rng.IntN(n)].seq, 0
		}
		dead := map[*Entity]bool{}
		for range rng.IntN(n + 1) {
			dead[list[rng.IntN(n)]] = true
		}
		var want []*Entity
		for _, e := range list {
			if !dead[e] {
				want = append(want, e)
			}
		}
		got := withoutDead(slices.Clone(list), dead)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: removing %d of %d left %d items, not the rest in order", round, len(dead), n, len(got))
		}
	}
}
