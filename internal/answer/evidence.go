package answer

import (
	"slices"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Evidence chosen across the whole answer (docs/design.md §8): a search
// answer shows, of all its hits together, the observations that best match
// the query, each under its entity, rather than each hit's best few. A
// person with three hundred facts ranked second otherwise fills half of the
// answer's first few thousand bytes with facts that share one word with the
// question, while the first hit's eleventh-best fact, the one asked about,
// is left out.
//
// Each matching observation of a hit weighs its entity's score scaled by
// how well it matches against the entity's best match, so an entity's best
// observation weighs what the entity does, and the entities stay in the
// order of their best observations, the ranking's order. The answer shows
// HitObservations per hit in all (at least one of each hit's), the heaviest
// first; what budget is left after every matching observation goes to the
// others, in the order of the hits, up to HitObservations for one entity.
// Every other observation is counted in omittedObservations.

// evidenceHits bounds the hits whose observations are chosen together: a
// search's limit at most, but a search that matches the whole query can
// have thousands of hits, and each of them past this one is laid out on
// its own (Hit), its observations weighed only when a page shows it.
const evidenceHits = 100

// Hits lays out the hits of a search, in their order. A hit holding the
// whole query in one field (Whole) is shown whole, its matching
// observations first, and takes nothing from the others' budget.
func Hits(hits []graph.Hit) []View {
	var rest []View
	if n := evidenceHitsIn(hits); n < len(hits) {
		rest = make([]View, 0, len(hits)-n)
		for _, h := range hits[n:] {
			rest = append(rest, Hit(h))
		}
		hits = hits[:n]
	}
	return append(chosen(hits), rest...)
}

// evidenceHitsIn returns how many leading hits hold the first evidenceHits
// that are not Whole.
func evidenceHitsIn(hits []graph.Hit) int {
	n := 0
	for i, h := range hits {
		if !h.Whole {
			if n == evidenceHits {
				return i
			}
			n++
		}
	}
	return len(hits)
}

// chosen lays out hits with their observations chosen together.
func chosen(hits []graph.Hit) []View {
	views := make([]View, len(hits))
	matches := make([][]graph.Match, len(hits))
	var all []weighedMatch
	budget := 0
	for i, h := range hits {
		views[i] = View{Entity: h.Entity}
		if h.Whole {
			views[i].First = h.Matched
			continue
		}
		ms := h.Matches()
		matches[i] = ms
		budget += HitObservations
		for r, w := range matchWeights(h.Score, ms) {
			all = append(all, weighedMatch{i, r, w})
		}
	}
	shown := make([]int, len(hits)) // observations chosen per hit
	for i, h := range hits {
		if !h.Whole && len(h.Entity.Observations) > 0 {
			shown[i] = 1 // each hit shows its best observation
			budget--
		}
	}
	slices.SortStableFunc(all, byWeight)
	budget = takeMatches(all, shown, budget)
	for i, h := range hits {
		if h.Whole {
			continue
		}
		if shown[i] >= len(matches[i]) { // every match shown: the rest may follow
			more := min(budget, max(0, HitObservations-shown[i]), len(h.Entity.Observations)-shown[i])
			shown[i] += more
			budget -= more
		}
		ms := matches[i]
		views[i].First = func() []int { return matchIndexes(ms) }
		views[i].Most = max(1, shown[i])
	}
	return views
}

// weighedMatch is one match of one hit, weighed against all the others.
type weighedMatch struct {
	hit, rank int // rank: the place among the hit's matches
	weight    float64
}

// byWeight orders matches heaviest first, and of equal weight by their
// hit's place.
func byWeight(a, b weighedMatch) int {
	if a.weight != b.weight {
		if a.weight > b.weight {
			return -1
		}
		return 1
	}
	return a.hit - b.hit
}

// takeMatches spends budget on the matches all, heaviest first, each
// hit's in their order: shown counts the observations chosen per hit. It
// returns what is left of the budget.
func takeMatches(all []weighedMatch, shown []int, budget int) int {
	for _, w := range all {
		if budget <= 0 {
			break
		}
		if w.rank > 0 && w.rank == shown[w.hit] { // a hit's matches are taken in its order
			shown[w.hit]++
			budget--
		}
	}
	return budget
}

// matchWeights returns the weight of each of a hit's matches, in their
// order: the hit's score for the best, less for the others in proportion to
// their own score, never more than the one before.
func matchWeights(score float64, ms []graph.Match) []float64 {
	if len(ms) == 0 {
		return nil
	}
	top := ms[0].Score
	ws := make([]float64, len(ms))
	for r, m := range ms {
		w := score
		if top > 0 && !m.Whole {
			w = score * m.Score / top
		}
		if m.Score == 0 && !m.Whole {
			w = score * 1e-3 // a word of the query as a fragment, no weight of its own
		}
		if r > 0 {
			w = min(w, ws[r-1])
		}
		ws[r] = w
	}
	return ws
}

func matchIndexes(ms []graph.Match) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Index
	}
	return out
}

// HitRelations is how many relations a search answer shows per hit, on
// average: the most relevant (graph.Ranked.RelevantRelations). A hub
// related to thousands of entities otherwise fills the answer with its
// relations, part after part.
const HitRelations = 5

// omittedRelationsNote is the note of a search answer that leaves
// relations out.
const omittedRelationsNote = "%d more relations of these entities are left out (omittedRelations): these are the most relevant; open_nodes with their names and depth 1 shows them all."

// SearchRelations returns the relations a search answer shows of found's,
// those keep reports true for (all when keep is nil): all of them, in
// graph order, when there are at most HitRelations per hit; else
// HitRelations per hit, the most relevant first (RelevantRelations), and
// how many it leaves out. Only an answer that leaves relations out pays
// for weighing them.
func SearchRelations(found graph.Ranked, keep func(*graph.Relation) bool) (shown []*graph.Relation, omitted int) {
	filter := func(rels []*graph.Relation) []*graph.Relation {
		if keep == nil {
			return rels
		}
		return slices.DeleteFunc(slices.Clone(rels), func(r *graph.Relation) bool { return !keep(r) })
	}
	rels := filter(found.Relations)
	budget := HitRelations * len(found.Hits)
	if len(rels) <= budget {
		return rels, 0
	}
	rels = filter(found.RelevantRelations())
	return rels[:budget], len(rels) - budget
}
