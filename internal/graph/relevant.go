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
	type weighed struct {
		r     *Relation
		both  bool
		match float64
		best  int
		order int
	}
	ws := make([]weighed, len(r.Relations))
	seen := make(map[string]bool)
	for i, rel := range r.Relations {
		from, isFrom := rank[rel.From]
		to, isTo := rank[rel.To]
		w := weighed{r: rel, both: isFrom && isTo, order: i}
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
		ws[i] = w
	}
	slices.SortFunc(ws, func(a, b weighed) int {
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
	})
	out := make([]*Relation, len(ws))
	for i, w := range ws {
		out[i] = w.r
	}
	return out
}
