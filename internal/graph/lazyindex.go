package graph

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Both search indexes, the trigram index behind Search (index.go) and
// the word index behind SearchRanked (rank.go), live the same life, kept
// here once:
//
//   - The first search that needs an index builds it from the whole graph,
//     entity i as id i+1 (id 0 means "not indexed").
//   - A write only records. Each entity whose indexed text changed loses its
//     id (the id goes stale) and waits in pending. Writes run under the
//     caller's exclusive access and do no indexing work.
//   - The next search indexes the pending entities still in the graph under
//     fresh ids, after every id given so far, so posting lists stay sorted
//     by appending.
//   - Once stale ids outnumber live ones, that search rebuilds the index
//     instead; and when writes with no search between them record more
//     entities than the index holds, the index is dropped and the next
//     search builds it afresh, which costs less than the records.
//
// What counts as a change is each index's own: the trigram index holds an
// entity's own text, the word index also its context (relations and the
// entries next to it), so the graph's hooks (entityAdded and the others
// below) say which entities changed for which index. Whatever the writes,
// the index a search uses holds what a fresh build would:
// TestSearchIndexesIncremental checks both.

// rebuildSlack is how many stale ids beyond half an index are tolerated
// before a rebuild, and how many pending entities beyond twice its ids before
// it is dropped; a variable so tests can force both.
var rebuildSlack = 1024

// idTable is the part of an index the life cycle keeps: which entity holds
// each id, and what changed since the last search.
type idTable struct {
	byID    []*Entity // by id; nil: a stale id (id 0 is never given)
	stale   int       // how many ids of byID are stale
	pending []*Entity // to (re)index at the next search
}

// release makes the id that *id holds stale and zeroes *id. It returns the
// id released, or 0 if *id held none.
func (t *idTable) release(id *uint32) uint32 {
	old := *id
	if old != 0 {
		t.byID[old] = nil
		t.stale++
		*id = 0
	}
	return old
}

// incrementalIndex is an index the life cycle keeps up to date.
type incrementalIndex interface {
	ids() *idTable
	// idOf returns where e keeps its id in this index.
	idOf(e *Entity) *uint32
	// forget makes e's id stale, as if e were not indexed.
	forget(e *Entity)
	// add indexes e, which has no id, under the next id.
	add(g *Graph, e *Entity)
	// setExpect says, while the index is built a step at a time, how many
	// entities it will hold over those it holds (see reserve); 0 once it
	// is whole.
	setExpect(expect float64)
}

// lazyIndex holds an index of type *T, built by the first search that
// needs it or a step at a time in the background (step); the zero value
// holds none.
type lazyIndex[T any, X interface {
	*T
	incrementalIndex
}] struct {
	x X // nil: not built, or dropped
	// building is an index being built a step at a time, while x is nil:
	// it holds the entities of the graph up to the one created as next
	// (Entity.seq), and records changes as a built index does.
	building X
	next     uint64
	empty    func() X // makes an index that holds nothing
}

// built reports whether an index is held, whole or in the making: whether
// changes must be recorded.
func (l *lazyIndex[T, X]) built() bool { return l.x != nil || l.building != nil }

// held returns the index changes go to, or nil.
func (l *lazyIndex[T, X]) held() X {
	if l.x != nil {
		return l.x
	}
	return l.building
}

// changed records that e's indexed text changed, or that e is new.
func (l *lazyIndex[T, X]) changed(e *Entity) {
	x := l.held()
	if x == nil || e == nil {
		return
	}
	x.forget(e)
	t := x.ids()
	t.pending = append(t.pending, e)
	if len(t.pending) > 2*len(t.byID)+rebuildSlack {
		l.x, l.building = nil, nil
	}
}

// removed records that e is leaving the graph.
func (l *lazyIndex[T, X]) removed(e *Entity) {
	if x := l.held(); x != nil {
		x.forget(e)
	}
}

// step indexes up to n more entities, fewer if yield reports true, of g into the index being built,
// starting one (made by empty) if none is held, and reports whether the
// index is whole. Writes between steps are recorded as a whole index
// records them: an entity indexed and then changed waits in pending, one
// not reached yet is indexed as it is when reached. It runs under
// searchMu, while no mutation runs.
func (l *lazyIndex[T, X]) step(g *Graph, n int, yield func() bool) bool {
	if l.x != nil {
		return true
	}
	if l.building == nil {
		l.building, l.next = l.empty(), 0
		// Ids left by an index since dropped mean nothing in this one.
		for _, e := range g.entities {
			*l.building.idOf(e) = 0
		}
	}
	// g.entities is in creation order, and seq grows with it.
	i, _ := slices.BinarySearchFunc(g.entities, l.next+1, func(e *Entity, seq uint64) int { return cmp.Compare(e.seq, seq) })
	for end := min(len(g.entities), i+n); i < end && !yield(); i++ {
		e := g.entities[i]
		l.building.setExpect(float64(len(g.entities)) / float64(i+1))
		l.building.add(g, e)
		l.next = e.seq
	}
	if i < len(g.entities) {
		return false
	}
	l.building.setExpect(0)
	l.x, l.building = l.building, nil
	return true
}

