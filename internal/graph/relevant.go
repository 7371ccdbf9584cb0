package graph

import (
	"cmp"
	"slices"
)

// relevanceHits bounds the hits whose relations are weighed by the words
// they share with the query: the others are ordered by where their hit
// ranks only, so an answer of thousands of hits costs no folding of every
// relation's text.
const relevanceHits = 100

// RelevantRelations returns the answer's relations, the most relevant
// first: those between two hits, then those whose type and other end share
// the most weight of the query's words, then those of the better-ranked
// hit; ties in graph order. A search answer shows the first few of them
// (a hub related to thousands of entities would otherwise fill it).
func (r Ranked) RelevantRelations() []*Relation {
	if len(r.Relations) == 0 {
		return nil
	}
	rank := make(map[string]int, len(r.Hits))
	var q *rankQuery
	for i, h := range r.Hits {
		if _, ok := rank[h.Entity.Name]; !ok {
			rank[h.Entity.Name] = i
		}
		if q == nil {
			q = h.q
		}
	}
	ws := make([]weighedRelation, len(r.Relations))
	seen := make(map[string]bool)
	for i, rel := range r.Relations {
		ws[i] = weigh(rel, i, rank, q, seen)
	}
	slices.SortFunc(ws, moreRelevant)
	out := make([]*Relation, len(ws))
	for i, w := range ws {
		out[i] = w.r
	}
	return out
}

// weighedRelation is a relation of an answer with what orders it.
type weighedRelation struct {
	r     *Relation
	both  bool    // both ends are hits
	match float64 // the weight of the query's words its type and other end hold
	best  int     // the better rank of its ends among the hits
	order int     // its place among the answer's relations
}

// weigh weighs rel, the order-th relation of an answer whose hits rank as
// rank says, against q (nil: no words); seen is scratch.
func weigh(rel *Relation, order int, rank map[string]int, q *rankQuery, seen map[string]bool) weighedRelation {
	from, isFrom := rank[rel.From]
	to, isTo := rank[rel.To]
	w := weighedRelation{r: rel, both: isFrom && isTo, order: order}
	other := rel.To
	switch {
	case isFrom && isTo:
		w.best = min(from, to)
	case isFrom:
		w.best = from
	default:
		w.best, other = to, rel.From
	}
	if q != nil && w.best < relevanceHits {
		w.match = q.match(newFolded(rel.RelationType+" "+other), seen).Score
	}
	return w
}

// moreRelevant orders weighed relations, the most relevant first.
func moreRelevant(a, b weighedRelation) int {
	switch {
	case a.both != b.both:
		if a.both {
			return -1
		}
		return 1
	case a.match != b.match:
		return cmp.Compare(b.match, a.match)
	case a.best != b.best:
		return a.best - b.best
	}
	return a.order - b.order
}
