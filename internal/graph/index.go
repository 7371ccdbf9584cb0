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
// It lives the life of lazyindex.go: built by the first search, then kept
// up to date by indexing changed entities again under fresh ids.
type searchIndex struct {
	idTable
	postings map[uint32]*trigramList
	expect   float64 // while built a step at a time: see reserve
}

// minIndexedQuery is the shortest query (in bytes of folded text) the index
// can answer; shorter ones scan.
const minIndexedQuery = 3

func trigram(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

func (x *searchIndex) ids() *idTable            { return &x.idTable }
func (x *searchIndex) idOf(e *Entity) *uint32   { return &e.sid }
func (x *searchIndex) setExpect(expect float64) { x.expect = expect }
func (x *searchIndex) forget(e *Entity)         { x.release(&e.sid) }

func newSearchIndex() *searchIndex {
	return &searchIndex{idTable: idTable{byID: []*Entity{nil}}, postings: make(map[uint32]*trigramList)} // id 0 means "not indexed"
}

// index brings the trigram index up to date; it runs under searchMu.
func (g *Graph) index() *searchIndex { return g.idx.upToDate(g, g.buildIndex) }

// parallelBuildMin is the graph size from which a full build uses every
// core; a variable so tests can exercise the parallel build on small graphs.
var parallelBuildMin = 8192

// buildIndex indexes every entity, entity i as id i+1. Large graphs are cut
// into one part per core; each part posts its ids into lists of its own, and
// the parts' lists are joined in order, so every list stays ascending.
func (g *Graph) buildIndex() *searchIndex {
	n := len(g.entities)
	x := &searchIndex{idTable: idTable{byID: make([]*Entity, n+1)}}
	parts := 1
	if n >= parallelBuildMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	partial := make([]map[uint32]*trigramList, parts)
	size := (n + parts - 1) / parts
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			m := make(map[uint32]*trigramList)
			for i := p * size; i < min(n, (p+1)*size); i++ {
				e, id := g.entities[i], uint32(i+1)
				x.byID[id] = e
				e.sid = id
				postEntity(m, id, e, 0)
			}
			partial[p] = m
		})
	}
	wg.Wait()
	x.postings = partial[0]
	for _, m := range partial[1:] {
		for t, l := range m {
			if into := x.postings[t]; into != nil {
				into.join(l)
			} else {
				x.postings[t] = l
			}
		}
		clear(m) // its lists are garbage as soon as they are joined
	}
	// Appending left room at the end of the lists; a full build is the
	// moment to give that memory back.
	for _, l := range x.postings {
		l.clip()
	}
	return x
}

func (x *searchIndex) add(_ *Graph, e *Entity) {
	id := uint32(len(x.byID))
	x.byID = append(reserve(x.byID, 1, x.expect), e)
	e.sid = id
	postEntity(x.postings, id, e, x.expect)
}

// postEntity posts id under the trigrams of every folded text of e. Each
// text is folded into a buffer on the stack, as Entity.rank does: the
// postings keep trigrams, not text.
func postEntity(postings map[uint32]*trigramList, id uint32, e *Entity, expect float64) {
	var scratch [256]byte
	postText(postings, id, foldInto(scratch[:0], e.Name), expect)
	postText(postings, id, foldInto(scratch[:0], e.EntityType), expect)
	for _, o := range e.Observations {
		postText(postings, id, foldInto(scratch[:0], o), expect)
	}
}

func postText(postings map[uint32]*trigramList, id uint32, f folded, expect float64) {
	postString(postings, id, f.nfkc, expect)
	if f.plain != f.nfkc {
		postString(postings, id, f.plain, expect)
	}
}

// postString posts id under every trigram of s that starts a character: a
// match of valid UTF-8 text can only start at a character, so the others
// would add nothing. Ids only grow, so a list already ending in id has it.
func postString(postings map[uint32]*trigramList, id uint32, s string, expect float64) {
	for i := 0; i+3 <= len(s); i++ {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		t := trigram(s, i)
		l := postings[t]
		if l == nil {
			l = &trigramList{}
			postings[t] = l
		}
		l.add(id, expect)
	}
}

// candidates returns the ids of entities holding every trigram of s.
func (x *searchIndex) candidates(s string) []uint32 {
	var lists []*trigramList
	for i := 0; i+3 <= len(s); i++ {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		l := x.postings[trigram(s, i)]
		if l == nil || l.n == 0 {
			return nil
		}
		lists = append(lists, l)
	}
	slices.SortFunc(lists, func(a, b *trigramList) int { return cmpUint32(a.n, b.n) })
	out := lists[0].ids()
	for _, l := range lists[1:] {
		out = l.intersect(out)
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
