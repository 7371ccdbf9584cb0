package answer

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

var seed = flag.Uint64("seed", 0, "seed for the randomised tests (0: a fixed set of seeds)")

type pageEntity struct {
	Name                string   `json:"name"`
	EntityType          string   `json:"entityType"`
	Observations        []string `json:"observations"`
	ObservationCount    *int     `json:"observationCount"`
	OmittedObservations int      `json:"omittedObservations"`
}

type pageJSON struct {
	Entities   []pageEntity     `json:"entities"`
	Relations  []graph.Relation `json:"relations"`
	NextCursor string           `json:"nextCursor"`
}

func decodePage(t *testing.T, p Result) pageJSON {
	t.Helper()
	var s, txt pageJSON
	if err := json.Unmarshal(p.Structured, &s); err != nil {
		t.Fatalf("structured result is not JSON: %v\n%s", err, p.Structured)
	}
	if err := json.Unmarshal([]byte(p.Texts[0]), &txt); err != nil {
		t.Fatalf("first text item is not JSON: %v\n%s", err, p.Texts[0])
	}
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(txt)
	if string(a) != string(b) {
		t.Fatalf("text and structured result differ:\n%s\n%s", a, b)
	}
	if s.NextCursor != p.NextCursor {
		t.Fatalf("nextCursor %q, Page.NextCursor %q", s.NextCursor, p.NextCursor)
	}
	return s
}

func randomGraph(r *rand.Rand) *graph.Graph {
	g := graph.New()
	n := r.IntN(40)
	var ents []graph.Entity
	for i := range n {
		e := graph.Entity{Name: fmt.Sprintf("e%d-%s", i, strings.Repeat("x", r.IntN(30))), EntityType: []string{"person", "place", "Ёлка", "東京"}[r.IntN(4)]}
		for j := range r.IntN(12) * (1 + r.IntN(2)*r.IntN(20)) {
			e.Observations = append(e.Observations, fmt.Sprintf("obs %d of %d: %s", j, i, strings.Repeat("word \"q\" ", r.IntN(40))))
		}
		ents = append(ents, e)
	}
	g.CreateEntities(ents)
	var rels []graph.Relation
	for range r.IntN(3 * (n + 1)) {
		if n == 0 {
			break
		}
		rels = append(rels, graph.Relation{From: ents[r.IntN(n)].Name, To: ents[r.IntN(n)].Name, RelationType: []string{"knows", "works_at", "likes"}[r.IntN(3)]})
	}
	if _, err := g.CreateRelations(rels); err != nil {
		panic(err)
	}
	return g
}

