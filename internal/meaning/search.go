package meaning

import (
	"container/heap"
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

// fuseDepth is how many of each ranking's best are fused, and rrfK the
// constant of reciprocal rank fusion (the usual 60: a hit's place counts,
// its raw score does not, so BM25 and cosine need no common scale).
const (
	fuseDepth = 50
	rrfK      = 60
)

// Search ranks g's entities for query by words and by the similarity of
// their texts' vectors to q: the entities matching the whole query come
// first, as graph.SearchRanked gives them; the rest, up to limit, are the
// best by reciprocal rank fusion of the word ranking and the similarity
// ranking (an entity's similarity is that of its closest text).
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
		res.Hits = append(res.Hits, ix.fuse(g, words, q, want)...)
	}
	ents := make([]*graph.Entity, len(res.Hits))
	for i, h := range res.Hits {
		ents[i] = h.Entity
	}
	res.Relations = g.Touching(ents)
	return res
}

// fuse returns the want best of the word ranking's partial matches and
// the entities closest in meaning, by reciprocal rank fusion.
func (ix *Index) fuse(g *graph.Graph, words graph.Ranked, q Query, want int) []Hit {
	type fused struct {
		hit   Hit
		score float64
		order int
	}
	byEntity := make(map[*graph.Entity]*fused)
	var all []*fused
	for i := words.Exact; i < len(words.Hits); i++ {
		f := &fused{hit: Hit{Entity: words.Hits[i].Entity, Word: &words.Hits[i]}, score: 1.0 / float64(rrfK+i-words.Exact+1), order: len(all)}
		byEntity[f.hit.Entity] = f
		all = append(all, f)
	}
	isExact := make(map[*graph.Entity]bool, words.Exact)
	for _, h := range words.Hits[:words.Exact] {
		isExact[h.Entity] = true
	}
	for rank, n := range ix.nearest(g, q, isExact) {
		f := byEntity[n.e]
		if f == nil {
			f = &fused{hit: Hit{Entity: n.e}, order: len(all)}
			byEntity[n.e] = f
			all = append(all, f)
		}
		f.score += 1.0 / float64(rrfK+rank+1)
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
// those in skip, best first (ties in graph order). It compares q with
// every text's vector, and looks up in g only the entities that would be
// among the best so far.
func (ix *Index) nearest(g *graph.Graph, q Query, skip map[*graph.Entity]bool) []near {
	top := make(nearHeap, 0, fuseDepth)
	ix.mu.RLock()
	for name, ks := range ix.entities {
		best, found := float32(0), false
		for _, k := range ks {
			if v, ok := ix.vectors[k]; ok {
				s := cosine(q.v, v)
				if !found || s > best {
					best, found = s, true
				}
			}
		}
		if !found || len(top) == fuseDepth && best < top[0].sim {
			continue
		}
		e := g.Entity(name)
		if e == nil || skip[e] {
			continue
		}
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
	return top
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

