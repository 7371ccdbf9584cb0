package graph

import (
	"errors"
	"testing"
)

func TestNeighbours(t *testing.T) {
	// A chain A -> B -> C -> D, E pointing at B, F alone, and a relation
	// whose end is missing (as a memory file may hold).
	ents := []Entity{ent("A", "t", "a1"), ent("B", "t"), ent("C", "t"), ent("D", "t"), ent("E", "t"), ent("F", "t")}
	rels := []Relation{rel("A", "r", "B"), rel("B", "r", "C"), rel("C", "r", "D"), rel("E", "r", "B"), rel("D", "s", "A")}
	tests := []struct {
		name  string
		names []string
		depth int
		want  string
	}{
		{"depth 0 is open_nodes", []string{"B", "A"}, 0, "A/t[a1] B/t[] | A-r->B"},
		{"depth 1 follows relations both ways", []string{"B"}, 1, "A/t[a1] B/t[] C/t[] E/t[] | A-r->B B-r->C E-r->B"},
		{"depth 2 goes one step further", []string{"E"}, 2, "A/t[a1] B/t[] C/t[] E/t[] | A-r->B B-r->C E-r->B"},
		{"relations among all returned, also between neighbours", []string{"A"}, 1, "A/t[a1] B/t[] D/t[] | A-r->B D-s->A"},
		{"an entity with no relations", []string{"F"}, 2, "F/t[]"},
		{"unknown names are skipped", []string{"X", "F"}, 1, "F/t[]"},
		{"a missing end is not returned", []string{"D"}, 1, "A/t[a1] C/t[] D/t[] | C-r->D D-s->A"},
		{"repeated names count once", []string{"C", "C"}, 0, "C/t[]"},
		{"nothing asked", nil, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, ents, rels)
			g.LoadRelation(rel("D", "r", "Ghost"))
			sel, err := g.Neighbours(tt.names, tt.depth)
			if err != nil {
				t.Fatalf("Neighbours(%q, %d): %v", tt.names, tt.depth, err)
			}
			if got := describe(sel.Snapshot()); got != tt.want {
				t.Errorf("Neighbours(%q, %d) =\n %q\nwant\n %q", tt.names, tt.depth, got, tt.want)
			}
		})
	}
}

func TestNeighboursDepthOutOfRange(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t")}, nil)
	for _, depth := range []int{-1, MaxDepth + 1, 100} {
		_, err := g.Neighbours([]string{"A"}, depth)
		var de *DepthError
		if !errors.As(err, &de) || de.Depth != depth {
			t.Errorf("Neighbours(depth %d) err = %v, want a *DepthError", depth, err)
		}
	}
	_, err := g.Neighbours([]string{"A"}, -1)
	if want := "depth must be between 0 and 2, not -1"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
