package graph

import (
	"cmp"
	"slices"
	"strings"
)

// Ranked search: the hits of a question, best first, and what of each
// matched (rank.go holds the word index it scores with).

// Ranked is what SearchRanked returns. Like Selection it points into the
// graph: valid until the next mutation, not to be modified.
type Ranked struct {
	// Hits are the entities found, best first: the Exact ones (in
	// Search's order), then the closest partial matches by score.
	Hits []Hit
	// Exact is the number of leading hits that match the whole query by
	// the rule of Search. When it is 0 and Hits is not empty, nothing
	// matched the whole query and the hits are only the closest.
	Exact int
	// Relations are those with at least one end among the hits, in graph
	// order.
	Relations []*Relation
}

// Hit is one entity of a ranked search.
type Hit struct {
	Entity *Entity
	// Exact: the entity matches the whole query (Search's rule), rather
	// than sharing only some of its words.
	Exact bool
	// Whole: an Exact hit holding the whole query in its name, type or one
	// observation (the reference server's rule), not only each of its
	// words somewhere.
	Whole bool
	// Score is the entity's BM25-like relevance to the query's words; 0
	// when it shares none (an exact match on a stop word or a fragment).
	Score float64

	q       *rankQuery
	closest []int // ClosestHit's
}

// ClosestHit is a hit found other than by the query's words (search by
// meaning): closest are the indexes of its observations, the closest to
// the query first, and score what it weighs against the word hits when
// the answer chooses its evidence (answer.Hits). Its Matches are the
// closest observations, each weighing less by its place: the closeness
// is on another scale than the words' weight.
func ClosestHit(e *Entity, score float64, closest []int) Hit {
	return Hit{Entity: e, Score: score, closest: closest}
}

// Selection returns the hits' entities and the relations, as Search
// returns them, for callers that show a ranked answer like any other.
func (r Ranked) Selection() Selection {
	ents := make([]*Entity, len(r.Hits))
	for i, h := range r.Hits {
		ents[i] = h.Entity
	}
	return Selection{ents, r.Relations}
}

// SearchRanked answers a question asked in natural words. It returns every
// entity Search would (those matching the whole query, in that order)
// and then, while they are fewer than limit, the entities sharing the most
// relevant words with the query, best first (ties: the one learned last
// first, then graph order), until there are limit hits in all. A limit of 0
// or less means DefaultSearchLimit.
//
// Relevance is BM25 over words (see the word index in rank.go): words
// compared after Fold, English and Russian words by their Snowball stems,
// stop words ignored, Japanese and Chinese text by character bigrams; rare
// words weigh more, the name more than an observation, and the names and
// types of related entities and relation types less.
//
// The first ranked search builds the word index; later mutations update it
// incrementally. Like Search it may run beside other read-only calls.
func (g *Graph) SearchRanked(query string, limit int) Ranked {
	return g.SearchRankedFunc(query, limit, nil)
}

// SearchRankedFunc is SearchRanked among the entities keep reports true for
// (all when keep is nil): the others are left out before the limit counts.
func (g *Graph) SearchRankedFunc(query string, limit int, keep func(*Entity) bool) Ranked {
	return g.searchRanked(query, limit, keep, nil)
}

// SearchRankedIn is SearchRanked among what was learned in the window w
// (all when w is zero): an entity is a hit by what of it was learned in w
// (Window.Learned), so a fact learned after until, or before since, finds
// nothing, even when the entity holds other facts of the window. An entity
// whose every observation was learned in w is found as SearchRanked finds
// it (its relations and neighbours too); one with only some is found by
// its name, type and those observations, and matches the whole query only
// when they do.
func (g *Graph) SearchRankedIn(query string, limit int, w Window) Ranked {
	if w.IsZero() {
		return g.searchRanked(query, limit, nil, nil)
	}
	return g.searchRanked(query, limit, w.Keeps, &w)
}

