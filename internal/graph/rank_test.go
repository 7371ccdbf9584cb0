package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hitNames lists the hits' names, a partial match marked with "~".
func hitNames(r Ranked) []string {
	var out []string
	for _, h := range r.Hits {
		if h.Exact {
			out = append(out, h.Entity.Name)
		} else {
			out = append(out, "~"+h.Entity.Name)
		}
	}
	return out
}

func TestSearchRankedOrder(t *testing.T) {
	// Entities are named without digits unless a case is about entries of
	// a log (isEntry), so the others hold their own words only.
	tests := []struct {
		name  string
		ents  []Entity
		rels  []Relation
		query string
		limit int
		want  []string
	}{
		{
			name: "the rarer shared word weighs more",
			ents: []Entity{
				ent("ma", "message", "we had a meeting today"),
				ent("mb", "message", "another meeting today"),
				ent("mc", "message", "a meeting about the quetzal"),
				ent("md", "message", "quetzal feathers"),
				ent("me", "message", "meeting again"),
			},
			query: "what about quetzal meetings?",
			// Then the shortest text first: "a", "we", "had" are stop words.
			want: []string{"~mc", "~md", "~me", "~ma", "~mb"},
		},
		{
			name: "stop words alone find nothing",
			ents: []Entity{
				ent("ma", "message", "when did you go there"),
				ent("mb", "message", "what is it"),
			},
			query: "what did you do then",
			want:  nil,
		},
		{
			name: "English words meet by their stems",
			ents: []Entity{
				ent("ma", "message", "I joined a support group last week"),
				ent("mb", "message", "the weather was nice"),
			},
			query: "When did Caroline go to the LGBTQ support groups?",
			want:  []string{"~ma"},
		},
		{
			name: "Russian words meet by their stems",
			ents: []Entity{
				ent("ma", "сообщение", "Вчера ходила в группу поддержки"),
				ent("mb", "сообщение", "Погода была хорошая"),
			},
			query: "Когда она ходила в группы поддержки?",
			want:  []string{"~ma"},
		},
		{
			name: "Japanese by bigrams",
			ents: []Entity{
				ent("ma", "メッセージ", "京都に行った"),
				ent("mb", "メッセージ", "東京に住んでいる"),
				ent("mc", "メッセージ", "大阪が好き"),
			},
			query: "東京のどこに住んでいますか",
			want:  []string{"~mb"},
		},
		{
			name: "a word of the name counts more than one of an observation",
			ents: []Entity{
				ent("Lisbon trip", "plan", "book the flights soon"),
				ent("Porto trip", "plan", "see Lisbon on the way"),
			},
			query: "plans for Lisbon?",
			want:  []string{"~Lisbon trip", "~Porto trip"},
		},
		{
			name: "a short entity beats a long one with the word once",
			ents: []Entity{
				ent("long", "note", "tea", "one two three four five six seven eight nine ten eleven twelve"),
				ent("short", "note", "tea"),
			},
			query: "green tea please",
			want:  []string{"~short", "~long"},
		},
		{
			name: "ties keep graph order",
			ents: []Entity{
				ent("n2", "note", "apples"),
				ent("n1", "note", "apples"),
			},
			query: "any apple?",
			want:  []string{"~n2", "~n1"},
		},
		{
			name: "related names are weaker evidence",
			ents: []Entity{
				ent("Caroline", "person"),
				ent("msgA", "message", "went to a support group"),
				ent("msgB", "message", "went to a support group"),
				ent("msgC", "message", "painted a sunset"),
			},
			rels: []Relation{
				rel("msgB", "said_by", "Caroline"),
				rel("msgC", "said_by", "Caroline"),
			},
			query: "did caroline visit the support group",
			// msg2 has both the words and the speaker; msg1 the words only;
			// Caroline has the name, which counts more than msg3's speaker.
			want: []string{"~msgB", "~msgA", "~Caroline", "~msgC"},
		},
		{
			name: "relation types are evidence too",
			ents: []Entity{
				ent("Alice", "person"),
				ent("Acme", "company"),
				ent("Bob", "person"),
			},
			rels:  []Relation{rel("Alice", "employed_by", "Acme")},
			query: "who is employed?",
			want:  []string{"~Alice", "~Acme"},
		},
		{
			name: "exact matches come first, in SearchNodes' order, then partial ones",
			ents: []Entity{
				ent("n1", "note", "green tea is good"),
				ent("n2", "note", "tea"),
				ent("green tea", "drink"),
				ent("n3", "note", "tea, green and hot"),
			},
			query: "green tea",
			want:  []string{"green tea", "n1", "n3", "~n2"},
		},
		{
			name: "all exact matches are returned beyond the limit",
			ents: []Entity{
				ent("a", "note", "tea"),
				ent("b", "note", "tea"),
				ent("c", "note", "tea"),
				ent("d", "note", "teas"),
			},
			query: "tea",
			limit: 2,
			want:  []string{"a", "b", "c", "d"},
		},
		{
			name: "partial matches fill up to the limit",
			ents: []Entity{
				ent("a", "note", "red apples"),
				ent("b", "note", "apples"),
				ent("c", "note", "apple pie"),
				ent("d", "note", "apple"),
			},
			query: "red apples",
			limit: 3,
			want:  []string{"a", "~b", "~d"},
		},
		{
			name: "an entry of a log is found by the words of the entries next to it",
			ents: []Entity{
				ent("msg-1", "message", "speaker: Ann", "Any tips for my back pain?"),
				ent("msg-2", "message", "speaker: Bo", "Swim twice a week, it fixed mine"),
				ent("msg-3", "message", "speaker: Ann", "Good idea"),
				ent("msg-4", "message", "speaker: Bo", "Off to the pool now"),
			},
			query: "what did Bo suggest for the back pain?",
			// msg-2 holds msg-1's words at half weight, and Bo's name
			// (msg-1 does not: an entry holds its neighbours' text, not
			// their speaker lines), so Bo's answer comes first; msg-4 has
			// Bo's name; msg-3, a reaction of two words, takes no share
			// of msg-2's score.
			want: []string{"~msg-2", "~msg-1", "~msg-4"},
		},
		{
			name: "entities named by words are not entries",
			ents: []Entity{
				ent("Ann", "person", "Has back pain"),
				ent("Bo", "person", "Swims twice a week"),
			},
			query: "who has back pain",
			want:  []string{"~Ann"},
		},
		{
			name: "entries hold only neighbours of their type",
			ents: []Entity{
				ent("msg-1", "message", "Any tips for my back pain?"),
				ent("note-1", "note", "Swim twice a week"),
				ent("msg-2", "message", "Swim twice a week"),
			},
			query: "back pains",
			want:  []string{"~msg-1"},
		},
		{
			name: "a long entity is not an entry and lends no words",
			ents: []Entity{
				ent("msg-1", "message", "back pain", "a", "b", "c", "d"),
				ent("msg-2", "message", "Swim twice a week"),
				ent("msg-3", "message", "Swim twice a week", strings.Repeat("long ", 250)),
				ent("msg-4", "message", "back pain again"),
			},
			query: "back pains",
			// msg-2 is an entry but its neighbours are not: it holds
			// nothing of msg-1.
			want: []string{"~msg-4", "~msg-1"},
		},
		{
			name: "what is related to an entity the question names ranks higher",
			ents: []Entity{
				ent("Nadia", "person"),
				ent("Elif", "person"),
				ent("ask", "message", "Did you hurt your ankle on the trail this morning when you were out running with the club?"),
				ent("reply", "message", "The ankle is the size of a grapefruit"),
			},
			rels: []Relation{
				{From: "ask", To: "Elif", RelationType: "sent_by"},
				{From: "reply", To: "Nadia", RelationType: "sent_by"},
			},
			query: "How did Nadia's ankle get hurt?",
			// Without the name, ask (two of the words) beats reply (one);
			// Nadia, the one asked about, comes first.
			want: []string{"~Nadia", "~reply", "~ask"},
		},
		{
			name: "a question about when prefers what holds a date",
			ents: []Entity{
				ent("first", "event", "Ann moved house, total chaos"),
				ent("second", "event", "Ann moved house on 3 May 2021"),
			},
			query: "When did Ann move house?",
			want:  []string{"~second", "~first"},
		},
		{
			name: "other questions do not",
			ents: []Entity{
				ent("first", "event", "Ann moved house, total chaos"),
				ent("second", "event", "Ann moved house on 3 May 2021"),
			},
			query: "Where did Ann move house?",
			want:  []string{"~first", "~second"},
		},
		{
			name: "an entity's type counts",
			ents: []Entity{
				ent("x", "restaurant", "on the corner"),
				ent("y", "shop", "on the corner"),
			},
			query: "which restaurants are nearby",
			want:  []string{"~x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, tt.ents, tt.rels)
			r := g.SearchRanked(tt.query, tt.limit)
			if got := hitNames(r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SearchRanked(%q) = %q, want %q", tt.query, got, tt.want)
				for _, h := range r.Hits {
					t.Logf("%s: %.4f", h.Entity.Name, h.Score)
				}
			}
			exact := 0
			for _, h := range r.Hits {
				if h.Exact {
					exact++
				}
			}
			if r.Exact != exact || !slices.IsSortedFunc(r.Hits, func(a, b Hit) int {
				if a.Exact != b.Exact {
					return map[bool]int{true: -1, false: 1}[a.Exact]
				}
				return 0
			}) {
				t.Errorf("Exact = %d, but %d hits are exact (they must lead)", r.Exact, exact)
			}
		})
	}
}

