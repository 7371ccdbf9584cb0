package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// bruteForceSearch is SearchNodes without the index: every entity ranked.
func bruteForceSearch(g *Graph, query string) []string {
	q := newFolded(query)
	var words []folded
	for _, w := range strings.Fields(query) {
		words = append(words, newFolded(w))
	}
	type hit struct {
		name      string
		rank, pos int
	}
	var hits []hit
	for i, e := range g.entities {
		if r := e.searchText().rank(q, words); r != noMatch {
			hits = append(hits, hit{e.Name, r, i})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.rank - b.rank })
	var out []string
	for _, h := range hits {
		out = append(out, h.name)
	}
	return out
}

// TestIndexMatchesScan mutates a graph at random between searches, so the
// index is built, updated incrementally and rebuilt, and checks every search
// against a scan of all entities.
func TestIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(*quickSeed), 7))
	defer func(slack, parallel int) { rebuildSlack, parallelBuildMin = slack, parallel }(rebuildSlack, parallelBuildMin)
	rebuildSlack, parallelBuildMin = 16, 50
	vocab := []string{"alpha", "beta", "Gamma", "дельта", "ЭПСИЛОН", "東京都", "ｶﾀｶﾅ", "カタカナ", "straße", "STRASSE", "cafe\u0301", "ǅemal", "ꭰꭱ", "ᎠᎡ", "zeta eta", "in a tea of", "of"}
	text := func() string {
		n := 1 + rng.IntN(3)
		var parts []string
		for range n {
			parts = append(parts, vocab[rng.IntN(len(vocab))])
		}
		return strings.Join(parts, " ")
	}
	g := New()
	for step := range 3000 {
		name := fmt.Sprintf("e%d", rng.IntN(300))
		switch rng.IntN(5) {
		case 0, 1:
			g.CreateEntities([]Entity{{Name: name, EntityType: text(), Observations: []string{text(), text()}}})
		case 2:
			if g.Entity(name) != nil {
				g.AddObservations([]ObservationAddition{{EntityName: name, Contents: []string{text()}}})
			}
		case 3:
			if e := g.Entity(name); e != nil && len(e.Observations) > 0 {
				g.DeleteObservations([]ObservationDeletion{{EntityName: name, Observations: []string{e.Observations[0]}}})
			}
		case 4:
			g.DeleteEntities([]string{name})
		}
		if step%7 == 0 {
			query := text()
			if rng.IntN(2) == 0 {
				w := vocab[rng.IntN(len(vocab))]
				query = w[:len(w)/2+1] // a fragment, maybe mid-character
			}
			var got []string
			for _, e := range searchNodes(g, query).Entities {
				got = append(got, e.Name)
			}
			if want := bruteForceSearch(g, query); !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: SearchNodes(%q) = %v, scan finds %v", step, query, got, want)
			}
		}
	}
}
