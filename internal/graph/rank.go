package graph

import (
	"cmp"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// The word index behind SearchRanked: for every term (see words.go) the
// entities whose text holds it and how often, so BM25 scores a query from a
// few posting lists instead of reading the graph.
//
// An entity's text is its name, type and observations, and, as weaker
// evidence, its context: for every relation it has, the relation type and
// the other end's name and type. Fields count with different weights (the
// name most, the context least), in the manner of BM25F: a term's weighted
// count is saturated once, and the entity's weighted length normalises it.
//
// It lives the life of lazyindex.go, as the trigram index does: built by
// the first ranked search, then kept up to date by indexing changed
// entities again under fresh ids. Document frequencies count live ids only,
// so scores never depend on the history of writes.

// Field weights, in units of half an occurrence: a word of the name counts
// twice, a word of the type or an observation once, a word of the context
// half.
const (
	weightName        = 4
	weightType        = 2
	weightObservation = 2
	weightContext     = 1
	weightSequence    = 1
	unitsPerWord      = 2.0
)

// An entry of a log (a message of a chat stored one entity per message, a
// journal entry, an event of a list) is short, and the words that say what
// it is about are often in the entries around it: the question in the
// message before a reply, the topic named a line up. So an entry also
// holds, at half an observation's weight, the observations of the entries
// just before and after it in graph order that are of its type.
//
// An entry is an entity with at most maxEntryObservations observations of
// at most maxEntryBytes in all, whose name holds a digit: entries are named
// by their place or time (msg-0042, 2026-03-01 run, D3:14) because their
// text cannot name them. The entities of a knowledge graph (a person, a
// project, a place) are named by words, and keep their own words only:
// with names left out of the rule, the knowledge-graph memories of the
// evaluation lost questions to their neighbours' facts, and a person with
// hundreds of facts is never an entry. Measured on a held-out benchmark of
// questions over long chats: recall@5 0.63 -> 0.72; entries two away at a
// quarter weight added nothing.
const (
	maxEntryObservations = 4
	maxEntryBytes        = 1000
)

// isEntry reports whether e looks like an entry of a log.
func isEntry(e *Entity) bool {
	if len(e.Observations) > maxEntryObservations || !strings.ContainsAny(e.Name, "0123456789") {
		return false
	}
	n := 0
	for _, o := range e.Observations {
		n += len(o)
	}
	return n <= maxEntryBytes
}

// adjacent calls f with the entities just before and after e in graph
// order (whatever their type and size): those whose documents hold e's
// observations when both are entries.
func (g *Graph) adjacent(e *Entity, f func(*Entity)) {
	i, found := slices.BinarySearchFunc(g.entities, e.seq, func(x *Entity, seq uint64) int { return cmp.Compare(x.seq, seq) })
	if !found {
		return
	}
	if i > 0 {
		f(g.entities[i-1])
	}
	if i+1 < len(g.entities) {
		f(g.entities[i+1])
	}
}

// sequenceNeighbours calls f with the entries next to e whose observations
// e's document holds: none unless e is an entry; of the two adjacent
// entities, those that are entries of e's type.
func (g *Graph) sequenceNeighbours(e *Entity, f func(*Entity)) {
	if !isEntry(e) {
		return
	}
	g.adjacent(e, func(n *Entity) {
		if n.EntityType == e.EntityType && isEntry(n) {
			f(n)
		}
	})
}

// BM25 parameters: k1 is how quickly repeats of a term stop adding, b how
// much a long entity is discounted. These are the textbook values, the ones
// the project's retrieval notes measured on a held-out conversational
// benchmark (recall@5 0.60, 0.68 with neighbours' words at half weight).
// They are not fitted to any test here; the evaluation set (cmd/memory-eval)
// is where to try others.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// DefaultSearchLimit is SearchRanked's limit when the caller gives none.
const DefaultSearchLimit = 10

// stopTerm marks a stop word in the surface cache.
const stopTerm = ^uint32(0)

type wordIndex struct {
	idTable
	docLen []uint32 // weighted length of each id's text, in units

	lists   []postingList     // by term id
	termIDs map[string]uint32 // term -> id
	// surface caches what a folded English or Russian word stands for (a
	// term id or stopTerm): stemming is the slow part of indexing, and the
	// same words recur. Other words (numbers, names in other scripts) are
	// their own terms and need no cache.
	surface map[string]uint32
	phrases map[string][]uint32 // term ids of repeated texts; see phraseTerms

	live     int    // ids not stale
	totalLen uint64 // sum of docLen over live ids

	counts  map[uint32]uint32 // scratch for add: units by term
	scores  []float64         // scratch for scoring, by id
	touched []uint32
}

// postingList holds, for one term, the entities that have it and the term's
// weighted count in each, packed: per entity the difference of its id from
// the previous one and then the count in units, both uvarints (ids ascend).
// Most postings take two bytes; at 100k entities the lists hold about six
// million of them.
type postingList struct {
	data []byte
	last uint32 // the last id in data
}

func (l *postingList) add(id uint32, units uint32) {
	l.data = binary.AppendUvarint(l.data, uint64(id-l.last))
	l.data = binary.AppendUvarint(l.data, uint64(units))
	l.last = id
}

// join appends o, whose ids all follow l's, to l: only the first delta
// changes.
func (l *postingList) join(o *postingList) {
	if len(o.data) == 0 {
		return
	}
	first, n := binary.Uvarint(o.data)
	l.data = binary.AppendUvarint(l.data, first-uint64(l.last))
	l.data = append(l.data, o.data[n:]...)
	l.last = o.last
}

// each calls f with every id of the list and its count, in order.
func (l *postingList) each(f func(id, units uint32)) {
	id := uint32(0)
	for i := 0; i < len(l.data); {
		d, n := binary.Uvarint(l.data[i:])
		i += n
		units, m := binary.Uvarint(l.data[i:])
		i += m
		id += uint32(d)
		f(id, uint32(units))
	}
}

func newWordIndex() *wordIndex {
	return &wordIndex{
		idTable: idTable{byID: []*Entity{nil}}, // id 0 means "not indexed"
		docLen:  []uint32{0},
		termIDs: make(map[string]uint32),
		surface: make(map[string]uint32),
		phrases: make(map[string][]uint32),
		counts:  make(map[uint32]uint32),
	}
}

func (x *wordIndex) ids() *idTable          { return &x.idTable }
func (x *wordIndex) idOf(e *Entity) *uint32 { return &e.wid }

func (x *wordIndex) forget(e *Entity) {
	if id := x.release(&e.wid); id != 0 {
		x.totalLen -= uint64(x.docLen[id])
		x.live--
	}
}

// wordIndex brings the word index up to date; it runs under searchMu.
func (g *Graph) wordIndex() *wordIndex { return g.words.upToDate(g, g.buildWordIndex) }

// buildWordIndex indexes every entity, entity i as id i+1. Like the trigram
// index, a large graph is cut into one part per core; each part has terms
// and lists of its own, and the parts' lists are joined in order, so every
// list stays ascending.
func (g *Graph) buildWordIndex() *wordIndex {
	n := len(g.entities)
	parts := 1
	if n >= parallelBuildMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	size := (n + parts - 1) / parts
	inParallel := func(f func(lo, hi int) *wordIndex) []*wordIndex {
		out := make([]*wordIndex, parts)
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { out[p] = f(p*size, min(n, (p+1)*size)) })
		}
		wg.Wait()
		return out
	}
	// Indexing an entity reads its neighbours' folded text: fold every
	// entity first, so no part writes what another reads.
	inParallel(func(lo, hi int) *wordIndex {
		for _, e := range g.entities[lo:hi] {
			e.searchText()
		}
		return nil
	})
	byID := make([]*Entity, n+1)
	docLen := make([]uint32, n+1)
	partial := inParallel(func(lo, hi int) *wordIndex {
		x := newWordIndex()
		x.byID, x.docLen = byID, docLen // each part writes its own ids only
		for i := lo; i < hi; i++ {
			x.post(g, g.entities[i], uint32(i+1))
		}
		return x
	})
	return merge(partial)
}

