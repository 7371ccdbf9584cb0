package pgstore_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

var seedFlag = flag.Uint64("seed", 0, "seed of TestRandomWrites (0: a new one)")

// Random mutations, several to a write, each followed by a read through a
// second store: what the database holds after every write is exactly the
// writer's graph, order and all. This checks the change detection (which
// lines a write sends) against a full read.
func TestRandomWrites(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -seed)", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	open := openMemory(t)
	w, reader := open(t), open(t)
	name := func() string { return fmt.Sprint("e", r.IntN(12)) }
	ops := []func(g *graph.Graph){
		func(g *graph.Graph) {
			g.CreateEntities([]graph.Entity{{Name: name(), EntityType: fmt.Sprint("t", r.IntN(3)), Observations: []string{fmt.Sprint("o", r.IntN(5))}}})
		},
		func(g *graph.Graph) { g.DeleteEntities([]string{name(), name()}) },
		func(g *graph.Graph) {
			if n := name(); g.Entity(n) != nil {
				g.AddObservations([]graph.ObservationAddition{{EntityName: n, Contents: []string{fmt.Sprint("o", r.IntN(5))}}})
			}
		},
		func(g *graph.Graph) {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: name(), Observations: []string{fmt.Sprint("o", r.IntN(5))}}})
		},
		func(g *graph.Graph) {
			from, to := name(), name()
			if g.Entity(from) != nil && g.Entity(to) != nil {
				g.CreateRelations([]graph.Relation{{From: from, To: to, RelationType: fmt.Sprint("r", r.IntN(2))}})
			}
		},
		func(g *graph.Graph) {
			g.DeleteRelations([]graph.Relation{{From: name(), To: name(), RelationType: fmt.Sprint("r", r.IntN(2))}})
		},
		// Deleted and created again as it was: the same line, moved to the end.
		func(g *graph.Graph) {
			if e := g.Entity(name()); e != nil {
				again := graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: slices.Clone(e.Observations)}
				g.DeleteEntities([]string{e.Name})
				g.CreateEntities([]graph.Entity{again})
			}
		},
		func(g *graph.Graph) {
			if rels := g.Relations(); len(rels) > 0 {
				rel := *rels[r.IntN(len(rels))]
				again := graph.Relation{From: rel.From, To: rel.To, RelationType: rel.RelationType}
				g.DeleteRelations([]graph.Relation{again})
				g.CreateRelations([]graph.Relation{again})
			}
		},
	}
	for step := range 300 {
		if _, err := w.Update(ctx, func(g *graph.Graph) error {
			for range 1 + r.IntN(4) {
				ops[r.IntN(len(ops))](g)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got, want := dump(t, reader), dump(t, w); got != want {
			t.Fatalf("step %d: the database holds\n%s\nthe writer has\n%s", step, got, want)
		}
	}
}
