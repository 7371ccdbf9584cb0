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
	t.Run("put one by one", testLoadMode)
	// A big load keeps its relations sorted by hash.
	saved := sortedMin
	t.Cleanup(func() { sortedMin = saved })
	sortedMin = 1
	t.Run("kept sorted", testLoadMode)
}

func testLoadMode(t *testing.T) {
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
		// nth returns the relation loaded i-th, from 0.
		nth := func(i int) *Relation {
			for _, l := range lines {
				if l.r != nil {
					if i == 0 {
						return l.r
					}
					i--
				}
			}
			return nil
		}
		// load returns the graph and the relations it dropped as
		// repeats, by their place among the relations loaded.
		load := func(bulk bool) (*Graph, []int) {
			g := New()
			if bulk {
				g.BeginLoad()
			}
			var repeats []int
			n := 0
			for _, l := range lines {
				if l.e != nil {
					g.LoadEntity(*l.e)
					continue
				}
				// Ends in memory of their own, as a reader's buffer.
				if _, dup := g.LoadRelation(Relation{From: strings.Clone(l.r.From), To: strings.Clone(l.r.To), RelationType: l.r.RelationType}); dup {
					repeats = append(repeats, n)
				}
				n++
			}
			for _, r := range g.EndLoad() {
				if l := nth(r.Index); l.key() != r.Relation.key() {
					t.Fatalf("seed %d: repeat %d is %v, loaded as %v", seed, r.Index, r.Relation, l)
				}
				repeats = append(repeats, r.Index)
			}
			return g, repeats
		}
		one, oneRepeats := load(false)
		bulk, bulkRepeats := load(true)
		if len(oneRepeats) == 0 || !slices.Equal(bulkRepeats, oneRepeats) {
			t.Fatalf("seed %d: repeats %v loaded in bulk, %v one by one", seed, bulkRepeats, oneRepeats)
		}
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