// The exact section is SearchNodes' answer, entity for entity, and the
// relations are those touching any hit.
func TestSearchRankedKeepsSearchNodes(t *testing.T) {
	g := searchGraph(t)
	for _, q := range []string{"", "a", "tea", "Alice", "person", "paris france", "capital", "ALICE ACME", "nothing here", "works"} {
		want := g.Search(q)
		r := g.SearchRanked(q, 3)
		got := r.Selection()
		if !reflect.DeepEqual(got.Entities[:r.Exact], want.Entities) {
			t.Errorf("SearchRanked(%q) exact part = %q, SearchNodes = %q", q, names(Selection{Entities: got.Entities[:r.Exact]}.Snapshot().Entities), names(want.Snapshot().Entities))
		}
		if wantRels := g.touching(got.Entities); !reflect.DeepEqual(got.Relations, wantRels) {
			t.Errorf("SearchRanked(%q) relations = %v, want %v", q, got.Relations, wantRels)
		}
	}
}

func TestHitMatched(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Caroline", "person",
			"likes painting",
			"went to the LGBTQ support group on 7 May 2023",
			"has a dog",
			"support group meets on Fridays",
			"the group is friendly",
			"Caroline joined an LGBTQ support group"),
	}, nil)
	tests := []struct {
		query   string
		matched []int
	}{
		// Whole query first, then by weight of shared words, then order.
		{"support group", []int{1, 3, 5, 4}},
		// "went" is a form of "go": the dated fact comes first.
		{"When did Caroline go to the LGBTQ support group?", []int{1, 5, 3, 4}},
		{"dog", []int{2}},
		{"painted dogs", []int{0, 2}},
		{"Fridays", []int{3}},
		{"Caroline?", []int{5}},
		// The entity is found by its type; no observation matches.
		{"persons", nil},
	}
	for _, tt := range tests {
		r := g.SearchRanked(tt.query, 0)
		if len(r.Hits) != 1 {
			t.Fatalf("SearchRanked(%q) = %q, want Caroline", tt.query, hitNames(r))
		}
		h := r.Hits[0]
		if got := h.Matched(); !slices.Equal(got, tt.matched) {
			t.Errorf("SearchRanked(%q) matched observations %v, want %v", tt.query, got, tt.matched)
		}
		obs := h.Observations()
		for i, m := range tt.matched {
			if obs[i] != h.Entity.Observations[m] {
				t.Errorf("SearchRanked(%q).Observations()[%d] = %q, want %q", tt.query, i, obs[i], h.Entity.Observations[m])
			}
		}
		if sorted := slices.Sorted(slices.Values(obs)); !slices.Equal(sorted, slices.Sorted(slices.Values(h.Entity.Observations))) {
			t.Errorf("Observations() = %q is not a reordering of the entity's", obs)
		}
	}
}