func seeds() []uint64 {
	if *seed != 0 {
		return []uint64{*seed}
	}
	// The race detector makes each run ten times slower, not different.
	n := 200
	if raceEnabled {
		n = 40
	}
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

// follow pages through a, checking each page's size, and returns the
// entities (observations joined across parts) and relations seen.
func follow(t *testing.T, a *Answer, limit int) (ents []pageEntity, rels []graph.Relation, pages int) {
	t.Helper()
	cur := ""
	for {
		p, err := a.Page(limit, cur)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		if limit > 0 && textSize(p.Texts) > limit {
			t.Fatalf("page %d: %d bytes of text, limit %d", pages, textSize(p.Texts), limit)
		}
		pj := decodePage(t, p)
		for _, e := range pj.Entities {
			// A split entity's parts each omit what the others show.
			if n := len(ents); n > 0 && ents[n-1].Name == e.Name && ents[n-1].OmittedObservations > 0 {
				prev := &ents[n-1]
				total := len(prev.Observations) + prev.OmittedObservations
				if len(e.Observations)+e.OmittedObservations != total {
					t.Fatalf("parts of %s disagree on its size", e.Name)
				}
				prev.Observations = append(prev.Observations, e.Observations...)
				prev.OmittedObservations = total - len(prev.Observations)
				continue
			}
			ents = append(ents, e)
		}
		rels = append(rels, pj.Relations...)
		if p.NextCursor == "" {
			if len(p.Texts) != 1+len(a.notes()) {
				t.Fatalf("last page has %d text items, want %d", len(p.Texts), 1+len(a.notes()))
			}
			return ents, rels, pages
		}
		if len(p.Texts) != 2+len(a.notes()) || !strings.Contains(p.Texts[len(p.Texts)-1], p.NextCursor) {
			t.Fatalf("a cut page must end with a notice naming the cursor: %q", p.Texts[len(p.Texts)-1])
		}
		if pages > 10000 {
			t.Fatal("cursors do not end")
		}
		cur = p.NextCursor
	}
}

func allOf(g *graph.Graph) *Answer {
	a := &Answer{Tool: "read_graph", Request: "read_graph", Relations: g.Relations()}
	for _, e := range g.Entities() {
		a.Entities = append(a.Entities, View{Entity: e})
	}
	return a
}

// Following the cursors yields every entity and relation exactly once, in
// the answer's order, with every observation, whatever the limit.
func TestPagesCoverTheAnswerOnce(t *testing.T) {
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 0))
		g := randomGraph(r)
		a := allOf(g)
		limit := MinLimit + r.IntN(8000)
		ents, rels, _ := follow(t, a, limit)
		if len(ents) != len(a.Entities) {
			t.Fatalf("seed %d: %d entities, want %d", s, len(ents), len(a.Entities))
		}
		for i, e := range ents {
			want := a.Entities[i].Entity
			if e.Name != want.Name || e.EntityType != want.EntityType || !slices.Equal(e.Observations, want.Observations) && !(len(e.Observations) == 0 && len(want.Observations) == 0) {
				t.Fatalf("seed %d: entity %d is %+v, want %+v", s, i, e, *want)
			}
			if e.OmittedObservations != 0 {
				t.Fatalf("seed %d: entity %s still omits %d", s, e.Name, e.OmittedObservations)
			}
		}
		var want []graph.Relation
		for _, r := range a.Relations {
			want = append(want, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType})
		}
		key := func(r graph.Relation) string { return r.From + "\x00" + r.To + "\x00" + r.RelationType }
		got := make([]string, len(rels))
		for i, r := range rels {
			got[i] = key(r)
		}
		wantKeys := make([]string, len(want))
		for i, r := range want {
			wantKeys[i] = key(r)
		}
		// The parts put together are the whole answer, in its order.
		if !slices.Equal(got, wantKeys) {
			t.Fatalf("seed %d: relations differ:\n got %q\nwant %q", s, got, wantKeys)
		}
	}
}

// An answer that fits is the whole answer, exactly as with no limit.
func TestSmallAnswerIsUncut(t *testing.T) {
	for _, s := range seeds()[:20] {
		g := randomGraph(rand.New(rand.NewPCG(s, 0)))
		a := allOf(g)
		whole, err := a.Page(0, "")
		if err != nil {
			t.Fatal(err)
		}
		if whole.NextCursor != "" || len(whole.Texts) != 1 {
			t.Fatalf("no limit: %+v", whole)
		}
		p, err := a.Page(len(whole.Texts[0]), "")
		if err != nil {
			t.Fatal(err)
		}
		if p.Texts[0] != whole.Texts[0] || string(p.Structured) != string(whole.Structured) || len(p.Texts) != 1 {
			t.Fatalf("seed %d: an answer that fits exactly was changed", s)
		}
	}
}

