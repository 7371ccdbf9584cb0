package answer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// searchPages lays out a search of g as search_nodes does and follows
// every cursor at limit bytes a part.
func searchPages(t *testing.T, g *graph.Graph, query string, limit int) []pageJSON {
	t.Helper()
	found := g.SearchRanked(query, 0)
	a := &Answer{Tool: "search_nodes", Request: query, Entities: Hits(found.Hits), Relations: found.Relations}
	var pages []pageJSON
	cursor := ""
	for {
		p, err := a.Page(limit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, decodePage(t, p))
		if cursor = p.NextCursor; cursor == "" {
			return pages
		}
		if len(pages) > 1000 {
			t.Fatal("the cursors do not end")
		}
	}
}

// The observations a search shows are chosen across its hits: the person
// the question names has twenty facts matching three of its words, the
// other person three hundred matching one; the first shows nineteen, the
// second its best one, with the rest counted; and paging through a small
// limit shows each chosen observation exactly once.
func TestEvidenceChosenAcrossHits(t *testing.T) {
	g := graph.New()
	var ann, bo []string
	for i := range 20 {
		ann = append(ann, fmt.Sprintf("Ann repaired the garden shed, visit %d", i))
	}
	for i := range 300 {
		bo = append(bo, fmt.Sprintf("Bo watered the garden on day %d", i))
	}
	g.CreateEntities([]graph.Entity{
		{Name: "Bo", EntityType: "person", Observations: bo},
		{Name: "Ann", EntityType: "person", Observations: ann},
	})
	for _, limit := range []int{0, MinLimit} {
		pages := searchPages(t, g, "What did Ann do to the garden shed?", limit)
		shown := map[string][]string{}
		omitted := map[string]int{}
		var order []string
		for _, p := range pages {
			for _, e := range p.Entities {
				if _, ok := shown[e.Name]; !ok {
					order = append(order, e.Name)
				}
				shown[e.Name] = append(shown[e.Name], e.Observations...)
				omitted[e.Name] = e.OmittedObservations
			}
		}
		if strings.Join(order, ",") != "Ann,Bo" {
			t.Fatalf("limit %d: entities %v, want Ann then Bo", limit, order)
		}
		if n := len(shown["Ann"]); n != 2*HitObservations-1 || omitted["Ann"] != 20-n {
			t.Errorf("limit %d: Ann shows %d and omits %d, want %d and the rest", limit, n, omitted["Ann"], 2*HitObservations-1)
		}
		if n := len(shown["Bo"]); n != 1 || omitted["Bo"] != 299 {
			t.Errorf("limit %d: Bo shows %d and omits %d, want 1 and 299", limit, n, omitted["Bo"])
		}
		seen := map[string]bool{}
		for _, o := range shown["Ann"] {
			if seen[o] || !strings.HasPrefix(o, "Ann repaired") {
				t.Errorf("limit %d: Ann's %q shown twice or not Ann's", limit, o)
			}
			seen[o] = true
		}
	}
}

// Past evidenceHits hits (a whole-query search can have thousands), each
// hit shows its own best observations, as Hit lays it out.
func TestEvidenceHitsBounded(t *testing.T) {
	g := graph.New()
	var ents []graph.Entity
	for i := range evidenceHits + 20 {
		var obs []string
		for j := range 15 {
			obs = append(obs, fmt.Sprintf("note %d about the red kite and the blue heron", j))
		}
		ents = append(ents, graph.Entity{Name: fmt.Sprintf("birder %d", i), EntityType: "person", Observations: obs})
	}
	g.CreateEntities(ents)
	found := g.SearchRanked("heron kite", 0) // every word in each: all exact, none whole
	if len(found.Hits) != len(ents) || found.Hits[0].Whole {
		t.Fatalf("%d hits, want %d all-words matches", len(found.Hits), len(ents))
	}
	views := Hits(found.Hits)
	total := 0
	for i, v := range views[:evidenceHits] {
		if v.Most < 1 || v.Most > 15 {
			t.Fatalf("hit %d shows %d observations", i, v.Most)
		}
		total += v.Most
	}
	if total != evidenceHits*HitObservations {
		t.Errorf("the first %d hits show %d observations in all, want %d", evidenceHits, total, evidenceHits*HitObservations)
	}
	for i, v := range views[evidenceHits:] {
		if v.Most != HitObservations {
			t.Fatalf("hit %d shows %d observations, want %d", evidenceHits+i, v.Most, HitObservations)
		}
	}
}

// A search answer's relations: HitRelations per hit, the most relevant
// first, the rest counted on every part; paging shows each shown relation
// once.
func TestSearchRelationsBounded(t *testing.T) {
	g := graph.New()
	ents := []graph.Entity{{Name: "hub", EntityType: "person", Observations: []string{"keeps bees"}}, {Name: "hive", EntityType: "thing", Observations: []string{"where the bees live"}}}
	var rels []graph.Relation
	for i := range 300 {
		ents = append(ents, graph.Entity{Name: fmt.Sprintf("n%d", i), EntityType: "note"})
		rels = append(rels, graph.Relation{From: "hub", To: fmt.Sprintf("n%d", i), RelationType: "wrote"})
	}
	rels = append(rels, graph.Relation{From: "hub", To: "hive", RelationType: "owns"})
	g.CreateEntities(ents)
	if _, err := g.CreateRelations(rels); err != nil {
		t.Fatal(err)
	}
	found := g.SearchRanked("bees", 0)
	shown, omitted := SearchRelations(found.RelevantRelations(), len(found.Hits))
	if len(found.Hits) != 2 || len(shown) != 2*HitRelations || omitted != 301-2*HitRelations || shown[0].To != "hive" {
		t.Fatalf("%d hits, %d relations shown (first %+v), %d omitted", len(found.Hits), len(shown), shown[0], omitted)
	}
	a := &Answer{Tool: "search_nodes", Request: "bees", Entities: Hits(found.Hits), Relations: shown, OmittedRelations: omitted}
	seen := map[string]int{}
	for cursor, parts := "", 0; ; parts++ {
		p, err := a.Page(MinLimit, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Texts[0], fmt.Sprintf(`"omittedRelations": %d`, omitted)) || !strings.Contains(strings.Join(p.Texts, ""), "depth 1") {
			t.Fatalf("part %d does not count the relations left out:\n%s", parts, strings.Join(p.Texts, "\n"))
		}
		for _, r := range decodePage(t, p).Relations {
			seen[r.From+"->"+r.To]++
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	for _, r := range shown {
		if n := seen[r.From+"->"+r.To]; n != 1 {
			t.Errorf("relation %+v shown %d times, want once", *r, n)
		}
	}
}