// merge joins the parts of a build into one index: the first part's terms
// and then each later part's postings after its predecessors'. Every list is
// copied once into an array of its final size, so the index keeps no room
// left over from appending and the build no chain of regrown arrays.
func merge(parts []*wordIndex) *wordIndex {
	x := parts[0]
	ids := make([][]uint32, len(parts)) // ids[p][t]: x's id of part p's term t
	for i, p := range parts[1:] {
		m := make([]uint32, len(p.lists))
		for term, t := range p.termIDs {
			m[t] = x.internTerm(term)
		}
		for w, t := range p.surface {
			if _, ok := x.surface[w]; !ok {
				if t != stopTerm {
					t = m[t]
				}
				x.surface[w] = t
			}
		}
		x.live += p.live
		x.totalLen += p.totalLen
		ids[i+1] = m
	}
	size := make([]int, len(x.lists))
	for t, l := range x.lists {
		size[t] = len(l.data)
	}
	for i, p := range parts[1:] {
		for t, l := range p.lists {
			size[ids[i+1][t]] += len(l.data) // a rebased first delta is no longer
		}
	}
	lists := make([]postingList, len(x.lists))
	for t := range lists {
		lists[t].data = make([]byte, 0, size[t])
		lists[t].join(&x.lists[t])
	}
	for i, p := range parts[1:] {
		for t := range p.lists {
			lists[ids[i+1][t]].join(&p.lists[t])
		}
	}
	x.lists = lists
	return x
}