func TestOutline(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{{Name: "Alice", EntityType: "person", Observations: []string{"a", "b"}}, {Name: "Bob", EntityType: "person"}})
	g.CreateRelations([]graph.Relation{{From: "Alice", To: "Bob", RelationType: "knows"}})
	a := allOf(g)
	a.Outline = true
	p, err := a.Page(0, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "entities": [
    {
      "name": "Alice",
      "entityType": "person",
      "observationCount": 2
    },
    {
      "name": "Bob",
      "entityType": "person",
      "observationCount": 0
    }
  ],
  "relations": [
    {
      "from": "Alice",
      "to": "Bob",
      "relationType": "knows"
    }
  ]
}`
	if p.Texts[0] != want {
		t.Fatalf("outline:\n%s", p.Texts[0])
	}
}

func TestFirstObservationsShownFirst(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "t", Observations: []string{"o0", "o1", "o2", "o3"}}})
	a := &Answer{Tool: "search_nodes", Entities: []View{{Entity: g.Entity("A"), First: func() []int { return []int{2, 0, 2, 9} }}}}
	p, _ := a.Page(0, "")
	pj := decodePage(t, p)
	if !slices.Equal(pj.Entities[0].Observations, []string{"o2", "o0", "o1", "o3"}) {
		t.Fatalf("got %q", pj.Entities[0].Observations)
	}
}

// A huge entity is split across parts; each part says what it leaves out.
func TestBigEntitySplit(t *testing.T) {
	g := graph.New()
	var obs []string
	for i := range 500 {
		obs = append(obs, fmt.Sprintf("observation number %d, with some words to take room", i))
	}
	g.CreateEntities([]graph.Entity{{Name: "Big", EntityType: "t", Observations: obs}, {Name: "Small", EntityType: "t", Observations: []string{"s"}}})
	a := allOf(g)
	p, err := a.Page(MinLimit*2, "")
	if err != nil {
		t.Fatal(err)
	}
	pj := decodePage(t, p)
	if len(pj.Entities) != 1 || pj.Entities[0].OmittedObservations == 0 || pj.Entities[0].OmittedObservations+len(pj.Entities[0].Observations) != 500 {
		t.Fatalf("first part: %+v", pj.Entities)
	}
	if !strings.Contains(p.Texts[1], `Entity "Big" is too big for one part`) {
		t.Fatalf("notice: %s", p.Texts[1])
	}
	ents, _, pages := follow(t, a, MinLimit*2)
	if pages < 3 || len(ents) != 2 || !slices.Equal(ents[0].Observations, obs) {
		t.Fatalf("%d pages, entities %d", pages, len(ents))
	}
}

// An observation longer than any answer is cut, and the text says so.
func TestHugeObservationCut(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{{Name: "Huge", EntityType: "t", Observations: []string{strings.Repeat("東京", 5000), "after"}}, {Name: "Next", EntityType: "t"}})
	a := allOf(g)
	p, err := a.Page(MinLimit, "")
	if err != nil {
		t.Fatal(err)
	}
	if textSize(p.Texts) > MinLimit {
		t.Fatalf("%d bytes", textSize(p.Texts))
	}
	pj := decodePage(t, p)
	if !strings.HasSuffix(pj.Entities[0].Observations[0], cutMark) || !strings.Contains(p.Texts[1], "was cut") {
		t.Fatalf("part: %+v\n%s", pj.Entities[0], p.Texts[1])
	}
	p2, err := a.Page(MinLimit, p.NextCursor)
	if err != nil {
		t.Fatal(err)
	}
	if pj2 := decodePage(t, p2); pj2.Entities[0].Observations[0] != "after" || pj2.Entities[1].Name != "Next" {
		t.Fatalf("next part: %+v", pj2.Entities)
	}
}

func TestCursorErrors(t *testing.T) {
	g := randomGraph(rand.New(rand.NewPCG(7, 0)))
	for len(g.Entities()) < 20 {
		g = randomGraph(rand.New(rand.NewPCG(uint64(len(g.Entities())+100), 0)))
	}
	a := allOf(g)
	p, err := a.Page(MinLimit, "")
	if err != nil || p.NextCursor == "" {
		t.Fatalf("want a cut first page: %v", err)
	}
	for _, bad := range []string{"!!", "AAAA", p.NextCursor[:len(p.NextCursor)-2]} {
		if _, err := a.Page(MinLimit, bad); !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), "not one this server gave") {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
	old, _ := base64.RawURLEncoding.DecodeString(p.NextCursor)
	old[0] = 1
	if _, err := a.Page(MinLimit, base64.RawURLEncoding.EncodeToString(old)); !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), "an older version of this server") {
		t.Errorf("a cursor of version 1: %v", err)
	}
	other := allOf(g)
	other.Request = "read_graph outline"
	if _, err := other.Page(MinLimit, p.NextCursor); !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), "other arguments") {
		t.Errorf("other request: %v", err)
	}

	// Appending changes nothing before the cursor: it still works.
	g.CreateEntities([]graph.Entity{{Name: "zz-new", EntityType: "t"}})
	if _, err := allOf(g).Page(MinLimit, p.NextCursor); err != nil {
		t.Errorf("after an append: %v", err)
	}
	// Deleting what came before it: refused, never wrong data.
	g.DeleteEntities([]string{g.Entities()[0].Name})
	if _, err := allOf(g).Page(MinLimit, p.NextCursor); !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), "memory changed") {
		t.Errorf("after a delete: %v", err)
	}
}

func TestShorten(t *testing.T) {
	render := func(n int) []string { return []string{strings.Repeat("x", 10*n), fmt.Sprintf("%d left out", 100-n)} }
	for _, c := range []struct{ limit, want int }{{0, 100}, {5000, 100}, {1010, 100}, {1009, 99}, {515, 50}, {3, 0}} {
		if got := Shorten(c.limit, 100, render); got != c.want {
			t.Errorf("limit %d: kept %d, want %d", c.limit, got, c.want)
		}
	}
}

// pagingAnswer is one of the answers the paging tests follow through
// writes: the whole graph (read_graph), or the entities with an observation
// that holds "match", those shown first (as search_nodes shows what
// matched).
func pagingAnswer(g *graph.Graph, search bool) *Answer {
	if !search {
		return allOf(g)
	}
	a := &Answer{Tool: "search_nodes", Request: "search_nodes match"}
	in := map[string]bool{}
	for _, e := range g.Entities() {
		var first []int
		for i, o := range e.Observations {
			if strings.Contains(o, "match") {
				first = append(first, i)
			}
		}
		if len(first) > 0 {
			a.Entities = append(a.Entities, View{Entity: e, First: func() []int { return first }})
			in[e.Name] = true
		}
	}
	for _, r := range g.Relations() {
		if in[r.From] || in[r.To] {
			a.Relations = append(a.Relations, r)
		}
	}
	return a
}

// randomWrite makes one change to g, aimed at the entity named target half
// the time when there is one (the entity a cursor is inside of).
func randomWrite(r *rand.Rand, g *graph.Graph, target string) {
	ents := g.Entities()
	pick := func() *graph.Entity {
		if target != "" && r.IntN(2) == 0 && g.Entity(target) != nil {
			return g.Entity(target)
		}
		if len(ents) == 0 {
			return nil
		}
		return ents[r.IntN(len(ents))]
	}
	switch r.IntN(7) {
	case 0, 1: // delete an observation, often one already shown
		if e := pick(); e != nil && len(e.Observations) > 0 {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: e.Name, Observations: []string{e.Observations[r.IntN(len(e.Observations))]}}})
		}
	case 2, 3: // add an observation, matching or not
		if e := pick(); e != nil {
			text := fmt.Sprintf("added %d", r.Uint64())
			if r.IntN(2) == 0 {
				text += " match"
			}
			g.AddObservations([]graph.ObservationAddition{{EntityName: e.Name, Contents: []string{text}}})
		}
	case 4: // a new entity, at the end of graph order
		g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("new-%d", r.Uint64()), EntityType: "t", Observations: []string{"a new match"}}})
	case 5: // delete an entity
		if e := pick(); e != nil {
			g.DeleteEntities([]string{e.Name})
		}
	case 6: // a relation more or less
		if len(ents) == 0 {
			return
		}
		rels := g.Relations()
		if len(rels) > 0 && r.IntN(2) == 0 {
			g.DeleteRelations([]graph.Relation{*rels[r.IntN(len(rels))]})
		} else {
			g.CreateRelations([]graph.Relation{{From: ents[r.IntN(len(ents))].Name, To: ents[r.IntN(len(ents))].Name, RelationType: "met"}})
		}
	}
}

// Between the parts of an answer the memory changes at random. Every part
// is right about the memory when it was given, and the parts never skip
// or repeat anything: either the next cursor is refused with an error that
// says to start over, or the parts put together name exactly the entities
// and relations of the answer on the memory as it is at the end, in its
// order, each entity with every observation it had when its last part was
// given, once.
func TestPagesUnderWrites(t *testing.T) {
	var refused, finishedAfterWrites int
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 1))
		g := randomGraph(r)
		// A few entities big enough to be split, with some observations
		// that match.
		for i := range 1 + r.IntN(3) {
			e := graph.Entity{Name: fmt.Sprintf("big-%d", i), EntityType: "t"}
			for j := range 40 + r.IntN(80) {
				text := fmt.Sprintf("observation %d of a big entity, with words to take room", j)
				if r.IntN(4) == 0 {
					text += " match"
				}
				e.Observations = append(e.Observations, text)
			}
			g.CreateEntities([]graph.Entity{e})
		}
		search := s%2 == 0
		limit := MinLimit + r.IntN(2000)

		type seen struct {
			name string
			obs  []string // joined across parts
			want []string // its observations as shown when its last part was given
		}
		var ents []seen
		var rels []string
		relKey := func(r *graph.Relation) string { return r.From + "\x00" + r.To + "\x00" + r.RelationType }
		cur, wrote, finished := "", false, false
		for pages := 0; ; pages++ {
			a := pagingAnswer(g, search)
			p, err := a.Page(limit, cur)
			if err != nil {
				if !errors.Is(err, ErrCursor) || !strings.Contains(err.Error(), "memory changed") || !wrote {
					t.Fatalf("seed %d part %d: %v", s, pages+1, err)
				}
				refused++
				break
			}
			pj := decodePage(t, p)
			for i, e := range pj.Entities {
				idx := slices.IndexFunc(a.Entities, func(v View) bool { return v.Entity.Name == e.Name })
				if idx < 0 {
					t.Fatalf("seed %d part %d: entity %s is not in the answer", s, pages+1, e.Name)
				}
				shown := a.shown(idx)
				if len(e.Observations)+e.OmittedObservations != len(shown) {
					t.Fatalf("seed %d part %d: %s shows %d and omits %d of %d observations", s, pages+1, e.Name, len(e.Observations), e.OmittedObservations, len(shown))
				}
				continues := i == 0 && len(ents) > 0 && ents[len(ents)-1].name == e.Name
				if continues {
					prev := &ents[len(ents)-1]
					prev.obs = append(prev.obs, e.Observations...)
					prev.want = slices.Clone(shown)
					continue
				}
				if slices.ContainsFunc(ents, func(x seen) bool { return x.name == e.Name }) {
					t.Fatalf("seed %d part %d: %s shown twice", s, pages+1, e.Name)
				}
				ents = append(ents, seen{name: e.Name, obs: slices.Clone(e.Observations), want: slices.Clone(shown)})
			}
			for _, rel := range pj.Relations {
				rels = append(rels, relKey(&rel))
			}
			if p.NextCursor == "" {
				finished = true
				break
			}
			if r.IntN(3) == 0 {
				target := ""
				if c, err := parseCursor(p.NextCursor); err == nil && c.obs > 0 {
					target = a.Entities[c.k].Entity.Name // inside a split entity
				}
				for range 1 + r.IntN(2) {
					randomWrite(r, g, target)
				}
				wrote = true
			}
			cur = p.NextCursor
			if pages > 10000 {
				t.Fatal("cursors do not end")
			}
		}
		if !finished {
			continue
		}
		final := pagingAnswer(g, search)
		if wrote {
			finishedAfterWrites++
		}
		var wantNames, gotNames []string
		for _, v := range final.Entities {
			wantNames = append(wantNames, v.Entity.Name)
		}
		for _, e := range ents {
			gotNames = append(gotNames, e.name)
			if !slices.Equal(e.obs, e.want) && !(len(e.obs) == 0 && len(e.want) == 0) {
				t.Fatalf("seed %d: the parts of %s show\n%q\nwant\n%q", s, e.name, e.obs, e.want)
			}
		}
		if !slices.Equal(gotNames, wantNames) {
			t.Fatalf("seed %d: the parts show entities\n%q\nwant\n%q", s, gotNames, wantNames)
		}
		var wantRels []string
		for _, rel := range final.Relations {
			wantRels = append(wantRels, relKey(rel))
		}
		if !slices.Equal(rels, wantRels) {
			t.Fatalf("seed %d: the parts show relations\n%q\nwant\n%q", s, rels, wantRels)
		}
	}
	t.Logf("%d runs refused a cursor, %d finished after writes", refused, finishedAfterWrites)
	if refused == 0 || finishedAfterWrites == 0 {
		t.Errorf("%d runs refused a cursor and %d finished after writes; the test wants both", refused, finishedAfterWrites)
	}
}

// An entity limited to its Most first observations shows exactly those, in
// shown order, across however many parts, counts the rest in
// omittedObservations, and the answer says where the rest is.
func TestMostShowsTheFirstOnce(t *testing.T) {
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 1))
		g := randomGraph(r)
		a := allOf(g)
		anyLimited := false
		for i := range a.Entities {
			n := len(a.Entities[i].Entity.Observations)
			rev := make([]int, n)
			for j := range rev {
				rev[j] = n - 1 - j
			}
			a.Entities[i].First = func() []int { return rev }
			a.Entities[i].Most = r.IntN(15)
			if m := a.Entities[i].Most; m > 0 && m < n {
				anyLimited = true
			}
		}
		limit := MinLimit + r.IntN(8000)
		ents, _, _ := follow(t, a, limit)
		if len(ents) != len(a.Entities) {
			t.Fatalf("seed %d: %d entities, want %d", s, len(ents), len(a.Entities))
		}
		for i, e := range ents {
			v := a.Entities[i]
			want := slices.Clone(v.Entity.Observations)
			slices.Reverse(want)
			if v.Most > 0 && v.Most < len(want) {
				want = want[:v.Most]
			}
			if !slices.Equal(e.Observations, want) && !(len(e.Observations) == 0 && len(want) == 0) {
				t.Fatalf("seed %d: entity %s shows %q, want %q", s, e.Name, e.Observations, want)
			}
			if e.OmittedObservations != len(v.Entity.Observations)-len(want) {
				t.Fatalf("seed %d: entity %s omits %d, want %d", s, e.Name, e.OmittedObservations, len(v.Entity.Observations)-len(want))
			}
		}
		p, err := a.Page(limit, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(p.Texts, omittedNote); got != anyLimited {
			t.Fatalf("seed %d: note about omitted observations shown: %v, want %v", s, got, anyLimited)
		}
	}
}

// A search's answer over a memory of people with hundreds of facts each
// shows each person's best-matching facts first and leaves the rest out,
// so the fact asked about is in the first few thousand bytes even when it
// is the second person's; an entity holding the whole query is whole.
func TestSearchEvidenceFirst(t *testing.T) {
	g := graph.New()
	var ann, bo []string
	for i := range 300 {
		ann = append(ann, fmt.Sprintf("Ann said on day %d that the garden needs water and that the bus was late again", i))
		bo = append(bo, fmt.Sprintf("Bo said on day %d that the garden needs weeding and that work was long", i))
	}
	bo = append(bo, "Bo adopted a greyhound called Biscuit from the shelter on 12 March")
	g.CreateEntities([]graph.Entity{
		{Name: "Ann", EntityType: "person", Observations: ann},
		{Name: "Bo", EntityType: "person", Observations: bo},
	})
	search := func(query string) (Result, graph.Ranked) {
		found := g.SearchRanked(query, 0)
		a := &Answer{Tool: "search_nodes", Request: query, Relations: found.Relations}
		for _, h := range found.Hits {
			a.Entities = append(a.Entities, Hit(h))
		}
		p, err := a.Page(60000, "")
		if err != nil {
			t.Fatal(err)
		}
		return p, found
	}

	p, found := search("When did Ann and Bo adopt the greyhound from the shelter?")
	if len(found.Hits) != 2 || found.Hits[0].Whole || found.Hits[1].Whole {
		t.Fatalf("hits %+v, want Ann and Bo as closest matches", found.Hits)
	}
	text := strings.Join(p.Texts, "")
	if i := strings.Index(text, "Bo adopted a greyhound"); i < 0 || i > 4000 {
		t.Errorf("the fact asked about is at byte %d of the answer, want within the first 4000:\n%.3000s", i, text)
	}
	pj := decodePage(t, p)
	for _, e := range pj.Entities {
		if len(e.Observations) != HitObservations || e.OmittedObservations != len(g.Entity(e.Name).Observations)-HitObservations {
			t.Errorf("%s shows %d observations and omits %d, want %d and the rest", e.Name, len(e.Observations), e.OmittedObservations, HitObservations)
		}
	}
	if !slices.Contains(p.Texts, omittedNote) {
		t.Errorf("no note says where the omitted observations are: %q", p.Texts[1:])
	}

	// Each word somewhere in the entity: a match by Search's rule, but not
	// the reference's, so it shows only its best observations too.
	p, found = search("Bo greyhound shelter")
	pj = decodePage(t, p)
	if len(found.Hits) == 0 || !found.Hits[0].Exact || found.Hits[0].Whole || len(pj.Entities[0].Observations) != HitObservations || pj.Entities[0].Observations[0] != bo[300] {
		t.Errorf("an all-words match: hits %+v, shown %q", found.Hits, pj.Entities[0].Observations)
	}

	// The whole query in one observation: the reference's match, shown
	// whole.
	p, found = search("greyhound called Biscuit")
	pj = decodePage(t, p)
	if len(found.Hits) == 0 || !found.Hits[0].Whole || len(pj.Entities[0].Observations) != len(bo) || pj.Entities[0].OmittedObservations != 0 {
		t.Errorf("a whole-query match is not shown whole: %d observations, %d omitted", len(pj.Entities[0].Observations), pj.Entities[0].OmittedObservations)
	}
}