// upToDate returns the index brought up to date with g, building it with
// build when none is held or too many of its ids are stale; an index being
// built a step at a time is finished instead, which takes less than a
// build. It runs under searchMu.
func (l *lazyIndex[T, X]) upToDate(g *Graph, build func() X) X {
	if l.x == nil && l.building != nil {
		l.step(g, len(g.entities), never)
	}
	if l.x == nil || l.x.ids().stale > len(l.x.ids().byID)/2+rebuildSlack {
		l.x = build()
		return l.x
	}
	t := l.x.ids()
	for _, e := range t.pending {
		// An entity recorded twice is indexed once; one removed since, or
		// replaced by another of its name, not at all.
		if *l.x.idOf(e) == 0 && g.byName[e.Name] == e {
			l.x.add(g, e)
		}
	}
	t.pending = nil
	return l.x
}

// IndexStep does a step of building the search indexes in the background:
// it indexes up to n entities into the trigram index and as many into the
// word index, side by side on two goroutines, and reports whether both
// are whole. It runs as a read (any number of reads may run beside it, no
// mutation) and is safe beside searches; a search that needs an index
// being built finishes it, which takes less than building it whole (a
// search through ViewIndexed waits for the steps instead, outside the
// store's lock). A caller that runs steps until done, giving writers
// their turn between steps, gets both indexes built without a write or a
// lookup waiting for more than a step (BuildIndexes).
//
// A search that arrives during a step does not wait for it: the step ends
// at the next entity and leaves the search its turn.
func (g *Graph) IndexStep(n int) (done bool) { return g.indexStep(n, never) }

// indexStep is IndexStep, ending its step at the next entity also when
// wanted reports true.
func (g *Graph) indexStep(n int, wanted func() bool) (done bool) {
	g.searchMu.mu.Lock()
	defer g.searchMu.mu.Unlock()
	yield := func() bool { return g.searchMu.wanted() || wanted() }
	if g.idx.x != nil {
		return g.words.step(g, n, yield)
	}
	// The two indexes are built side by side, one core each: they share
	// nothing but the graph, which a step only reads.
	var trigrams bool
	var wg sync.WaitGroup
	wg.Go(func() { trigrams = g.idx.step(g, n, yield) })
	words := g.words.step(g, n, yield)
	wg.Wait()
	return trigrams && words
}

func never() bool { return false }

// searchLock is the mutex of the searches (Graph.searchMu), which counts
// the searches waiting for it, so that a background step gives way to them.
type searchLock struct {
	mu      sync.Mutex
	waiting atomic.Int32
}

func (l *searchLock) Lock() {
	l.waiting.Add(1)
	l.mu.Lock()
	l.waiting.Add(-1)
}

func (l *searchLock) Unlock() { l.mu.Unlock() }

// wanted reports whether a search waits for the lock.
func (l *searchLock) wanted() bool { return l.waiting.Load() > 0 }

// The hooks below keep both indexes in step with the graph; they run under
// the caller's exclusive access, so they only record. The trigram index
// changes with an entity's own text; the word index also with its
// relations' other ends and the entities next to it.

// entityAdded records that e is new.
func (g *Graph) entityAdded(e *Entity) {
	g.idx.changed(e)
	if g.words.built() {
		g.words.changed(e)
		// Relations loaded before their end existed now have that end's
		// type as context.
		for _, r := range g.outOf(e.Name) {
			g.words.changed(g.byName[r.To])
		}
		for _, r := range g.inOf(e.Name) {
			g.words.changed(g.byName[r.From])
		}
		g.adjacentChanged(e)
	}
}

// adjacentChanged records that the entities next to e in graph order may
// hold other text of e's now (see isEntry): e was added, changed or is
// being removed (then they become each other's neighbours).
func (g *Graph) adjacentChanged(e *Entity) {
	if g.words.built() {
		g.adjacent(e, g.words.changed)
	}
}

// entityChanged records that e's name, type or observations changed.
func (g *Graph) entityChanged(e *Entity) {
	e.touch()
	g.version++
	e.rev = g.version
	g.idx.changed(e)
	g.words.changed(e)
	g.adjacentChanged(e)
}

// entityRemoved runs while e is still in g.entities, so its neighbours
// can be found.
func (g *Graph) entityRemoved(e *Entity) {
	g.idx.removed(e)
	if g.words.built() {
		g.words.removed(e)
		g.adjacentChanged(e)
	}
}

// relationChanged records that r was added or removed: both ends' context
// changed.
func (g *Graph) relationChanged(r *Relation) {
	if g.words.built() {
		g.words.changed(g.byName[r.From])
		g.words.changed(g.byName[r.To])
	}
}
