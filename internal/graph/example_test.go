package graph_test

import (
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A question in natural words: no entity holds the whole sentence, so every
// hit is a partial match, ranked by the words it shares with the question.
// Within each hit, the observations that matched come first.
func ExampleGraph_SearchRanked() {
	g := graph.New()
	g.CreateEntities([]graph.Entity{
		{Name: "Caroline", EntityType: "person"},
		{Name: "message 1", EntityType: "message", Observations: []string{"date: 7 May 2023", "I went to a LGBTQ support group yesterday."}},
		{Name: "message 2", EntityType: "message", Observations: []string{"date: 8 May 2023", "I have been painting a lot lately."}},
		{Name: "message 3", EntityType: "message", Observations: []string{"date: 9 May 2023", "Sounds lovely, send me a picture!"}},
	})
	g.CreateRelations([]graph.Relation{
		{From: "message 1", To: "Caroline", RelationType: "said_by"},
		{From: "message 2", To: "Caroline", RelationType: "said_by"},
	})

	r := g.SearchRanked("When did Caroline go to the LGBTQ support group?", 2)
	if r.Exact == 0 {
		fmt.Println("No entity matched the whole query; the closest:")
	}
	for _, h := range r.Hits {
		fmt.Printf("%s %q\n", h.Entity.Name, h.Observations())
	}
	// message 2 comes before Caroline: as an entry of a log (three short
	// messages side by side, named alike) it also holds message 1's words
	// at half weight.

	// Output:
	// No entity matched the whole query; the closest:
	// message 1 ["I went to a LGBTQ support group yesterday." "date: 7 May 2023"]
	// message 2 ["date: 8 May 2023" "I have been painting a lot lately."]
}

// Exact matches (the whole query occurs, as search_nodes has always found
// them) come first, all of them; partial matches fill up to the limit.
func ExampleGraph_SearchRanked_exactFirst() {
	g := graph.New()
	g.CreateEntities([]graph.Entity{
		{Name: "Alice", EntityType: "person", Observations: []string{"drinks green tea", "lives in Paris"}},
		{Name: "Bob", EntityType: "person", Observations: []string{"drinks black tea"}},
		{Name: "Tea house", EntityType: "place", Observations: []string{"serves green tea"}},
	})
	r := g.SearchRanked("green tea", 3)
	for _, h := range r.Hits {
		fmt.Println(h.Entity.Name, h.Exact, h.Matched())
	}
	// Output:
	// Alice true [0]
	// Tea house true [0]
	// Bob false [0]
}

// Neighbours at depth 1 returns the named entities, those related to them
// in either direction, and the relations among all of them.
func ExampleGraph_Neighbours() {
	g := graph.New()
	g.CreateEntities([]graph.Entity{
		{Name: "Alice", EntityType: "person"},
		{Name: "Acme", EntityType: "company"},
		{Name: "Bob", EntityType: "person"},
		{Name: "Paris", EntityType: "city"},
	})
	g.CreateRelations([]graph.Relation{
		{From: "Alice", To: "Acme", RelationType: "works_at"},
		{From: "Bob", To: "Acme", RelationType: "works_at"},
		{From: "Bob", To: "Paris", RelationType: "lives_in"},
	})
	sel, err := g.Neighbours([]string{"Acme"}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range sel.Entities {
		fmt.Println(e.Name)
	}
	for _, r := range sel.Relations {
		fmt.Println(r.From, r.RelationType, r.To)
	}
	// Output:
	// Alice
	// Acme
	// Bob
	// Alice works_at Acme
	// Bob works_at Acme
}
