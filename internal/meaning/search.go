package meaning

import (
	"container/heap"
	"math"
	"slices"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Hit is one entity of a search by words and meaning.
type Hit struct {
	Entity *graph.Entity
	// Word is the word ranking's hit, nil for an entity found by meaning
	// alone.
	Word *graph.Hit
	// Closest are the indexes of the entity's observations, most similar
	// to the query first, for an entity found by meaning alone.
	Closest []int
}

// Result is a search by words and meaning. Like graph.Ranked it points
// into the graph.
type Result struct {
	Hits      []Hit
	Exact     int // leading hits that match the whole query (graph.Ranked)
	Relations []*graph.Relation
}

// fuseDepth is how many of each ranking's best are fused, rrfK the
// constant of reciprocal rank fusion (the usual 60), and fullShare the
// share of a query's information from which a word hit counts fully.
const (
	fuseDepth = 50
	rrfK      = 60
	fullShare = 0.1
)

// minSimilarity is the least cosine an entity found by meaning alone must
// have: on the stand-in model (internal/meaning/meaningtest) texts that
// share no word and no word alike score 0, and one shared word among
// a dozen about 0.1; see nearest for the floor that follows each query.
const minSimilarity = 0.1

// Search ranks g's entities for query by words and by the similarity of
// their texts' vectors to q: the entities matching the whole query come
// first, as graph.SearchRanked gives them; the rest, up to limit, are the
// best by fusing what the word ranking knows of them with what their
// similarity says (fuse; an entity's similarity is that of its closest
// text).
func (ix *Index) Search(g *graph.Graph, query string, q Query, limit int) Result {
	if limit <= 0 {
		limit = graph.DefaultSearchLimit
	}
	words := g.SearchRanked(query, max(limit, fuseDepth))
	exact := words.Exact
	res := Result{Exact: exact}
	for i := range words.Hits[:exact] {
		res.Hits = append(res.Hits, Hit{Entity: words.Hits[i].Entity, Word: &words.Hits[i]})
	}
	if want := limit - exact; want > 0 {
		res.Hits = append(res.Hits, ix.fuse(g, g.Information(query), words, q, want)...)
	}
	ents := make([]*graph.Entity, len(res.Hits))
	for i, h := range res.Hits {
		ents[i] = h.Entity
	}
	res.Relations = g.Touching(ents)
	return res
}

// fuse returns the want best of the word ranking's partial matches and
// the entities closest in meaning. Each ranking counts by what it knows,
// from 0 to 1, and the two add up:
//
//   - words, the share of the query's information (info,
//     graph.Graph.Information) that the entity's words hold: a word every
//     entity has tells almost nothing, so 30 entities named "Person NN"
//     matching "Which person is into music?" by "person" alone count
//     about 0.004 each, where one holding the query's rare words counts
//     near 1;
//   - meaning, the entity's similarity over the best one's, for those at
//     or above the query's floor (nearest), 0 below it.
//
// Ties keep the word ranking's order, then the similarity's.
func (ix *Index) fuse(g *graph.Graph, info float64, words graph.Ranked, q Query, want int) []Hit {
	type fused struct {
		hit   Hit
		score float64
		order int
	}
	byEntity := make(map[*graph.Entity]*fused)
	var all []*fused
	for i := words.Exact; i < len(words.Hits); i++ {
		f := &fused{hit: Hit{Entity: words.Hits[i].Entity, Word: &words.Hits[i]}, order: len(all)}
		if info > 0 {
			f.score = min(1, words.Hits[i].Score/info/fullShare) / float64(rrfK+i-words.Exact+1)
		}
		byEntity[f.hit.Entity] = f
		all = append(all, f)
	}
	isExact := make(map[*graph.Entity]bool, words.Exact)
	for _, h := range words.Hits[:words.Exact] {
		isExact[h.Entity] = true
	}
	nearest, crowd := ix.nearest(g, q, isExact)
	for rank, n := range nearest {
		w := crowd.weight(n.sim)
		if w == 0 {
			break
		}
		f := byEntity[n.e]
		if f == nil {
			f = &fused{hit: Hit{Entity: n.e}, order: len(all)}
			byEntity[n.e] = f
			all = append(all, f)
		}
		f.score += w / float64(rrfK+rank+1)
	}
	slices.SortStableFunc(all, func(a, b *fused) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.order - b.order
	})
	all = all[:min(want, len(all))]
	out := make([]Hit, len(all))
	for i, f := range all {
		out[i] = f.hit
		if f.hit.Word == nil {
			out[i].Closest = ix.closest(g, f.hit.Entity, q)
		}
	}
	return out
}

