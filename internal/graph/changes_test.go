package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
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

// The commands' edits are recorded too, as removals and creations: applied
// to where the graph started they give the same content (the edited items
// may move to the end). Rewrite changes no content and records nothing, so
// the record is incomplete and storage saves the whole graph.
func TestEditsAreRecorded(t *testing.T) {
	content := func(g *Graph) string {
		s := g.ReadGraph()
		ents := map[string]string{}
		for _, e := range s.Entities {
			obs := slices.Clone(e.Observations)
			slices.Sort(obs)
			ents[e.Name] = fmt.Sprint(e.EntityType, obs)
		}
		rels := map[string]bool{}
		for _, r := range s.Relations {
			rels[r.From+">"+r.RelationType+">"+r.To] = true
		}
		return fmt.Sprint(ents, rels)
	}
	for name, edit := range map[string]func(g *Graph){
		"rename": func(g *Graph) { g.Rename("A", "C") },
		"merge":  func(g *Graph) { g.Merge("A", "B") },
		"rename then a tool": func(g *Graph) {
			g.Rename("A", "C")
			g.AddObservations([]ObservationAddition{{EntityName: "B", Contents: []string{"z"}}})
		},
		"replace": func(g *Graph) { g.ReplaceObservation("A", "a", "a2") },
		"import": func(g *Graph) {
			g.Import(Snapshot{Entities: []Entity{{Name: "D", Observations: []string{"d"}}, {Name: "A", Observations: []string{"a3"}}},
				Relations: []Relation{{From: "D", To: "A", RelationType: "r"}}})
		},
		"dangling": func(g *Graph) { g.RemoveDanglingRelations() },
	} {
		start := func() *Graph {
			g := New()
			g.CreateEntities([]Entity{{Name: "A", Observations: []string{"a", "b"}}, {Name: "B", Observations: []string{"b"}}, {Name: "E"}})
			g.CreateRelations([]Relation{{From: "A", To: "B", RelationType: "r"}, {From: "E", To: "A", RelationType: "s"}, {From: "B", To: "A", RelationType: "r"}})
			if name == "dangling" {
				// (A replay cannot carry a dangling relation along a rename.)
				g.LoadRelation(Relation{From: "A", To: "Gone", RelationType: "r"})
			}
			return g
		}
		g := start()
		g.TrackChanges()
		edit(g)
		changes, complete := g.TakeChanges()
		if !complete || len(changes) == 0 {
			t.Errorf("%s: record reported incomplete or empty", name)
			continue
		}
		replay := start()
		replay.Apply(changes)
		if got, want := content(replay), content(g); got != want {
			t.Errorf("%s: replayed\n%s\nwant\n%s", name, got, want)
		}
	}
	g := New()
	g.CreateEntities([]Entity{{Name: "A"}})
	g.TrackChanges()
	g.Rewrite()
	if _, complete := g.TakeChanges(); complete {
		t.Errorf("rewrite: record reported complete")
	}
	g = New()
	g.TrackChanges()
	g.CreateEntities([]Entity{{Name: "A"}})
	changes, complete := g.TakeChanges()
	want := []Change{{Kind: EntityCreated, Entity: Entity{Name: "A", Observations: []string{}}}}
	if !complete || !reflect.DeepEqual(changes, want) {
		t.Errorf("create: %+v %v, want %+v complete", changes, complete, want)
	}
}