// cachedTerms is terms, remembered: the model tests score the same small
// texts thousands of times, and stemming is slow.
func cachedTerms(s string) []string {
	termCache.Lock()
	defer termCache.Unlock()
	ts, ok := termCache.m[s]
	if !ok {
		ts = terms(s)
		termCache.m[s] = ts
	}
	return ts
}

var termCache = struct {
	sync.Mutex
	m map[string][]string
}{m: make(map[string][]string)}

// indexScores scores every entity of g for query through the word index.
func indexScores(g *Graph, query string) map[string]float64 {
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	x := g.wordIndex()
	x.accumulate(x.resolve(query))
	defer x.reset()
	scores := make(map[string]float64)
	for _, id := range x.touched {
		scores[x.byID[id].Name] = x.scores[id]
	}
	return scores
}

// cloneGraph loads g's entities and relations into a new graph, as a fresh
// start would.
func cloneGraph(g *Graph) *Graph {
	c := New()
	for _, e := range g.entities {
		c.LoadEntity(e.clone())
	}
	for _, r := range g.relations {
		c.LoadRelation(r.clone())
	}
	return c
}

// trigramContents is what the trigram index holds, in terms a fresh build
// must agree on: the live entities, and for every trigram the names of the
// live entities posted under it. It fails t if a posting list is not in
// ascending order of ids, which searches rely on.
func trigramContents(t *testing.T, x *searchIndex) (live []string, postings map[uint32][]string) {
	t.Helper()
	for _, e := range x.byID {
		if e != nil {
			live = append(live, e.Name)
		}
	}
	postings = make(map[uint32][]string)
	for tri, l := range x.postings {
		ids := l.ids()
		if !slices.IsSorted(ids) {
			t.Fatalf("the posting list of trigram %06x is out of order: %v", tri, ids)
		}
		for _, id := range ids {
			if e := x.byID[id]; e != nil {
				postings[tri] = append(postings[tri], e.Name)
			}
		}
	}
	for _, ns := range postings {
		slices.Sort(ns)
	}
	slices.Sort(live)
	return live, postings
}