type near struct {
	e   *graph.Entity
	sim float32
}

// nearest returns the fuseDepth entities of g closest to q, skipping
// those in skip, best first (ties in graph order), and how alike to q the
// other entities are as a crowd. It compares q with every text's vector,
// and looks up in g only the entities that would be among the best so
// far.
func (ix *Index) nearest(g *graph.Graph, q Query, skip map[*graph.Entity]bool) ([]near, crowd) {
	top := make(nearHeap, 0, fuseDepth)
	var n, sum, squares float64
	ix.mu.RLock()
	for name, ks := range ix.entities {
		best, found := ix.closestSim(q, ks)
		if !found || len(top) == fuseDepth && best < top[0].sim {
			if found {
				n, sum, squares = n+1, sum+float64(best), squares+float64(best)*float64(best)
			}
			continue
		}
		e := g.Entity(name)
		if e == nil || skip[e] {
			continue
		}
		n, sum, squares = n+1, sum+float64(best), squares+float64(best)*float64(best)
		switch n := (near{e, best}); {
		case len(top) < fuseDepth:
			heap.Push(&top, n)
		case n.better(top[0]):
			top[0] = n
			heap.Fix(&top, 0)
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(top, func(a, b near) int {
		if a.better(b) {
			return -1
		}
		return 1
	})
	var c crowd
	if n > 0 {
		c.mean = sum / n
		c.sd = math.Sqrt(max(0, squares/n-c.mean*c.mean))
	}
	return top, c
}

// closestSim is the similarity to q of the closest of the texts of keys
// ks that have a vector, and whether any has. ix.mu is held.
func (ix *Index) closestSim(q Query, ks []key) (best float32, found bool) {
	for _, k := range ks {
		if v, ok := ix.vectors[k]; ok {
			if s := cosine(q.v, v); !found || s > best {
				best, found = s, true
			}
		}
	}
	return best, found
}

// crowd is the mean similarity to a query of a memory's entities (but
// the whole-query matches), and its standard deviation.
type crowd struct{ mean, sd float64 }

// weight is how much a similarity says, from 0 to 1: 0 below
// minSimilarity or the crowd's mean (nothing is found by meaning there),
// then its distance above the mean in standard deviations, 1 from one
// deviation on. 30 "Person NN" alike to "Which person is into music?" by
// their one word "person" are the crowd, and count little.
func (c crowd) weight(sim float32) float64 {
	s := float64(sim)
	switch {
	case s < minSimilarity || s < c.mean:
		return 0
	case c.sd == 0:
		return 1
	}
	return min(1, (s-c.mean)/c.sd)
}

// better orders the nearest: the more similar first, ties in graph order.
func (n near) better(o near) bool {
	if n.sim != o.sim {
		return n.sim > o.sim
	}
	return graph.CompareOrder(n.e, o.e) < 0
}

// nearHeap keeps the best entities found so far, the least of them first.
type nearHeap []near

func (h nearHeap) Len() int           { return len(h) }
func (h nearHeap) Less(i, j int) bool { return h[j].better(h[i]) }
func (h nearHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nearHeap) Push(x any)        { *h = append(*h, x.(near)) }
func (h *nearHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// closest returns the indexes of e's observations by similarity to q,
// most similar first; those without a vector yet come last.
// The keys of an entity unchanged since the last look are those the look
// kept; only one changed since is hashed again.
func (ix *Index) closest(g *graph.Graph, e *graph.Entity, q Query) []int {
	if len(e.Observations) == 0 {
		return nil
	}
	ix.mu.RLock()
	ks := ix.entities[e.Name]
	if g.ID() != ix.graph || e.Revision() > ix.version || len(ks) != len(e.Observations) {
		ks = nil
	}
	ix.mu.RUnlock()
	if ks == nil {
		model := ix.client.Model()
		for _, t := range texts(e) {
			ks = append(ks, keyOf(model, t))
		}
		ix.hashed.Add(int64(len(ks)))
	}
	sims := make([]float32, len(ks))
	ix.mu.RLock()
	for i, k := range ks {
		sims[i] = -2
		if v, ok := ix.vectors[k]; ok {
			sims[i] = cosine(q.v, v)
		}
	}
	ix.mu.RUnlock()
	out := make([]int, len(ks))
	for i := range out {
		out[i] = i
	}
	slices.SortStableFunc(out, func(a, b int) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return 0
	})
	return out
}
