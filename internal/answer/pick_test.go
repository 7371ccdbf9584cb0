package answer

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// changeEverything changes g in every way the write tools do in place: it
// deletes an observation of every entity (which compacts its list), adds
// one, renames an entity, and deletes an entity and a relation.
func changeEverything(t *testing.T, g *graph.Graph) {
	t.Helper()
	for _, e := range g.Entities() {
		if len(e.Observations) > 0 {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: e.Name, Observations: e.Observations[:1]}})
		}
		if _, err := g.AddObservations([]graph.ObservationAddition{{EntityName: e.Name, Contents: []string{"added after the pick"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if ents := g.Entities(); len(ents) > 1 {
		if _, err := g.Rename(ents[0].Name, "renamed after the pick"); err != nil {
			t.Fatal(err)
		}
		g.DeleteEntities([]string{ents[len(ents)-1].Name})
	}
	if rels := g.Relations(); len(rels) > 0 {
		g.DeleteRelations([]graph.Relation{*rels[0]})
	}
}

// A picked page is encoded as the graph was when it was picked, however
// the graph changed since: it holds nothing of it.
func TestPickedPageIgnoresLaterChanges(t *testing.T) {
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 1))
		limit := []int{0, MinLimit + r.IntN(8000)}[r.IntN(2)]
		outline := r.IntN(3) == 0
		g := randomGraph(r)
		a := allOf(g)
		a.Outline = outline
		first, err := a.Page(limit, "")
		if err != nil {
			t.Fatal(err)
		}
		cursor := first.NextCursor
		want, err := a.Page(limit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Pick(limit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		changeEverything(t, g)
		if got := p.Encode(); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: the page changed with the graph:\n%s\nwant\n%s", s, got.Texts[0], want.Texts[0])
		}
	}
}

// A search's page shows what matched first, and when each fact was
// written, as it did before it was copied.
func TestPickedPageKeepsShownOrderAndTimes(t *testing.T) {
	g := graph.New()
	g.LoadEntity(graph.Entity{Name: "Ada", EntityType: "person", Observations: []string{"wrote the first program", "undated note", "met Babbage"}, Created: 10, Updated: 30, ObservedAt: []graph.Time{10, 0, 30}})
	a := &Answer{Tool: "search_nodes", Request: "search_nodes", Times: true, Entities: []View{{Entity: g.Entities()[0], First: func() []int { return []int{2, 0} }}}}
	want, err := a.Page(0, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Pick(0, "")
	if err != nil {
		t.Fatal(err)
	}
	changeEverything(t, g)
	if got := p.Encode(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", got.Texts[0], want.Texts[0])
	}
}

// The lower bound that decides what a page copies is one: never more than
// what the item adds to the text.
func TestLowerBoundIsOne(t *testing.T) {
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 2))
		a := allOf(randomGraph(r))
		a.Outline, a.Times = r.IntN(3) == 0, r.IntN(2) == 0
		scratch := &JSON{indent: true}
		for _, it := range a.sequence() {
			obs := 0
			if n := a.obsCount(it); n > 0 {
				obs = r.IntN(n)
			}
			p := part{ent: int(it.ent), from: obs, to: a.obsCount(it)}
			if lb, size := a.lowerBound(it, obs), a.itemSize(scratch, it, p); lb > size {
				t.Fatalf("seed %d: item %v: lower bound %d over its size %d", s, it, lb, size)
			}
		}
	}
}

// With the default limit a page of a big memory copies about what it
// shows, not the memory.
func TestPickCopiesAPageNotTheMemory(t *testing.T) {
	g := graph.New()
	var ents []graph.Entity
	for i := range 20000 {
		ents = append(ents, graph.Entity{Name: fmt.Sprintf("entity %d", i), EntityType: "thing", Observations: []string{"one fact", "another fact about it"}})
	}
	g.CreateEntities(ents)
	a := allOf(g)
	p, err := a.Pick(DefaultLimit, "")
	if err != nil {
		t.Fatal(err)
	}
	page := decodePage(t, p.Encode())
	if copied := len(p.a.Entities); copied > 2*len(page.Entities)+2 {
		t.Fatalf("copied %d entities for a page of %d", copied, len(page.Entities))
	}
}