func (g *Graph) searchRanked(query string, limit int, keep func(*Entity) bool, win *Window) Ranked {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	exact, whole := g.exactHits(query, keep, win)
	x := g.wordIndex()
	q := x.resolve(query)
	x.accumulate(q)
	defer x.reset()
	g.adjustScores(x, query, limit > len(exact))

	hits := make([]Hit, 0, max(len(exact), limit))
	for i, e := range exact {
		hits = append(hits, Hit{Entity: e, Exact: true, Whole: i < whole, Score: x.scores[e.wid], q: q})
	}
	if want := limit - len(exact); want > 0 {
		hits = append(hits, best(partialHits(x, q, exact, keep, win), want)...)
	}
	r := Ranked{Hits: hits, Exact: len(exact)}
	r.Relations = g.touching(r.Selection().Entities)
	return r
}

// exactHits returns the entities matching the whole query (Search's rule),
// in Search's order, among those keep reports true for and by what of them
// was learned in win (either may be nil), and how many of them hold the
// whole query in one field.
func (g *Graph) exactHits(query string, keep func(*Entity) bool, win *Window) ([]*Entity, int) {
	exact, whole := g.search(query)
	if win != nil {
		exact, whole = win.exact(exact, query)
	}
	if keep == nil {
		return exact, whole
	}
	kept := make([]*Entity, 0, len(exact))
	w := 0
	for i, e := range exact {
		if keep(e) {
			if i < whole {
				w++
			}
			kept = append(kept, e)
		}
	}
	return kept, w
}

// adjustScores applies the rules on top of the words' scores: the entry
// after a strong match (only when partial matches are shown), the entity
// the query names, and dates for a question about when.
func (g *Graph) adjustScores(x *wordIndex, query string, partial bool) {
	if partial {
		g.carryForward(x, query)
	}
	g.boostNamed(x, query)
	if isTemporal(query) {
		for _, id := range x.touched {
			if x.byID[id].dated() {
				x.scores[id] *= dateBoost
			}
		}
	}
}

// partialHits returns the entities x's scores touched that are not exact,
// among those keep reports true for and sharing a word with q by what of
// them was learned in win (either may be nil).
func partialHits(x *wordIndex, q *rankQuery, exact []*Entity, keep func(*Entity) bool, win *Window) []Hit {
	isExact := make(map[*Entity]bool, len(exact))
	for _, e := range exact {
		isExact[e] = true
	}
	var others []Hit
	for _, id := range x.touched {
		if e := x.byID[id]; !isExact[e] && (keep == nil || keep(e)) && (win == nil || win.shares(e, q)) {
			others = append(others, Hit{Entity: e, Score: x.scores[id], q: q})
		}
	}
	return others
}

// better orders hits by score; ties: the one learned last (LastLearned)
// first, then graph order.
func better(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	if la, lb := a.Entity.LastLearned(), b.Entity.LastLearned(); la != lb {
		return cmp.Compare(lb, la)
	}
	return bySeq(a.Entity, b.Entity)
}

// best returns the n best of hits, in order.
func best(hits []Hit, n int) []Hit {
	if len(hits) > 4*n {
		// Most candidates cannot make the cut: find the n-th best score
		// with a partial sort of a copy of the scores, then sort only
		// those at least as good.
		scores := make([]float64, len(hits))
		for i, h := range hits {
			scores[i] = h.Score
		}
		cut := nthLargest(scores, n)
		hits = slices.DeleteFunc(hits, func(h Hit) bool { return h.Score < cut })
	}
	slices.SortFunc(hits, better)
	return hits[:min(n, len(hits))]
}