// wordContents is what the word index holds, in terms a fresh build must
// agree on: for every term, the live entities that have it and its weighted
// count in each; every live entity's weighted length; their number and
// total length. It fails t if a posting list is not in ascending order of
// ids.
type wordContents struct {
	Postings map[string]map[string]uint32
	DocLen   map[string]uint32
	Live     int
	TotalLen uint64
}

func wordIndexContents(t *testing.T, x *wordIndex) wordContents {
	t.Helper()
	c := wordContents{Postings: make(map[string]map[string]uint32), DocLen: make(map[string]uint32), Live: x.live, TotalLen: x.totalLen}
	for id, e := range x.byID {
		if e != nil {
			c.DocLen[e.Name] = x.docLen[id]
		}
	}
	for term, tid := range x.termIDs {
		last := uint32(0)
		x.lists[tid].each(func(id, units uint32) {
			if id <= last && last != 0 {
				t.Fatalf("the posting list of %q is out of order: %d after %d", term, id, last)
			}
			last = id
			if e := x.byID[id]; e != nil {
				if c.Postings[term] == nil {
					c.Postings[term] = make(map[string]uint32)
				}
				c.Postings[term][e.Name] = units
			}
		})
	}
	return c
}

// checkIndexesFresh brings both search indexes of g up to date and checks
// that they hold what indexes built from scratch on a copy of g hold.
func checkIndexesFresh(t *testing.T, g *Graph, step int, history []string) {
	t.Helper()
	c := cloneGraph(g)
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	gotLive, gotPostings := trigramContents(t, g.index())
	wantLive, wantPostings := trigramContents(t, c.index())
	if !reflect.DeepEqual(gotLive, wantLive) || !reflect.DeepEqual(gotPostings, wantPostings) {
		t.Fatalf("step %d: the trigram index kept up to date holds\n%q\n%v\na fresh one\n%q\n%v\nhistory:\n%s", step, gotLive, gotPostings, wantLive, wantPostings, strings.Join(history, "\n"))
	}
	if got, want := wordIndexContents(t, g.wordIndex()), wordIndexContents(t, c.wordIndex()); !reflect.DeepEqual(got, want) {
		t.Fatalf("step %d: the word index kept up to date holds\n%+v\na fresh one\n%+v\nhistory:\n%s", step, got, want, strings.Join(history, "\n"))
	}
}

