package graph

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"sync"
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
	// firstNames lists, by the folded first word, the ids of entities
	// named by two capitalised words (names.go); stale ids stay until a
	// rebuild, as in the lists.
	firstNames map[string][]uint32

	live     int     // ids not stale
	totalLen uint64  // sum of docLen over live ids
	expect   float64 // while built a step at a time: see reserve

	counts  map[uint32]uint32 // scratch for add: units by term
	fields  fieldScratch      // scratch for add: the folded texts
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

// add appends id, greater than every id in l, and its count; expect is
// as reserve takes it.
func (l *postingList) add(id uint32, units uint32, expect float64) {
	l.data = reserve(l.data, 2*binary.MaxVarintLen32, expect)
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

		firstNames: make(map[string][]uint32),
	}
}

func (x *wordIndex) ids() *idTable            { return &x.idTable }
func (x *wordIndex) idOf(e *Entity) *uint32   { return &e.wid }
func (x *wordIndex) setExpect(expect float64) { x.expect = expect }

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
		for k, ids := range p.firstNames {
			x.firstNames[k] = append(x.firstNames[k], ids...)
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
	x.byID = append(reserve(x.byID, 1, x.expect), nil)
	x.docLen = append(reserve(x.docLen, 1, x.expect), 0)
	x.post(g, e, id)
}

// post indexes e as id, a slot of byID that is free.
func (x *wordIndex) post(g *Graph, e *Entity, id uint32) {
	clear(x.counts)
	length := uint32(0)
	g.forEachField(e, &x.fields, func(text string, weight uint32, repeated bool) {
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
		x.lists[t].add(id, c, x.expect)
	}
	if first, ok := firstName(e.Name); ok {
		x.firstNames[first] = append(x.firstNames[first], id)
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
// entities (types and relation types), which are worth caching. The texts
// are folded into sc, so they are valid only until f returns.
func (g *Graph) forEachField(e *Entity, sc *fieldScratch, f func(text string, weight uint32, repeated bool)) {
	st := sc.own.text(e)
	f(st.name.nfkc, weightName, false)
	f(st.entityType.nfkc, weightType, true)
	for _, o := range st.observations {
		f(o.nfkc, weightObservation, false)
	}
	context := func(r *Relation, other string) {
		sc.context.buf = sc.context.buf[:0]
		f(sc.context.foldText(r.RelationType), weightContext, true)
		if o := g.byName[other]; o != nil {
			f(sc.context.foldText(o.Name), weightContext, false)
			f(sc.context.foldText(o.EntityType), weightContext, true)
		} else {
			f(sc.context.foldText(other), weightContext, false)
		}
	}
	for _, r := range g.outOf(e.Name) {
		context(r, r.To)
	}
	for _, r := range g.inOf(e.Name) {
		context(r, r.From)
	}
	var fields entryFields
	g.sequenceNeighbours(e, func(n *Entity) {
		fields.of(st)
		for _, o := range sc.neighbour.text(n).observations {
			if !fields.has(o.nfkc) {
				f(o.nfkc, weightSequence, false)
			}
		}
	})
}

// fieldScratch is what forEachField folds into, kept by the word index
// from one entity to the next.
type fieldScratch struct {
	own, neighbour foldScratch
	context        folder
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
	x.lists = append(reserve(x.lists, 1, x.expect), postingList{})
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
	add := func(term string, id uint32) {
		if _, seen := q.idf[term]; !seen {
			q.terms = append(q.terms, strings.Clone(term))
			q.ids = append(q.ids, id)
			q.idf[term] = x.idf(x.docFreq(id))
		}
	}
	text := query
	if hasPrefixWord(query) {
		// A prefix word stands for the words it begins; the others are
		// read as usual.
		var rest []string
		for _, w := range strings.Fields(query) {
			if p, ok := prefixWord(w); ok {
				q.words = append(q.words, folded{p, p})
				terms, ids := x.prefixTerms(p)
				for i, t := range terms {
					add(t, ids[i])
				}
				continue
			}
			q.words = append(q.words, newFolded(w))
			rest = append(rest, w)
		}
		text = strings.Join(rest, " ")
	} else {
		for _, w := range strings.Fields(query) {
			q.words = append(q.words, newFolded(w))
		}
	}
	forEachToken(Fold(text), func(tok string, word bool) {
		if term, id, ok := x.lookupToken(tok, word); ok {
			add(term, id)
		}
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
