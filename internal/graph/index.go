package graph

import (
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"
)

// searchIndex maps every three-byte sequence of the entities' folded text to
// the entities holding it, so a search verifies a few candidates instead of
// scanning the graph. Any entity containing a query contains all of the
// query's trigrams, so the candidates are a superset of the matches and the
// verification (searchText.rank) decides.
//
// Entities get a fresh id each time they are (re)indexed, so posting lists
// stay sorted by appending; the old id goes stale. Mutations only record what
// changed (pending); the next search brings the index up to date, and
// rebuilds it once stale ids outnumber live ones.
type searchIndex struct {
	byID     []*Entity // nil: stale id
	postings map[uint32][]uint32
	stale    int
	pending  []*Entity // added or changed since the last search
}

// rebuildSlack is how many stale ids beyond half the index are tolerated
// before a rebuild; a variable so tests can force rebuilds.
var rebuildSlack = 1024

// minIndexedQuery is the shortest query (in bytes of folded text) the index
// can answer; shorter ones scan.
const minIndexedQuery = 3

func trigram(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

// entityAdded and entityChanged keep the index in step with the graph; they
// run under the caller's exclusive access, so they only record.
func (g *Graph) entityAdded(e *Entity) {
	if g.idx != nil {
		g.idx.pending = append(g.idx.pending, e)
	}
	if g.words != nil {
		g.wordsChanged(e)
		// Relations loaded before their end existed now have that end's
		// type as context.
		for _, r := range g.out[e.Name] {
			g.wordsChanged(g.byName[r.To])
		}
		for _, r := range g.in[e.Name] {
			g.wordsChanged(g.byName[r.From])
		}
		g.adjacentChanged(e)
	}
}

// adjacentChanged records that the entities next to e in graph order may
// hold other text of e's now (see isEntry): e was added, changed or is
// being removed (then they become each other's neighbours).
func (g *Graph) adjacentChanged(e *Entity) {
	if g.words != nil {
		g.adjacent(e, g.wordsChanged)
	}
}

func (g *Graph) entityChanged(e *Entity) {
	e.touch()
	g.version++
	if g.idx != nil {
		g.idx.forget(e)
		g.idx.pending = append(g.idx.pending, e)
	}
	g.wordsChanged(e)
	g.adjacentChanged(e)
}

// entityRemoved runs while e is still in g.entities, so its neighbours
// can be found.
func (g *Graph) entityRemoved(e *Entity) {
	if g.idx != nil {
		g.idx.forget(e)
	}
	if g.words != nil {
		g.words.forget(e)
		g.adjacentChanged(e)
	}
}

func (x *searchIndex) forget(e *Entity) {
	if e.sid != 0 {
		x.byID[e.sid] = nil
		e.sid = 0
		x.stale++
	}
}

// index brings the index up to date; it runs under searchMu.
func (g *Graph) index() *searchIndex {
	x := g.idx
	if x == nil || x.stale > len(x.byID)/2+rebuildSlack {
		x = g.buildIndex()
		g.idx = x
		return x
	}
	for _, e := range x.pending {
		if e.sid == 0 && g.byName[e.Name] == e {
			x.add(e)
		}
	}
	x.pending = nil
	return x
}

// parallelBuildMin is the graph size from which a full build uses every
// core; a variable so tests can exercise the parallel build on small graphs.
var parallelBuildMin = 8192

// buildIndex indexes every entity, entity i as id i+1. Large graphs are cut
// into one part per core; each part posts its ids into a map of its own, and
// the parts' lists are joined in order, so every list stays sorted.
func (g *Graph) buildIndex() *searchIndex {
	n := len(g.entities)
	x := &searchIndex{byID: make([]*Entity, n+1)}
	parts := 1
	if n >= parallelBuildMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	partial := make([]map[uint32][]uint32, parts)
	size := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			m := make(map[uint32][]uint32)
			for i := p * size; i < min(n, (p+1)*size); i++ {
				e, id := g.entities[i], uint32(i+1)
				x.byID[id] = e
				e.sid = id
				postEntity(m, id, e)
			}
			partial[p] = m
		})
	}
	wg.Wait()
	x.postings = partial[0]
	for _, m := range partial[1:] {
		for t, ids := range m {
			x.postings[t] = append(x.postings[t], ids...)
		}
	}
	// Appending left up to half of each list unused; a full build is the
	// moment to give that memory back.
	for t, ids := range x.postings {
		if cap(ids)-len(ids) > 4 {
			x.postings[t] = slices.Clip(slices.Clone(ids))
		}
	}
	return x
}

func (x *searchIndex) add(e *Entity) {
	id := uint32(len(x.byID))
	x.byID = append(x.byID, e)
	e.sid = id
	postEntity(x.postings, id, e)
}

// postEntity posts id under the trigrams of every folded text of e.
func postEntity(postings map[uint32][]uint32, id uint32, e *Entity) {
	st := e.searchText()
	postText(postings, id, st.name)
	postText(postings, id, st.entityType)
	for _, o := range st.observations {
		postText(postings, id, o)
	}
}

func postText(postings map[uint32][]uint32, id uint32, f folded) {
	postString(postings, id, f.nfkc)
	if f.plain != f.nfkc {
		postString(postings, id, f.plain)
	}
}

// postString posts id under every trigram of s that starts a character: a
// match of valid UTF-8 text can only start at a character, so the others
// would add nothing. Ids only grow, so a list already ending in id has it.
func postString(postings map[uint32][]uint32, id uint32, s string) {
	for i := 0; i+3 <= len(s); i++ {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		t := trigram(s, i)
		p := postings[t]
		if len(p) == 0 || p[len(p)-1] != id {
			postings[t] = append(p, id)
		}
	}
}

// candidates returns the ids of entities holding every trigram of s.
func (x *searchIndex) candidates(s string) []uint32 {
	var lists [][]uint32
	for i := 0; i+3 <= len(s); i++ {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		p := x.postings[trigram(s, i)]
		if len(p) == 0 {
			return nil
		}
		lists = append(lists, p)
	}
	slices.SortFunc(lists, func(a, b []uint32) int { return len(a) - len(b) })
	out := slices.Clone(lists[0])
	for _, l := range lists[1:] {
		out = intersect(out, l)
		if len(out) == 0 {
			break
		}
	}
	return out
}

// candidatesFolded: entities that may contain f in either folded form.
func (x *searchIndex) candidatesFolded(f folded) []uint32 {
	c := x.candidates(f.nfkc)
	if f.plain != f.nfkc {
		c = union(c, x.candidates(f.plain))
	}
	return c
}

// intersect keeps the ids of a (sorted) that are in b (sorted), in place.
func intersect(a, b []uint32) []uint32 {
	out := a[:0]
	j := 0
	for _, v := range a {
		// b is usually much longer: gallop with a binary search.
		k, found := slices.BinarySearch(b[j:], v)
		j += k
		if found {
			out = append(out, v)
		}
		if j >= len(b) {
			break
		}
	}
	return out
}

func union(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