// randomWrites makes random writes of every kind to a small graph whose
// names and texts share words.
type randomWrites struct {
	rng   *rand.Rand
	vocab []string
}

func (w *randomWrites) text() string {
	var parts []string
	for range 1 + w.rng.IntN(3) {
		parts = append(parts, w.vocab[w.rng.IntN(len(w.vocab))])
	}
	return strings.Join(parts, " ")
}

func (w *randomWrites) name() string {
	return fmt.Sprintf("e%d %s", w.rng.IntN(40), w.vocab[w.rng.IntN(3)])
}

// write makes one write to g and says what it did ("" when nothing).
func (w *randomWrites) write(t *testing.T, g *Graph) string {
	switch op := w.rng.IntN(13); {
	case op == 12:
		// As a memory file may hold: a second line for an entity, merged
		// into the first.
		n := w.name()
		g.LoadEntity(Entity{Name: n, EntityType: w.text(), Observations: []string{w.text()}})
		return "load " + n
	case op == 10:
		// The commands' edits (edit.go) keep the indexes in step too.
		from, to := w.name(), w.name()
		defer checkConsistent(t, g)
		if _, err := g.Rename(from, to); err == nil {
			return "rename " + from + " to " + to
		} else if _, err := g.Merge(to, from); err == nil {
			return "merge " + from + " into " + to
		}
	case op == 11:
		if e := g.Entity(w.name()); e != nil && len(e.Observations) > 0 {
			if g.ReplaceObservation(e.Name, e.Observations[0], w.text()) == nil {
				return "replace an observation of " + e.Name
			}
		}
	case op < 3:
		// Half are entries of one log, short and of one type, so the
		// neighbours' words come and go as entries change around them.
		e := Entity{Name: w.name(), EntityType: w.text(), Observations: []string{w.text(), w.text()}}
		if w.rng.IntN(2) == 0 {
			e.EntityType = "message"
			for range w.rng.IntN(4) {
				e.Observations = append(e.Observations, w.text())
			}
		}
		g.CreateEntities([]Entity{e})
		return "create " + e.Name
	case op < 5:
		r := Relation{From: w.name(), To: w.name(), RelationType: w.text()}
		if w.rng.IntN(4) == 0 {
			// As a memory file may hold: a relation whose end does not
			// exist yet.
			g.LoadRelation(r)
			return "load relation " + describeRelations([]Relation{r})
		} else if _, err := g.CreateRelations([]Relation{r}); err == nil {
			return "relate " + describeRelations([]Relation{r})
		}
	case op < 6:
		if rs := g.relations; len(rs) > 0 {
			r := rs[w.rng.IntN(len(rs))].clone()
			g.DeleteRelations([]Relation{r})
			return "unrelate " + describeRelations([]Relation{r})
		}
	case op < 8:
		n := w.name()
		if g.Entity(n) != nil {
			g.AddObservations([]ObservationAddition{{EntityName: n, Contents: []string{w.text()}}})
			return "observe " + n
		}
	case op < 9:
		if e := g.Entity(w.name()); e != nil && len(e.Observations) > 0 {
			g.DeleteObservations([]ObservationDeletion{{EntityName: e.Name, Observations: []string{e.Observations[0]}}})
			return "forget observation of " + e.Name
		}
	default:
		n := w.name()
		g.DeleteEntities([]string{n})
		return "delete " + n
	}
	return ""
}