// add indexes e under a fresh id.
func (x *wordIndex) add(g *Graph, e *Entity) {
	id := uint32(len(x.byID))
	x.byID = append(x.byID, nil)
	x.docLen = append(x.docLen, 0)
	x.post(g, e, id)
}

// post indexes e as id, a slot of byID that is free.
func (x *wordIndex) post(g *Graph, e *Entity, id uint32) {
	clear(x.counts)
	length := uint32(0)
	g.forEachField(e, func(text string, weight uint32, repeated bool) {
		if repeated {
			for _, t := range x.phraseTerms(text) {
				x.counts[t] += weight
				length += weight
			}
			return
		}
		forEachToken(text, func(tok string, word bool) {
			t := x.internToken(tok, word)
			if t != stopTerm {
				x.counts[t] += weight
				length += weight
			}
		})
	})
	for t, c := range x.counts {
		x.lists[t].add(id, c)
	}
	x.byID[id] = e
	x.docLen[id] = length
	e.wid = id
	x.live++
	x.totalLen += uint64(length)
}

// forEachField calls f with every folded text of e's document and its
// weight: name, type, observations, then the context from e's relations
// (outgoing, then incoming), then the observations of its neighbours in a
// sequence of entries (sequenceNeighbours). repeated marks the texts that recur across
// entities (types and relation types), which are worth caching.
func (g *Graph) forEachField(e *Entity, f func(text string, weight uint32, repeated bool)) {
	st := e.searchText()
	f(st.name.nfkc, weightName, false)
	f(st.entityType.nfkc, weightType, true)
	for _, o := range st.observations {
		f(o.nfkc, weightObservation, false)
	}
	context := func(r *Relation, other string) {
		f(Fold(r.RelationType), weightContext, true)
		if o := g.byName[other]; o != nil {
			ost := o.searchText()
			f(ost.name.nfkc, weightContext, false)
			f(ost.entityType.nfkc, weightContext, true)
		} else {
			f(Fold(other), weightContext, false)
		}
	}
	for _, r := range g.out[e.Name] {
		context(r, r.To)
	}
	for _, r := range g.in[e.Name] {
		context(r, r.From)
	}
	g.sequenceNeighbours(e, func(n *Entity) {
		for _, o := range n.searchText().observations {
			f(o.nfkc, weightSequence, false)
		}
	})
}

// maxPhrases bounds the cache of repeated texts: a memory has a handful of
// types and relation types, but nothing stops it from having a new one on
// every entity.
const maxPhrases = 4096

// phraseTerms returns the term ids of a folded text that recurs, stop words
// left out, from a cache.
func (x *wordIndex) phraseTerms(text string) []uint32 {
	if ts, ok := x.phrases[text]; ok {
		return ts
	}
	var ts []uint32
	forEachToken(text, func(tok string, word bool) {
		if t := x.internToken(tok, word); t != stopTerm {
			ts = append(ts, t)
		}
	})
	if len(x.phrases) < maxPhrases {
		x.phrases[strings.Clone(text)] = ts
	}
	return ts
}

// internToken returns the term id of a token, adding the term if new.
func (x *wordIndex) internToken(tok string, word bool) uint32 {
	if !word || !stemmed(tok) {
		return x.internTerm(tok)
	}
	if t, ok := x.surface[tok]; ok {
		return t
	}
	t := stopTerm
	if term := wordTerm(tok); term != "" {
		t = x.internTerm(term)
	}
	x.surface[strings.Clone(tok)] = t
	return t
}

func (x *wordIndex) internTerm(term string) uint32 {
	if t, ok := x.termIDs[term]; ok {
		return t
	}
	t := uint32(len(x.lists))
	x.termIDs[strings.Clone(term)] = t
	x.lists = append(x.lists, postingList{})
	return t
}

