package meaning

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// hobbyists are 30 filler people named "Person NN" and three people with
// a hobby each, in words no question below uses: a question's common
// word ("person") matches every filler by name and type. The stand-in
// model ranks each hobbyist first for their question.
func hobbyists() []graph.Entity {
	var ents []graph.Entity
	for i := range 30 {
		ents = append(ents, graph.Entity{Name: fmt.Sprintf("Person %02d", i+1), EntityType: "person",
			Observations: []string{fmt.Sprintf("registered on day %d at the front desk of the city office", i+1), "lives in a flat near the station with a view of the river"}})
	}
	return append(ents,
		graph.Entity{Name: "Carol Tanaka", EntityType: "person", Observations: []string{"plays violin", "works at the library"}},
		graph.Entity{Name: "Dmitri Ivanov", EntityType: "person", Observations: []string{"takes photography", "drives a blue van"}},
		graph.Entity{Name: "Erin Walsh", EntityType: "person", Observations: []string{"bakes sourdough", "has two cats"}},
	)
}

// TestFusionWeighsWhatEachKnows: a word ranking whose only matched word
// is in every entity ("person") does not outweigh the closest by
// meaning: each question finds its hobbyist first.
func TestFusionWeighsWhatEachKnows(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, hobbyists()...)
	ix := open(t, filepath.Join(t.TempDir(), "memory.jsonl.vectors"), stub, "m")
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ question, want string }{
		{"Which person is into music?", "Carol Tanaka"},
		{"Which person likes taking pictures?", "Dmitri Ivanov"},
		{"Which person enjoys cooking?", "Erin Walsh"},
	} {
		q, err := ix.Query(context.Background(), c.question)
		if err != nil {
			t.Fatal(err)
		}
		store.View(context.Background(), func(g *graph.Graph) error {
			got := names(ix.Search(g, c.question, q, 5))
			if len(got) == 0 || got[0] != c.want {
				t.Errorf("%q: %v, want %s first", c.question, got, c.want)
			}
			return nil
		})
	}
}

// TestMeaningHasAFloor: a query close in meaning to one entity does not
// bring every other entity up to the limit: those no more alike to it
// than the crowd are not returned.
func TestMeaningHasAFloor(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	ix := open(t, filepath.Join(t.TempDir(), "memory.jsonl.vectors"), stub, "m")
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	q, err := ix.Query(context.Background(), "hobby")
	if err != nil {
		t.Fatal(err)
	}
	store.View(context.Background(), func(g *graph.Graph) error {
		if got := names(ix.Search(g, "hobby", q, 10)); !slices.Equal(got, []string{"Hobby shop", "Alice"}) {
			t.Errorf("hobby: %v, want Hobby shop (by words) and Alice (by meaning) only", got)
		}
		return nil
	})
}