// checkScores checks every ranked score for query against an index built
// from scratch on a copy of g (which must agree to the bit) and against
// naiveScores (to rounding).
func checkScores(t *testing.T, g *Graph, step int, query string, history []string) {
	t.Helper()
	got := indexScores(g, query)
	fresh := indexScores(cloneGraph(g), query)
	if !reflect.DeepEqual(got, fresh) {
		t.Fatalf("step %d, query %q: incremental index scores\n%v\nfresh index scores\n%v\nhistory:\n%s", step, query, got, fresh, strings.Join(history, "\n"))
	}
	naive := naiveScores(g, query)
	if len(naive) != len(got) {
		t.Fatalf("step %d, query %q: index scores %v, naive %v", step, query, got, naive)
	}
	for e, s := range naive {
		if math.Abs(got[e]-s) > 1e-9*s {
			t.Fatalf("step %d, query %q: score of %s = %v, naive %v", step, query, e, got[e], s)
		}
	}
}

// indexLife records what a run did to an index: whether it ever held a
// stale id, and whether it was ever replaced by a new build.
type indexLife struct {
	stale, rebuilt bool
	last           any
}

func (l *indexLife) note(stale int, x any) {
	l.stale = l.stale || stale > 0
	l.rebuilt = l.rebuilt || l.last != nil && l.last != x
	l.last = x
}

// TestSearchIndexesIncremental mutates a graph at random, with every kind
// of write, between searches, so both search indexes are built (in parts,
// as a large graph is), updated in place, rebuilt and dropped, and checks
// after every few writes that each index holds what an index built from
// scratch on a copy holds. Half the entities are entries of one log, so the
// word index's re-indexing of an entry's neighbours is exercised. It also
// checks the ranked scores (checkScores).
func TestSearchIndexesIncremental(t *testing.T) {
	defer func(slack, parallel int) { rebuildSlack, parallelBuildMin = slack, parallel }(rebuildSlack, parallelBuildMin)
	rebuildSlack, parallelBuildMin = 16, 8
	w := &randomWrites{
		rng:   rand.New(rand.NewPCG(uint64(*quickSeed), 9)),
		vocab: []string{"support group", "groups", "Caroline", "painting", "painted", "Москва", "москве", "группа", "東京都", "京都", "the", "when", "ｶﾀｶﾅ", "tea", "teas", "works_at", "knows"},
	}
	g := New()
	var history []string
	var trigrams, words indexLife
	for step := range 2500 {
		if what := w.write(t, g); what != "" {
			history = append(history, what)
		}
		if step%5 != 0 {
			continue
		}
		checkIndexesFresh(t, g, step, history)
		trigrams.note(g.idx.x.stale, g.idx.x)
		words.note(g.words.x.stale, g.words.x)
		checkScores(t, g, step, w.text(), history)
	}
	if len(g.entities) == 0 {
		t.Errorf("the run ended with an empty graph: it did not test updates")
	}
	for _, l := range []struct {
		index string
		indexLife
	}{{"trigram", trigrams}, {"word", words}} {
		if !l.stale || !l.rebuilt {
			t.Errorf("the %s index never had a stale id (%v) or was never rebuilt (%v): the run did not test its life", l.index, l.stale, l.rebuilt)
		}
	}
}

