package pgstore_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/storetest"
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
	// Two writers and a reader, as three replicas: each catches up with
	// the others' writes by reading only what changed.
	stores := []*pgstore.Store{open(t), open(t), open(t)}
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
	// A name changed where it stands, its relations following: one edit
	// per write, as the commands and the web page make it.
	rename := func(g *graph.Graph) { g.Rename(name(), name()) }
	for step := range 300 {
		w := stores[r.IntN(2)]
		if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			// At an unknown time: a relation deleted and created again in
			// one write, with a new time, does not fit a delta (delta.go),
			// and the readers would read the memory whole, which the test
			// counts.
			g.SetNow(0)
			if r.IntN(6) == 0 {
				rename(g)
				return nil
			}
			for range 1 + r.IntN(4) {
				ops[r.IntN(len(ops))](g)
			}
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		want := dump(t, w)
		for i, s := range stores {
			if r.IntN(2) == 0 && s != w {
				continue // falls further behind
			}
			if got := dump(t, s); got != want {
				t.Fatalf("step %d: store %d holds\n%s\nthe writer has\n%s", step, i, got, want)
			}
		}
	}
	if got, want := dump(t, open(t)), dump(t, stores[0]); got != want {
		t.Fatalf("the database holds\n%s\nthe stores have\n%s", got, want)
	}
	for i, s := range stores {
		whole, delta := s.Reads()
		t.Logf("store %d caught up %d times reading the changes, %d reading the memory whole", i, delta, whole)
		if whole != 1 {
			t.Errorf("store %d read the memory whole %d times, want once (at the start)", i, whole)
		}
	}
}

// A store that fell behind further than the removals are remembered reads
// the memory whole, and is right.
func TestCatchUpAfterPruning(t *testing.T) {
	defer pgstore.SetRemovedKept(4, 2)()
	open := openMemory(t)
	w, behind := open(t), open(t)
	create := func(names ...string) {
		t.Helper()
		if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			for _, n := range names {
				g.CreateEntities([]graph.Entity{{Name: n, EntityType: "t", Observations: []string{}}})
			}
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	create("a", "b")
	dump(t, behind)
	for i := range 10 {
		if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.DeleteEntities([]string{"a"})
			g.CreateEntities([]graph.Entity{{Name: "a", EntityType: fmt.Sprint(i), Observations: []string{}}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := dump(t, behind), dump(t, w); got != want {
		t.Fatalf("the store that fell behind holds\n%s\nwant\n%s", got, want)
	}
	if whole, _ := behind.Reads(); whole != 2 {
		t.Errorf("read the memory whole %d times, want 2 (the start, and after falling behind the pruning)", whole)
	}
	// Close behind: only the changes.
	create("c")
	if got, want := dump(t, behind), dump(t, w); got != want {
		t.Fatalf("holds\n%s\nwant\n%s", got, want)
	}
	if whole, delta := behind.Reads(); whole != 2 || delta != 1 {
		t.Errorf("reads: %d whole, %d changes; want 2 and 1", whole, delta)
	}
}

// A rename writes only the renamed entity's row and those of its relations,
// which keep their places, and another store catches up by reading just
// those; a merge is right too (the other store may read it whole).
func TestRenameAndMergeKeepTheRest(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		var ents []graph.Entity
		for i := range 50 {
			ents = append(ents, graph.Entity{Name: fmt.Sprint("e", i), EntityType: "t", Observations: []string{fmt.Sprint("o", i)}})
		}
		g.CreateEntities(ents)
		var rels []graph.Relation
		for i := range 49 {
			rels = append(rels, graph.Relation{From: fmt.Sprint("e", i), To: fmt.Sprint("e", i+1), RelationType: "next"})
		}
		_, err := g.CreateRelations(rels)
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	dump(t, b)
	c := admin(t)
	rows := func() (n int64) {
		t.Helper()
		err := c.QueryRow(ctx, `SELECT (SELECT count(*) FROM memory_entities e JOIN memories m ON m.id = e.memory_id WHERE m.name = $1 AND e.rev = m.revision)
			+ (SELECT count(*) FROM memory_relations r JOIN memories m ON m.id = r.memory_id WHERE m.name = $1 AND r.rev = m.revision)`, a.Name()).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { _, err := g.Rename("e10", "ten"); return err }}); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 3 {
		t.Errorf("the rename wrote %d rows, want 3 (the entity and its two relations)", n)
	}
	wholeBefore, _ := b.Reads()
	if got, want := dump(t, b), dump(t, a); got != want {
		t.Fatalf("after the rename the other store holds\n%s\nwant\n%s", got, want)
	}
	if whole, _ := b.Reads(); whole != wholeBefore {
		t.Errorf("the other store read the memory whole to catch up with a rename")
	}
	if got, want := dump(t, open(t)), dump(t, a); got != want {
		t.Fatalf("after the rename the database holds\n%s\nwant\n%s", got, want)
	}

	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { _, err := g.Merge("e20", "ten"); return err }}); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, b), dump(t, a); got != want {
		t.Fatalf("after the merge the other store holds\n%s\nwant\n%s", got, want)
	}
	if got, want := dump(t, open(t)), dump(t, a); got != want {
		t.Fatalf("after the merge the database holds\n%s\nwant\n%s", got, want)
	}
}