// nthLargest returns the n-th largest value of s (1-based), reordering s.
func nthLargest(s []float64, n int) float64 {
	k := n - 1 // index in descending order
	lo, hi := 0, len(s)-1
	for lo < hi {
		pivot := s[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for s[i] > pivot {
				i++
			}
			for s[j] < pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// Match is one observation of a hit that matches the query (Hit.Matches).
type Match struct {
	// Index is the observation's index in the entity.
	Index int
	// Whole: the observation holds the whole query (compared after Fold).
	Whole bool
	// Score is the summed weight (idf) of the query's words it holds.
	Score float64
	// Words counts the query's space-separated words it contains.
	Words int
}

// before reports whether m ranks before o among one entity's matches.
func (m Match) before(o Match) bool {
	switch {
	case m.Whole != o.Whole:
		return m.Whole
	case m.Score != o.Score:
		return m.Score > o.Score
	}
	return m.Words > o.Words
}

// Matches returns the entity's observations that match the query, best
// first: those containing the whole query (compared after Fold), then
// those sharing the most weight of the query's words, then those
// containing more of the query's space-separated words; ties: the newer
// observation first, then the entity's order. A caller shows these
// observations first, so a big entity never buries the fact asked about.
func (h Hit) Matches() []Match {
	if h.q == nil {
		return h.closestMatches()
	}
	var ms []Match
	seen := make(map[string]bool)
	for i, o := range h.Entity.Observations {
		m := h.q.match(newFolded(o), seen)
		m.Index = i
		if m.matches() {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b Match) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return cmp.Compare(h.Entity.ObservationTime(b.Index), h.Entity.ObservationTime(a.Index))
	})
	return ms
}

// closestMatches are a ClosestHit's matches, nil for any other hit
// without a query.
func (h Hit) closestMatches() []Match {
	if h.closest == nil {
		return nil
	}
	ms := make([]Match, 0, len(h.closest))
	for _, i := range h.closest {
		if i >= 0 && i < len(h.Entity.Observations) {
			ms = append(ms, Match{Index: i, Score: 1 / float64(len(ms)+1)})
		}
	}
	return ms
}

// match measures how a folded text matches q; seen is scratch.
func (q *rankQuery) match(f folded, seen map[string]bool) Match {
	m := Match{Whole: f.contains(q.whole)}
	if len(q.idf) > 0 {
		clear(seen)
		forEachToken(f.nfkc, func(t string, word bool) {
			if word {
				t = q.wordTerm(t)
			}
			if w, ok := q.idf[t]; ok && t != "" && !seen[t] {
				seen[t] = true
				m.Score += w
			}
		})
	}
	for _, w := range q.words {
		if f.contains(w) {
			m.Words++
		}
	}
	return m
}

func (m Match) matches() bool { return m.Whole || m.Score > 0 || m.Words > 0 }

// Matched returns the indexes of Matches, in its order.
func (h Hit) Matched() []int {
	ms := h.Matches()
	if ms == nil {
		return nil
	}
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Index
	}
	return out
}

// Observations returns the entity's observations with the matched ones
// (Matched) first and the others after them in their order. The result is a
// new slice; the strings are the entity's.
func (h Hit) Observations() []string {
	obs := h.Entity.Observations
	matched := h.Matched()
	out := make([]string, 0, len(obs))
	taken := make([]bool, len(obs))
	for _, i := range matched {
		out = append(out, obs[i])
		taken[i] = true
	}
	for i, o := range obs {
		if !taken[i] {
			out = append(out, o)
		}
	}
	return out
}

// exact returns the entities of exact (Search's order, the first whole of
// them holding the whole query in one field) that still match the query
// by what of them was learned in w, in Search's order, and how many of
// them hold the whole query in one field.
func (w Window) exact(exact []*Entity, query string) ([]*Entity, int) {
	q := newFolded(query)
	var words []folded
	for _, f := range strings.Fields(query) {
		words = append(words, newFolded(f))
	}
	type hit struct {
		e    *Entity
		rank int
	}
	var hits []hit
	for _, e := range exact {
		learned, kept := w.Learned(e)
		if learned == nil {
			continue
		}
		st := e.searchText() // folded on every call: once here
		if kept != nil {
			whole := st
			st = &searchText{name: whole.name, entityType: whole.entityType}
			for _, i := range kept {
				st.observations = append(st.observations, whole.observations[i])
			}
		}
		if r := st.rank(q, words); r != noMatch {
			hits = append(hits, hit{e, r})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return bySeq(a.e, b.e)
	})
	out := make([]*Entity, len(hits))
	whole := 0
	for i, h := range hits {
		out[i] = h.e
		if h.rank != matchAllWords {
			whole++
		}
	}
	return out, whole
}

// shares reports whether what of e was learned in w shares a word with q:
// all of e when it was all learned in w, else its name, type and the
// observations learned in w.
func (w Window) shares(e *Entity, q *rankQuery) bool {
	learned, kept := w.Learned(e)
	if learned == nil {
		return false
	}
	if kept == nil {
		return true
	}
	st := e.searchText()
	seen := make(map[string]bool)
	if q.match(st.name, seen).matches() || q.match(st.entityType, seen).matches() {
		return true
	}
	for _, i := range kept {
		if q.match(st.observations[i], seen).matches() {
			return true
		}
	}
	return false
}