// A conversation stored one entity per message, with speaker and date in
// observations, as a chat assistant stores one. Questions in natural words
// must find the message that answers them among the first five. These
// messages are written for this test; the evaluation set lives elsewhere.
func TestSearchRankedConversation(t *testing.T) {
	messages := []struct{ speaker, date, text string }{
		{"Caroline", "7 May 2023", "I went to a LGBTQ support group yesterday and it was so powerful."},
		{"Melanie", "7 May 2023", "That's great! I've been busy painting a lake sunrise lately."},
		{"Caroline", "7 May 2023", "The transgender stories there really inspired me."},
		{"Melanie", "8 May 2023", "My kids and I went camping in the mountains last weekend."},
		{"Caroline", "8 May 2023", "I'm thinking about a career in counseling and mental health."},
		{"Melanie", "9 May 2023", "I ran a charity race for mental health awareness on Saturday."},
		{"Caroline", "9 May 2023", "I've been researching adoption agencies, I want to give kids a loving home."},
		{"Melanie", "20 May 2023", "We took the kids to the museum to see the dinosaur exhibit."},
		{"Caroline", "20 May 2023", "My friends threw me a birthday party with a rainbow cake."},
		{"Melanie", "25 May 2023", "I signed up for a pottery class, my first bowl is drying."},
		{"Caroline", "25 May 2023", "I gave a talk at my old school about my transition journey."},
		{"Melanie", "27 May 2023", "Our family went to the beach and the kids built sandcastles."},
		{"Caroline", "27 May 2023", "I joined a mentorship program for LGBTQ youth."},
		{"Melanie", "2 June 2023", "I have been reading a book about mindfulness, it helps me relax."},
		{"Caroline", "2 June 2023", "I went to a pride parade with my friends last Sunday."},
		{"Melanie", "3 June 2023", "My husband and I celebrated our anniversary at a little restaurant."},
		{"Caroline", "3 June 2023", "I started volunteering at a youth center on weekends."},
		{"Melanie", "5 June 2023", "I play the violin in a small community orchestra."},
		{"Caroline", "5 June 2023", "I bought a necklace from my grandmother's home country, Sweden."},
		{"Melanie", "6 June 2023", "The kids love the new puppy, we named him Oliver."},
	}
	var ents []Entity
	var rels []Relation
	ents = append(ents, ent("Caroline", "person"), ent("Melanie", "person"))
	for i, m := range messages {
		name := fmt.Sprintf("conversation message %d", i+1)
		ents = append(ents, ent(name, "message", "speaker: "+m.speaker, "date: "+m.date, m.text))
		rels = append(rels, rel(name, "said_by", m.speaker))
	}
	g := newGraph(t, ents, rels)
	questions := []struct {
		q      string
		answer int
	}{
		{"When did Caroline go to the LGBTQ support group?", 1},
		{"What did Melanie paint recently?", 2},
		{"Where did Melanie camp with her kids?", 4},
		{"What career is Caroline considering?", 5},
		{"What race did Melanie run?", 6},
		{"Is Caroline thinking of adopting?", 7},
		{"What exhibit did Melanie's kids see?", 8},
		{"What cake did Caroline have at her birthday?", 9},
		{"What class did Melanie sign up for?", 10},
		{"Where did Caroline give a talk?", 11},
		{"Which program for youth did Caroline join?", 13},
		{"What book is Melanie reading?", 14},
		{"When did Caroline go to pride?", 15},
		{"Where did Caroline volunteer?", 17},
		{"What instrument does Melanie play?", 18},
		{"Where is Caroline's grandmother from?", 19},
		{"What is the name of Melanie's dog?", 20},
	}
	misses := 0
	for _, q := range questions {
		want := fmt.Sprintf("conversation message %d", q.answer)
		r := g.SearchRanked(q.q, 5)
		got := r.Selection().Snapshot().Entities
		if !slices.Contains(names(got), want) {
			misses++
			t.Logf("%q: top 5 %q, want %q", q.q, names(got), want)
		}
	}
	// Natural questions share few words with the answer, and a word like
	// "instrument" or "dog" needs meaning, not spelling: allow a couple of
	// misses, as the evaluation elsewhere measures the rate.
	if misses > 3 {
		t.Errorf("%d of %d questions missed their message in the top 5", misses, len(questions))
	}
	// The question the issue starts from must rank its message first.
	if r := g.SearchRanked("When did Caroline go to the LGBTQ support group?", 5); r.Exact != 0 || r.Hits[0].Entity.Name != "conversation message 1" {
		t.Errorf("LGBTQ support group question: %q (exact %d), want conversation message 1 first", hitNames(r), r.Exact)
	}
}