// lookupToken returns the term and term id of a query token, or false when
// it is a stop word or no entity has it. It adds nothing: queries must not
// grow the index.
func (x *wordIndex) lookupToken(tok string, word bool) (term string, id uint32, ok bool) {
	term = tok
	if word {
		if t, cached := x.surface[tok]; cached && t == stopTerm {
			return "", 0, false
		}
		term = wordTerm(tok)
		if term == "" {
			return "", 0, false
		}
	}
	id, ok = x.termIDs[term]
	return term, id, ok
}

// rankQuery is a query resolved against the index: its distinct terms in
// order of first appearance, their weights, and what the exact rule needs.
type rankQuery struct {
	whole folded
	words []folded
	terms []string
	ids   []uint32 // ids[i] is terms[i]'s id; terms unknown to the index are left out of both
	idf   map[string]float64

	// stems remembers the term of each word Matched met: a search that
	// matches thousands of entities would otherwise stem every word of
	// their observations once per hit (most of a big answer's time), and
	// the same words recur. At most maxStems words.
	mu    sync.Mutex
	stems map[string]string
}

// maxStems bounds the words a query remembers the terms of.
const maxStems = 1 << 16

// wordTerm is wordTerm(w), remembered.
func (q *rankQuery) wordTerm(w string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.stems[w]; ok {
		return t
	}
	t := wordTerm(w)
	if q.stems == nil {
		q.stems = make(map[string]string)
	}
	if len(q.stems) < maxStems {
		// w is part of an observation: a copy does not keep the whole
		// observation's folded form alive.
		k := strings.Clone(w)
		if t == w {
			t = k
		}
		q.stems[k] = t
	}
	return t
}

func (x *wordIndex) resolve(query string) *rankQuery {
	q := &rankQuery{whole: newFolded(query), idf: make(map[string]float64)}
	for _, w := range strings.Fields(query) {
		q.words = append(q.words, newFolded(w))
	}
	forEachToken(Fold(query), func(tok string, word bool) {
		term, id, ok := x.lookupToken(tok, word)
		if !ok {
			return
		}
		if _, seen := q.idf[term]; seen {
			return
		}
		q.terms = append(q.terms, strings.Clone(term))
		q.ids = append(q.ids, id)
		q.idf[term] = x.idf(x.docFreq(id))
	})
	return q
}

// docFreq counts the live entities holding term t.
func (x *wordIndex) docFreq(t uint32) int {
	n := 0
	x.lists[t].each(func(id, _ uint32) {
		if x.byID[id] != nil {
			n++
		}
	})
	return n
}

// idf is BM25's inverse document frequency, never negative: a term every
// entity has still counts a little.
func (x *wordIndex) idf(df int) float64 {
	return math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 is one term's contribution to an entity's score, from the term's idf,
// its weighted count in the entity (units) and the entity's weighted length
// (units), given the average length.
func bm25(idf float64, tfUnits, lenUnits uint32, avgLen float64) float64 {
	tf := float64(tfUnits) / unitsPerWord
	norm := 1 - bm25B + bm25B*float64(lenUnits)/unitsPerWord/avgLen
	return idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
}

func (x *wordIndex) avgLen() float64 {
	if x.live == 0 || x.totalLen == 0 {
		return 1
	}
	return float64(x.totalLen) / unitsPerWord / float64(x.live)
}

// accumulate adds each live entity's score for q into x.scores and lists
// the ids it touched in x.touched. The caller reads them, then calls reset.
func (x *wordIndex) accumulate(q *rankQuery) {
	if cap(x.scores) < len(x.byID) {
		x.scores = make([]float64, len(x.byID), cap(x.byID))
	}
	x.scores = x.scores[:len(x.byID)]
	avg := x.avgLen()
	for i, t := range q.ids {
		idf := q.idf[q.terms[i]]
		x.lists[t].each(func(id, units uint32) {
			if x.byID[id] == nil {
				return
			}
			if x.scores[id] == 0 {
				x.touched = append(x.touched, id)
			}
			x.scores[id] += bm25(idf, units, x.docLen[id], avg)
		})
	}
}

func (x *wordIndex) reset() {
	for _, id := range x.touched {
		x.scores[id] = 0
	}
	x.touched = x.touched[:0]
}

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

	q *rankQuery
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
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	exact, whole := g.search(query)
	if keep != nil {
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
		exact, whole = kept, w
	}
	x := g.wordIndex()
	q := x.resolve(query)
	x.accumulate(q)
	defer x.reset()
	g.boostNamed(x, query)
	if isTemporal(query) {
		for _, id := range x.touched {
			if x.byID[id].dated() {
				x.scores[id] *= dateBoost
			}
		}
	}

	hits := make([]Hit, 0, max(len(exact), limit))
	for i, e := range exact {
		hits = append(hits, Hit{Entity: e, Exact: true, Whole: i < whole, Score: x.scores[e.wid], q: q})
	}
	if want := limit - len(exact); want > 0 {
		isExact := make(map[*Entity]bool, len(exact))
		for _, e := range exact {
			isExact[e] = true
		}
		var others []Hit
		for _, id := range x.touched {
			if e := x.byID[id]; !isExact[e] && (keep == nil || keep(e)) {
				others = append(others, Hit{Entity: e, Score: x.scores[id], q: q})
			}
		}
		hits = append(hits, best(others, want)...)
	}
	r := Ranked{Hits: hits, Exact: len(exact)}
	r.Relations = g.touching(r.Selection().Entities)
	return r
}