// An entity renamed and changed by one write keeps its row's place, so
// the write writes that row alone, not every row after it too; a store
// reading the memory afresh, and one catching up, hold it where the
// writer does.
func TestARenameThatAlsoChangesKeepsItsPlace(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{
			{Name: "first", EntityType: "t", Observations: []string{"1"}},
			{Name: "middle", EntityType: "t", Observations: []string{"2"}},
			{Name: "last", EntityType: "t", Observations: []string{"3"}},
		})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	dump(t, b)
	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		if _, err := g.Rename("middle", "centre"); err != nil {
			return err
		}
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "centre", Contents: []string{"renamed"}}})
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := admin(t).QueryRow(ctx, `SELECT count(*) FROM memory_entities e JOIN memories m ON m.id = e.memory_id
		WHERE m.name = $1 AND e.rev = m.revision`, a.Name()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the write wrote %d entity rows, want 1", n)
	}
	want := dump(t, a)
	if !strings.Contains(want, "centre") || strings.Index(want, "centre") > strings.Index(want, "last") {
		t.Fatalf("the writer holds\n%s\nwant centre renamed in its place", want)
	}
	if got := dump(t, b); got != want {
		t.Errorf("a store catching up holds\n%s\nwant\n%s", got, want)
	}
	if got := dump(t, open(t)); got != want {
		t.Errorf("a store reading afresh holds\n%s\nwant\n%s", got, want)
	}
}