// Many writes with no search in between: the indexes stop recording them
// and the next search builds them afresh, with the same answers.
func TestWordIndexManyWritesNoSearch(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "note", "green tea"), ent("B", "note", "black tea")}, nil)
	g.SearchRanked("tea", 0)
	searchNodes(g, "tea")
	for i := range 3000 {
		g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{fmt.Sprintf("cup %d of tea", i)}}})
	}
	if g.words.built() {
		t.Fatalf("after 3000 writes the word index still records %d pending entities", len(g.words.x.pending))
	}
	if g.idx.built() {
		t.Fatalf("after 3000 writes the trigram index still records %d pending entities", len(g.idx.x.pending))
	}
	if got := names(searchNodes(g, "cup 2999").Entities); !slices.Equal(got, []string{"A"}) {
		t.Errorf("SearchNodes after the rebuild: %q, want A", got)
	}
	if got, want := indexScores(g, "green tea cup"), naiveScores(g, "green tea cup"); len(got) != 2 || math.Abs(got["A"]-want["A"]) > 1e-9 || math.Abs(got["B"]-want["B"]) > 1e-9 {
		t.Errorf("scores after the rebuild %v, naive %v", got, want)
	}
}

// Whole tells the reference's matches (the whole query in one field) from
// Search's others (each word somewhere).
func TestHitWhole(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Ann", "person", "likes green tea", "lives in Paris"),
		ent("Bo", "person", "green walls", "tea at five"),
		ent("Cy", "person", "coffee"),
	}, nil)
	r := g.SearchRanked("green tea", 3)
	var got []string
	for _, h := range r.Hits {
		got = append(got, fmt.Sprintf("%s exact=%v whole=%v", h.Entity.Name, h.Exact, h.Whole))
	}
	want := []string{"Ann exact=true whole=true", "Bo exact=true whole=false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// namedIn finds the entities a question names: whole names of one or more
// words, in the question's case or capitalised, before a possessive.
func TestNamedIn(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Green Tea House", "place"),
		ent("Nadia", "person"),
		ent("msg-0042", "message"),
		ent("tea", "drink"),
		ent("Tom", "person"),
	}, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"what is on the green tea house's menu?", []string{"Green Tea House", "tea"}},
		{"When did Nadia’s ankle heal?", []string{"Nadia"}},
		{"what did msg-0042 say", []string{"msg-0042"}},
		{"nadia and tom", []string{"Nadia", "Tom"}},
		{"tomato", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, e := range g.namedIn(tt.query) {
			got = append(got, e.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("namedIn(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestHasDate(t *testing.T) {
	for text, want := range map[string]bool{
		"date: 8 May 2026, 1:56 pm": true,
		"sent: 2026-05-08 13:56":    true,
		"Born on 14 March 1987":     true,
		"moving in june 3":          true,
		"paid 14.03.2026":           true,
		"due 14/03":                 true,
		"в 1999 году":               true,
		"14 ноября юбилей":          true,
		"2026年3月に引っ越した":             true,
		"Ran 8k along the river":    false,
		"works at ACME 4":           false,
		"may I ask":                 false,
		"call 0117 496 0000":        false,
		"scored 3-1":                false,
		"the march to the sea":      false,
		"version 1.2 of the tool":   false,
		"Room 2101 is on the left":  false,
	} {
		if got := hasDate(Fold(text)); got != want {
			t.Errorf("hasDate(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestIsTemporal(t *testing.T) {
	for q, want := range map[string]bool{
		"When did Nadia hurt her ankle?":    true,
		"what year did Tom move to Leeds":   true,
		"How long ago did we meet?":         true,
		"And when is the party?":            true,
		"Когда у мамы юбилей?":              true,
		"誕生日はいつ？":                           true,
		"Where does Tom work?":              false,
		"What did Elif say about whenever?": false,
	} {
		if got := isTemporal(q); got != want {
			t.Errorf("isTemporal(%q) = %v, want %v", q, got, want)
		}
	}
}
