package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// dump is the graph as read_graph shows it, order included.
func dump(g *Graph) string {
	return fmt.Sprintf("%v", g.ReadGraph())
}

// Applying what one graph recorded to a copy of where it started gives the
// same graph, order included: that is what the file store's journal relies
// on.
func TestApplyRedoesTrackedChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := New(), New()
	name := func() string { return fmt.Sprintf("e%d", r.IntN(8)) }
	for step := range 2000 {
		a.TrackChanges()
		switch r.IntN(6) {
		case 0:
			a.CreateEntities([]Entity{{Name: name(), EntityType: "t", Observations: []string{"x", name()}}, {Name: name()}})
		case 1:
			a.AddObservations([]ObservationAddition{{EntityName: name(), Contents: []string{name(), "y"}}})
		case 2:
			a.DeleteObservations([]ObservationDeletion{{EntityName: name(), Observations: []string{name(), "x"}}})
		case 3:
			a.DeleteEntities([]string{name()})
		case 4:
			a.CreateRelations([]Relation{{From: name(), To: name(), RelationType: "r"}})
		case 5:
			a.DeleteRelations([]Relation{{From: name(), To: name(), RelationType: "r"}})
		}
		changes, complete := a.TakeChanges()
		if !complete {
			t.Fatalf("step %d: a write tool's changes reported incomplete", step)
		}
		if skipped := b.Apply(changes); skipped != 0 {
			t.Fatalf("step %d: %d changes did not apply", step, skipped)
		}
		if got, want := dump(b), dump(a); got != want {
			t.Fatalf("step %d: applied\n%s\nwant\n%s", step, got, want)
		}
	}
}

// An edit the record does not describe makes it incomplete, so storage
// saves the whole graph instead.
func TestUntrackedEditsMakeTheRecordIncomplete(t *testing.T) {
	for name, edit := range map[string]func(g *Graph){
		"rename": func(g *Graph) { g.Rename("A", "C") },
		"merge":  func(g *Graph) { g.Merge("A", "B") },
		"rename then a tool": func(g *Graph) {
			g.Rename("A", "C")
			g.AddObservations([]ObservationAddition{{EntityName: "B", Contents: []string{"z"}}})
		},
		"rewrite": func(g *Graph) { g.Rewrite() },
	} {
		g := New()
		g.CreateEntities([]Entity{{Name: "A", Observations: []string{"a"}}, {Name: "B"}})
		g.CreateRelations([]Relation{{From: "A", To: "B", RelationType: "r"}})
		g.TrackChanges()
		edit(g)
		if _, complete := g.TakeChanges(); complete {
			t.Errorf("%s: record reported complete", name)
		}
	}
	g := New()
	g.TrackChanges()
	g.CreateEntities([]Entity{{Name: "A"}})
	changes, complete := g.TakeChanges()
	want := []Change{{Kind: EntityCreated, Entity: Entity{Name: "A", Observations: []string{}}}}
	if !complete || !reflect.DeepEqual(changes, want) {
		t.Errorf("create: %+v %v, want %+v complete", changes, complete, want)
	}
}
