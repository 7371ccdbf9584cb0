package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// ent builds an entity as a caller passes it, or as a snapshot returns it
// (Observations never nil, as the JSON a user reads says "[]").
func ent(name, entityType string, observations ...string) Entity {
	return Entity{Name: name, EntityType: entityType, Observations: append([]string{}, observations...)}
}

func rel(from, relationType, to string) Relation {
	return Relation{From: from, To: to, RelationType: relationType}
}

// newGraph returns a graph holding ents and rels, created through the tools.
func newGraph(t *testing.T, ents []Entity, rels []Relation) *Graph {
	t.Helper()
	g := New()
	if res := g.CreateEntities(ents); res.Skipped != nil {
		t.Fatalf("setup: CreateEntities skipped %v", res.Skipped)
	}
	if _, err := g.CreateRelations(rels); err != nil {
		t.Fatalf("setup: CreateRelations: %v", err)
	}
	return g
}

// describe renders a snapshot compactly so tables can state a whole graph:
// `A/person[a1,a2] B/org[] | A-knows->B`. Entities and relations keep the
// order the snapshot has.
func describe(s Snapshot) string {
	parts := make([]string, 0, len(s.Entities))
	for _, e := range s.Entities {
		parts = append(parts, fmt.Sprintf("%s/%s[%s]", e.Name, e.EntityType, strings.Join(e.Observations, ",")))
	}
	out := strings.Join(parts, " ")
	if len(s.Relations) > 0 {
		out += " | " + describeRelations(s.Relations)
	}
	return out
}

func describeRelations(rels []Relation) string {
	parts := make([]string, len(rels))
	for i, r := range rels {
		parts[i] = fmt.Sprintf("%s-%s->%s", r.From, r.RelationType, r.To)
	}
	return strings.Join(parts, " ")
}

func names(ents []Entity) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Name
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	return string(b)
}

// assertJSON checks that got encodes exactly as want, which is what a client
// reads in structuredContent.
func assertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	if g := mustJSON(t, got); g != want {
		t.Errorf("%s as JSON:\n got %s\nwant %s", what, g, want)
	}
}

// assertNotFound checks err is the tool error a user sees for a missing
// entity, naming name.
func assertNotFound(t *testing.T, err error, name string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want Entity with name %s not found", name)
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v (%T), want a *NotFoundError", err, err)
	}
	if nf.Name != name {
		t.Errorf("NotFoundError.Name = %q, want %q", nf.Name, name)
	}
	if want := "Entity with name " + name + " not found"; err.Error() != want {
		t.Errorf("err = %q, want %q", err.Error(), want)
	}
}

// searchNodes is what search_nodes answers, copied.
func searchNodes(g *Graph, query string) Snapshot { return g.Search(query).Snapshot() }

// openNodes is what open_nodes returns, copied out of the graph.
func openNodes(g *Graph, names []string) Snapshot { return g.Open(names).Snapshot() }

// terms returns the terms of s (not yet folded) in order, repeats kept.
func terms(s string) []string {
	var out []string
	forEachTerm(Fold(s), func(t string) { out = append(out, strings.Clone(t)) })
	return out
}