// namedBoost multiplies the score of an entity related to one the query
// names.
const namedBoost = 1.5

// maxNameWords is the longest name, in words, looked for in a query.
const maxNameWords = 4

// boostNamed raises the scores of the entities related to an entity the
// query names ("When did Nadia hurt her ankle?" names Nadia; the messages
// Nadia sent_by are related to her): among the entities sharing words with
// the query, those tied to who or what it is about come first. Each is
// raised once, however many named entities it is related to.
func (g *Graph) boostNamed(x *wordIndex, query string) {
	named := g.namedIn(query)
	if len(named) == 0 {
		return
	}
	boosted := make(map[*Entity]bool)
	boost := func(name string) {
		e := g.byName[name]
		if e == nil || e.wid == 0 || boosted[e] || x.scores[e.wid] == 0 {
			return
		}
		boosted[e] = true
		x.scores[e.wid] *= namedBoost
	}
	for _, n := range named {
		boost(n.Name) // not to fall behind what is related to it
		for _, r := range g.out[n.Name] {
			boost(r.To)
		}
		for _, r := range g.in[n.Name] {
			boost(r.From)
		}
	}
}

// namedIn returns the entities whose name is a run of up to maxNameWords
// words of the query, as written or with each word capitalised, a
// possessive "'s" left off ("Nadia's" names Nadia).
func (g *Graph) namedIn(query string) []*Entity {
	words := nameWords(query)
	var out []*Entity
	seen := make(map[*Entity]bool)
	for i := range words {
		for n := 1; n <= maxNameWords && i+n <= len(words); n++ {
			name := strings.Join(words[i:i+n], " ")
			if len(g.byName) == 0 {
				return nil
			}
			for k, cand := range [2]string{name, capitalised(name)} {
				if k == 1 && cand == name {
					break
				}
				if e := g.byName[cand]; e != nil && !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// nameWords cuts a query into the words a name may be made of: letters,
// digits and the hyphens, apostrophes and dots inside them.
func nameWords(query string) []string {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '-' && r != '\'' && r != '’' && r != '.'
	})
	for i, w := range words {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		words[i] = strings.Trim(w, "-'’.")
	}
	return words
}

// capitalised returns s with the first letter of each word upper-case.
func capitalised(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := true
	for _, r := range s {
		if start {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		start = r == ' '
	}
	return b.String()
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

// Matched returns the indexes of the entity's observations that match the
// query, best first: those containing the whole query (compared after Fold),
// then those sharing the most weight of the query's words, then those
// containing one of the query's space-separated words; ties: the newer
// observation first, then the entity's order. A caller shows these observations first, so a big entity
// never buries the fact asked about.
func (h Hit) Matched() []int {
	if h.q == nil {
		return nil
	}
	type match struct {
		i     int
		whole bool
		score float64
		words int
	}
	var ms []match
	seen := make(map[string]bool)
	for i, o := range h.Entity.Observations {
		f := newFolded(o)
		m := match{i: i, whole: f.contains(h.q.whole)}
		if len(h.q.idf) > 0 {
			clear(seen)
			forEachToken(f.nfkc, func(t string, word bool) {
				if word {
					t = h.q.wordTerm(t)
				}
				if w, ok := h.q.idf[t]; ok && t != "" && !seen[t] {
					seen[t] = true
					m.score += w
				}
			})
		}
		for _, w := range h.q.words {
			if f.contains(w) {
				m.words++
			}
		}
		if m.whole || m.score > 0 || m.words > 0 {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b match) int {
		switch {
		case a.whole != b.whole:
			if a.whole {
				return -1
			}
			return 1
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		case a.words != b.words:
			return b.words - a.words
		}
		return cmp.Compare(h.Entity.ObservationTime(b.i), h.Entity.ObservationTime(a.i))
	})
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.i
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
