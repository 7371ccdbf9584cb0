package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestLoadModeLinksAsLoadingOneByOne loads the same random lines (entities
// and relations mixed, relations before their entities, ends no entity
// has, repeated triples and names) one by one and between BeginLoad and
// EndLoad: the two graphs must hold the same lists, in the same order,
// and the loaded relations must name their ends by their entities' names.
func TestLoadModeLinksAsLoadingOneByOne(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		type line struct {
			e *Entity
			r *Relation
		}
		var lines []line
		name := func() string { return fmt.Sprintf("n%d", rng.IntN(30)) }
		for range 200 {
			if rng.IntN(3) == 0 {
				lines = append(lines, line{e: &Entity{Name: name(), EntityType: "t", Observations: []string{fmt.Sprint(rng.IntN(5))}}})
			} else {
				lines = append(lines, line{r: &Relation{From: name(), To: name(), RelationType: fmt.Sprint("r", rng.IntN(3))}})
			}
		}
		load := func(bulk bool) *Graph {
			g := New()
			if bulk {
				g.BeginLoad()
			}
			for _, l := range lines {
				if l.e != nil {
					g.LoadEntity(*l.e)
				} else {
					// Ends in memory of their own, as a reader's buffer.
					g.LoadRelation(Relation{From: strings.Clone(l.r.From), To: strings.Clone(l.r.To), RelationType: l.r.RelationType})
				}
			}
			g.EndLoad()
			return g
		}
		one, bulk := load(false), load(true)
		checkConsistent(t, bulk)
		if got, want := describe(bulk.All().Snapshot()), describe(one.All().Snapshot()); got != want {
			t.Fatalf("seed %d: loaded in bulk\n%s\nwant\n%s", seed, got, want)
		}
		for _, e := range one.Entities() {
			b := bulk.Entity(e.Name)
			if !slices.EqualFunc(b.rels.out, e.rels.out, sameTriple) || !slices.EqualFunc(b.rels.in, e.rels.in, sameTriple) {
				t.Fatalf("seed %d: lists of %q differ", seed, e.Name)
			}
		}
		for name, l := range one.loose {
			b := bulk.loose[name]
			if b == nil || !slices.EqualFunc(b.out, l.out, sameTriple) || !slices.EqualFunc(b.in, l.in, sameTriple) {
				t.Fatalf("seed %d: loose lists of %q differ", seed, name)
			}
		}
		for _, r := range bulk.Relations() {
			for _, end := range []string{r.From, r.To} {
				if e := bulk.Entity(end); e != nil && unsafe.StringData(e.Name) != unsafe.StringData(end) {
					t.Fatalf("seed %d: relation end %q is not its entity's name", seed, end)
				}
			}
		}
	}
}

func sameTriple(a, b *Relation) bool { return a.key() == b.key() }
