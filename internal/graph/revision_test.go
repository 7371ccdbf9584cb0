package graph

import "testing"

// TestEntityRevision checks what search by meaning relies on to look at
// the entities changed since its last look only: every change of an
// entity's name, type or observations, by any way the graph offers, gives
// it a revision above the Version seen before, the other entities keep
// theirs, and another graph has another ID.
func TestEntityRevision(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t", "a1", "a2"), ent("B", "t", "b1"), ent("C", "t", "c1")}, nil)
	edits := []struct {
		name    string
		changed string // the entity (by its name after the edit) that must change
		edit    func() error
	}{
		{"add_observations", "A", func() error {
			_, err := g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a3"}}})
			return err
		}},
		{"delete_observations", "A", func() error {
			g.DeleteObservations([]ObservationDeletion{{EntityName: "A", Observations: []string{"a1"}}})
			return nil
		}},
		{"create_entities", "D", func() error { g.CreateEntities([]Entity{ent("D", "t", "d1")}); return nil }},
		{"rename", "E", func() error { _, err := g.Rename("D", "E"); return err }},
		{"replace observation", "B", func() error { return g.ReplaceObservation("B", "b1", "b2") }},
		{"merge", "A", func() error { _, err := g.Merge("A", "E"); return err }},
		{"load entity (merged)", "C", func() error { g.LoadEntity(ent("C", "t", "c2")); return nil }},
		{"import", "B", func() error {
			_, err := g.Import(Snapshot{Entities: []Entity{ent("B", "t", "b3")}})
			return err
		}},
	}
	for _, ed := range edits {
		seen := g.Version()
		before := make(map[string]uint64)
		for _, e := range g.Entities() {
			if e.Revision() > seen {
				t.Fatalf("before %s: %s has revision %d above the version %d", ed.name, e.Name, e.Revision(), seen)
			}
			before[e.Name] = e.Revision()
		}
		if err := ed.edit(); err != nil {
			t.Fatalf("%s: %v", ed.name, err)
		}
		for _, e := range g.Entities() {
			switch {
			case e.Name == ed.changed && e.Revision() <= seen:
				t.Errorf("%s: %s changed, revision %d not above %d", ed.name, e.Name, e.Revision(), seen)
			case e.Name != ed.changed && e.Revision() != before[e.Name]:
				t.Errorf("%s: %s did not change, revision %d → %d", ed.name, e.Name, before[e.Name], e.Revision())
			}
		}
	}
	if a, b := New(), New(); a.ID() == g.ID() || a.ID() == b.ID() {
		t.Error("two graphs have the same ID")
	}
}