// Views, and a write, that come together to a store that holds no graph
// yet read the memory once, not once each: at a server's start the first
// tool call and the index build both ask.
func TestViewsAtOnceReadOnce(t *testing.T) {
	open := openMemory(t)
	a := open(t)
	// Big enough that a write comes while a View still reads it (below).
	importGenerated(t, a, 30_000)
	want := dump(t, a)
	b := open(t)
	const views = 4
	var wg sync.WaitGroup
	got := make([]string, views)
	start := make(chan struct{})
	for i := range views {
		wg.Go(func() {
			<-start
			if err := b.View(ctx, func(g *graph.Graph) error { got[i] = storetest.Dump(g); return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("view %d saw another graph", i)
		}
	}
	if whole, delta := b.Reads(); whole != 1 || delta != 0 {
		t.Errorf("%d views at once read the memory whole %d times and caught up %d times, want once and never", views, whole, delta)
	}

	// A write that comes while a View reads the memory whole waits for it
	// and catches up from there.
	c := open(t)
	wg.Go(func() {
		if err := c.View(ctx, func(*graph.Graph) error { return nil }); err != nil {
			t.Error(err)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Microsecond) {
		if whole, _ := c.Reads(); whole > 0 {
			break // the View is reading
		}
		if time.Now().After(deadline) {
			t.Fatal("the view never read")
		}
	}
	if _, err := c.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "written while a view reads", EntityType: "t"}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if whole, _ := c.Reads(); whole != 1 {
		t.Errorf("a write while a view read the memory whole read it %d times, want once", whole)
	}
	if got, want := dump(t, c), dump(t, open(t)); got != want {
		t.Errorf("after the write the store holds\n%s\nthe database\n%s", got, want)
	}
}

// The writes that move no row (add and delete observations, create and
// delete entities and relations) find their rows from their record,
// without walking the memory's rows; one that deletes a name and creates
// it again walks. Either way the database holds the writer's graph.
func TestWritesThatMoveNothingWalkNoRows(t *testing.T) {
	open := openMemory(t)
	w := open(t)
	write := func(what string, apply func(g *graph.Graph) error) {
		t.Helper()
		if _, err := w.Update(ctx, graph.Write{Apply: apply}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, want := dump(t, open(t)), dump(t, w); got != want {
			t.Fatalf("after %s the database holds\n%s\nthe writer has\n%s", what, got, want)
		}
	}
	write("creating", func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "a", EntityType: "t"}, {Name: "b", EntityType: "t", Observations: []string{"1"}}, {Name: "c", EntityType: "t"}})
		return nil
	})
	before := w.Walks()
	for what, apply := range map[string]func(g *graph.Graph) error{
		"add_observations": func(g *graph.Graph) error {
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "b", Contents: []string{"2"}}, {EntityName: "a", Contents: []string{"3"}}})
			return err
		},
		"create_entities": func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: "d", EntityType: "t"}})
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "d", Contents: []string{"4"}}})
			return err
		},
		"create_relations": func(g *graph.Graph) error {
			_, err := g.CreateRelations([]graph.Relation{{From: "a", To: "b", RelationType: "r"}, {From: "c", To: "a", RelationType: "r"}})
			return err
		},
		"delete_observations": func(g *graph.Graph) error {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "b", Observations: []string{"1"}}})
			return nil
		},
	} {
		write(what, apply)
	}
	if n := w.Walks() - before; n != 0 {
		t.Errorf("the four writes walked %d tables, want none", n)
	}
	write("delete_entities", func(g *graph.Graph) error { g.DeleteEntities([]string{"b"}); return nil })
	if n := w.Walks() - before; n != 0 {
		t.Errorf("deleting an entity walked %d tables, want none", n)
	}
	// Deletions anywhere, several at once, with creations and changes in
	// the same write, find their rows from the record too.
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprint("n", i))
	}
	write("creating more", func(g *graph.Graph) error {
		for i, n := range names {
			g.CreateEntities([]graph.Entity{{Name: n, EntityType: "t"}})
			if i > 0 {
				if _, err := g.CreateRelations([]graph.Relation{{From: names[i-1], To: n, RelationType: "next"}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	before = w.Walks()
	for what, apply := range map[string]func(g *graph.Graph) error{
		"deleting the first, a middle one and the last": func(g *graph.Graph) error {
			g.DeleteEntities([]string{"a", "n50", "n99"})
			return nil
		},
		"deleting side by side, changing and creating": func(g *graph.Graph) error {
			g.DeleteEntities([]string{"n10", "n11", "n12", "n98"})
			if _, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "n13", Contents: []string{"x"}}, {EntityName: "n9", Contents: []string{"y"}}}); err != nil {
				return err
			}
			g.CreateEntities([]graph.Entity{{Name: "new", EntityType: "t"}})
			_, err := g.CreateRelations([]graph.Relation{{From: "new", To: "n13", RelationType: "r"}})
			return err
		},
		"deleting relations": func(g *graph.Graph) error {
			g.DeleteRelations([]graph.Relation{{From: "n0", To: "n1", RelationType: "next"}, {From: "n70", To: "n71", RelationType: "next"}, {From: "new", To: "n13", RelationType: "r"}})
			return nil
		},
	} {
		write(what, apply)
	}
	if n := w.Walks() - before; n != 0 {
		t.Errorf("the deletions walked %d tables, want none", n)
	}
	write("deleting and creating a name again", func(g *graph.Graph) error {
		g.DeleteEntities([]string{"n20"})
		g.CreateEntities([]graph.Entity{{Name: "n20", EntityType: "again"}})
		return nil
	})
	if n := w.Walks() - before; n != 1 {
		t.Errorf("a name deleted and created again walked %d tables, want the entities'", n)
	}
}

// A rename of the entity last in graph order, recorded as a deletion and
// a creation, keeps the entity's seq as the walk gives it, in the entity
// rows as in its relations' rows: another replica then catches up by
// reading the changes (a rename in place, its relations following)
// rather than the memory whole. Found by TestRandomWrites (seed
// 9492912232871283472): the entity got a new seq from its record while its
// relation kept its own, and every replica read the memory whole.
func TestARenameOfTheLastEntityCatchesUp(t *testing.T) {
	open := openMemory(t)
	w, other := open(t), open(t)
	if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "a", EntityType: "t"}, {Name: "b", EntityType: "t"}, {Name: "c", EntityType: "t", Observations: []string{"o"}}})
		_, err := g.CreateRelations([]graph.Relation{{From: "a", To: "c", RelationType: "r"}, {From: "b", To: "b", RelationType: "r"}})
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	dump(t, other)
	if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.Rename("c", "d")
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	if got, want := dump(t, other), dump(t, w); got != want {
		t.Fatalf("the other replica holds\n%s\nthe writer has\n%s", got, want)
	}
	if whole, _ := other.Reads(); whole != 1 {
		t.Errorf("the other replica read the memory whole %d times, want once (at the start): the rename's rows did not read as a rename", whole)
	}
}
