// Package graph is the knowledge graph the memory server keeps: entities with
// a type and an ordered list of observations, joined by directed relations,
// and the semantics of the MCP tools over them.
//
// The package is pure: no files, no MCP, no clock. A Graph is indexed by
// entity name and by relation end, so looking up a handful of names costs
// O(answer), not O(graph). Every mutating method validates its whole input
// before it changes anything: a call that fails changes nothing.
//
// What to call:
//
//   - Writes: CreateEntities, CreateRelations, AddObservations,
//     DeleteEntities, DeleteObservations, DeleteRelations (one per tool);
//     storage loads a file with LoadEntity and LoadRelation. A store runs
//     a Write (who writes, and what) with Graph.Write, which stamps it
//     with the time the store hands in and makes its Record (record.go).
//   - Reads return a Selection, which points into the graph (valid until the
//     next mutation) so an answer can be written without copying it: All
//     (read_graph), Open (open_nodes), Neighbours (open_nodes with a depth),
//     Search (search_nodes, the reference's rule) and SearchRanked (Search,
//     then the closest partial matches, with what matched in each; its
//     Ranked.Selection is the same shape). Selection.Snapshot copies a
//     selection for a caller that keeps it past a mutation. The commands'
//     edits (Rename, Merge, Import, ReplaceObservation) are in edit.go.
//
// Search and SearchRanked keep indexes (a trigram index for whole-query
// matches, a word index for ranking) built by the first call that needs
// them and kept up to date by every mutation after that.
//
// SearchRanked ranks by BM25 over each entity's words (rank.go), with these
// rules for questions asked in people's own words:
//
//   - An entity's own text counts most (its name twice, its type and
//     observations once); the names and types of related entities and the
//     relation types count half.
//   - Entries of a log (a chat stored one entity per message, a journal):
//     a run of at least three short entities of one type side by side,
//     named alike but for their digits (msg-0042, msg-0043), each also
//     holds, at half weight, the observations of the entries just before
//     and after it (their text, not their field lines such as "speaker:
//     Priya"), because a reply is about the message before it. The entry
//     after one of the best matches also takes a share of its score, under
//     it; after a follow-up question the entry after the question does, and
//     a short reaction takes none. Entities named by words (people,
//     projects, "Acme offsite 2026") are not entries. See entries.go.
//   - Words are stemmed (English and Russian), with English irregular past
//     forms read as their base (went → go). See words.go and stem.go.
//   - Names in the question: when the question names an entity (its whole
//     name as a run of the question's words, as written or capitalised,
//     "Nadia's" naming Nadia; or the first word of a name of two
//     capitalised words that no other such name begins with, "Alice"
//     naming Alice Chen), it scores 2.25 times as much and the entities
//     related to it 1.5 times, so the one asked about comes first and then
//     what is tied to it. See names.go.
//   - Questions about when ("When did…", "How long ago…", "когда", "いつ"):
//     entities holding a date (a year, a day and month, 2026-03-14) score
//     a fifth more. Dates are shown as stored; none is computed. See
//     dates.go.
//
// A Graph is not safe for concurrent use, except that any number of
// read-only calls (the reads above and the accessors) may run at once while
// no mutation runs.
package graph

import (
	"cmp"
	"slices"
	"sync/atomic"
)

// Entity is a node of the graph. Name is its identity (exact,
// case-sensitive); Observations are distinct facts in the order they were
// added.
type Entity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`

	// Extra holds members of the entity's line in the memory file that this
	// server does not know ("," followed by compact JSON members). The graph
	// never interprets it; it is carried so a rewrite keeps what other tools
	// stored.
	Extra []byte `json:"-"`

	// Created is when the entity was first written, Updated when it last
	// changed (its observations, name or merges); zero is unknown.
	Created Time `json:"-"`
	Updated Time `json:"-"`
	// ObservedAt is nil, or holds when each observation was first written,
	// index for index; a zero entry is unknown. ObservationTime reads it.
	ObservedAt []Time `json:"-"`

	seq    uint64    // creation order
	rev    uint64    // Revision
	sid    uint32    // id in the search index; 0: not indexed
	wid    uint32    // id in the word index; 0: not indexed
	obsSet *obsTable // nil up to obsIndexThreshold observations (a pointer: most entities have none)
	state  *derived
	rels   endLists // the relations from and to it
}

// derived is state computed from an entity that is cleared whenever the
// entity changes: its encoded file line, and whether it holds a date.
type derived struct {
	encoded []byte
	dated   uint8 // 0: not yet known; 1: no date; 2: an observation holds one (see dated)
}

// Graph is the whole knowledge graph. The zero value is not usable; call New.
type Graph struct {
	entities  []*Entity // creation order
	byName    map[string]*Entity
	relations []*Relation // creation order
	relSet    relationSet
	// loose holds the lists of relations of names no entity has (the file
	// may hold relations whose ends do not exist); an entity holds its own
	// (Entity.rels), so a relation's ends cost no map of their own.
	loose   map[string]*endLists
	nextSeq uint64
	// loading: between BeginLoad and EndLoad, which adds the relations
	// from loadedFrom on (loadHashes: the hashes of their triples) to
	// relSet and links them to their ends.
	loading    bool
	loadedFrom int
	loadHashes []uint64
	id         uint64     // ID
	version    uint64     // counts changes
	log        *changeLog // what the write tools change, while tracked
	now        Time       // what writes record (SetNow)

	// searchMu lets searches run beside other readers: they build the
	// indexes and note which entities hold a date (Entity.dated), which
	// only mutations otherwise touch.
	searchMu searchLock
	idx      lazyIndex[searchIndex, *searchIndex] // built by the first search
	words    lazyIndex[wordIndex, *wordIndex]     // built by the first ranked search
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{
		id:     graphs.Add(1),
		byName: make(map[string]*Entity),
		relSet: newRelationSet(),
		idx:    lazyIndex[searchIndex, *searchIndex]{empty: newSearchIndex},
		words:  lazyIndex[wordIndex, *wordIndex]{empty: newWordIndex},
		loose:  make(map[string]*endLists),
	}
}

// Reserve makes room for about entities more entities and relations more
// relations, so loading a file of known size does not grow the graph's
// tables again and again. It changes nothing a caller can see.
func (g *Graph) Reserve(entities, relations int) {
	g.entities = slices.Grow(g.entities, entities)
	g.relations = slices.Grow(g.relations, relations)
	g.loadHashes = slices.Grow(g.loadHashes, relations)
	if len(g.byName) == 0 && entities > 0 {
		g.byName = make(map[string]*Entity, entities)
	}
}

// Len reports the number of entities and relations.
func (g *Graph) Len() (entities, relations int) { return len(g.entities), len(g.relations) }

// graphs gives out graphs' IDs.
var graphs atomic.Uint64

// ID tells graphs apart: no two graphs of the process have the same, so a
// caller that remembers what it saw in a graph (Entity.Revision) knows when
// a store holds another graph (one read again from storage) instead.
func (g *Graph) ID() uint64 { return g.id }

// Revision is the graph's Version when the entity was created or its name,
// type or observations last changed: in one graph (Graph.ID), an entity
// whose revision is at most the Version an earlier look saw has not
// changed since, and one created or changed since has a greater revision.
// A derived copy (Window.Learned) has none (0).
func (e *Entity) Revision() uint64 { return e.rev }

// Version changes whenever the graph changes: callers compare it to learn
// whether a call changed anything.
func (g *Graph) Version() uint64 { return g.version }

// Entity returns the entity with the given name, or nil.
func (g *Graph) Entity(name string) *Entity { return g.byName[name] }

// Entities returns the entities in creation order. The caller must not
// modify the slice or the entities.
func (g *Graph) Entities() []*Entity { return g.entities }

// EntityIndex returns the position of the entity named name in Entities,
// or -1 when there is none, at the cost of a binary search: entities stay
// in the order they were created in (a rename keeps the place).
func (g *Graph) EntityIndex(name string) int {
	e := g.byName[name]
	if e == nil {
		return -1
	}
	i, found := slices.BinarySearchFunc(g.entities, e.seq, func(x *Entity, seq uint64) int { return cmp.Compare(x.seq, seq) })
	if !found {
		return -1
	}
	return i
}

// Relations returns the relations in creation order. The caller must not
// modify the slice or the relations.
func (g *Graph) Relations() []*Relation { return g.relations }

// LoadEntity adds an entity read from storage. A second entity with a name
// already present is merged into the first: the first type stays and the
// observations are united, in order. Repeated observations are stored once.
// Times are kept as e holds them: the first entity's creation time stays,
// the later of the two last changes is kept, and each observation keeps its
// own time. It returns the graph's entity and reports whether e was merged
// into it.
func (g *Graph) LoadEntity(e Entity) (ge *Entity, merged bool) {
	if old := g.byName[e.Name]; old != nil {
		for i, o := range e.Observations {
			old.addObservation(o, e.ObservationTime(i))
		}
		old.Updated = max(old.Updated, e.Updated)
		g.entityChanged(old)
		return old, true
	}
	ne := g.insertEntity(Entity{Name: e.Name, EntityType: e.EntityType, Extra: e.Extra, Created: e.Created, Updated: e.Updated})
	ne.Observations = make([]string, 0, len(e.Observations))
	for i, o := range e.Observations {
		ne.addObservation(o, e.ObservationTime(i))
	}
	return ne, false
}

func (g *Graph) insertEntity(e Entity) *Entity {
	g.version++
	g.nextSeq++
	ne := &Entity{
		Name:         e.Name,
		EntityType:   e.EntityType,
		Observations: make([]string, 0, len(e.Observations)),
		Extra:        e.Extra,
		Created:      e.Created,
		Updated:      e.Updated,
		seq:          g.nextSeq,
		rev:          g.version,
	}
	ne.Observations = append(ne.Observations, e.Observations...)
	if e.HasObservationTimes() {
		ne.ObservedAt = append(make([]Time, 0, len(e.Observations)), e.ObservedAt...)
	}
	g.entities = append(g.entities, ne)
	g.name(ne)
	g.entityAdded(ne)
	return ne
}

// obsIndexThreshold is the number of observations above which an entity
// keeps a set of them, so adding to a long list is not quadratic.
const obsIndexThreshold = 32

func (e *Entity) hasObservation(o string) bool {
	if e.obsSet != nil {
		return e.obsSet.has(e.Observations, o)
	}
	return slices.Contains(e.Observations, o)
}

// addObservation appends o, written at t, unless the entity has it; it
// reports whether it was added.
func (e *Entity) addObservation(o string, t Time) bool {
	if e.hasObservation(o) {
		return false
	}
	if t != 0 && e.ObservedAt == nil {
		e.ObservedAt = make([]Time, len(e.Observations), cap(e.Observations)+1)
	}
	e.Observations = append(e.Observations, o)
	if e.ObservedAt != nil {
		e.ObservedAt = append(e.ObservedAt, t)
	}
	if e.obsSet != nil {
		*e.obsSet = e.obsSet.added(e.Observations)
	} else if len(e.Observations) > obsIndexThreshold {
		e.obsSet = newObsTable(e.Observations).ref()
	}
	return true
}

// dropObservations removes the observations in drop, with their times.
func (e *Entity) dropObservations(drop map[string]bool) {
	j := 0
	for i, o := range e.Observations {
		if drop[o] {
			continue
		}
		e.Observations[j] = o
		if e.ObservedAt != nil {
			e.ObservedAt[j] = e.ObservedAt[i]
		}
		j++
	}
	clear(e.Observations[j:])
	e.Observations = e.Observations[:j]
	if e.ObservedAt != nil {
		e.ObservedAt = e.ObservedAt[:j]
	}
	if e.obsSet != nil {
		// The observations after a dropped one moved.
		e.obsSet = newObsTable(e.Observations).ref()
	}
}

// touch forgets everything derived from the entity after it changed.
func (e *Entity) touch() { e.state = nil }

func (e *Entity) derived() *derived {
	if e.state == nil {
		e.state = &derived{}
	}
	return e.state
}

// EncodedLine returns the entity's cached file line, or nil after a change.
// Storage caches lines so a save re-encodes only what changed.
func (e *Entity) EncodedLine() []byte {
	if e.state == nil {
		return nil
	}
	return e.state.encoded
}

// SetEncodedLine caches the entity's file line until it next changes.
func (e *Entity) SetEncodedLine(line []byte) { e.derived().encoded = line }

// clone returns a copy that shares no mutable state with e.
func (e *Entity) clone() Entity {
	return Entity{Name: e.Name, EntityType: e.EntityType, Observations: slices.Clone(e.Observations), Extra: e.Extra,
		Created: e.Created, Updated: e.Updated, ObservedAt: slices.Clone(e.ObservedAt)}
}

func bySeq[T interface{ order() uint64 }](a, b T) int { return cmp.Compare(a.order(), b.order()) }

func (e *Entity) order() uint64   { return e.seq }
func (r *Relation) order() uint64 { return r.seq }

// withoutDead returns list without the items of dead, all of which it
// holds, in place. A list in seq order (the graph's entities and
// relations are) finds each by a binary search and moves only what
// follows the first: at a million items a write that deletes a few costs
// a move of the tail, not a map lookup for every item.
func withoutDead[T interface {
	comparable
	order() uint64
}](list []T, dead map[T]bool) []T {
	at := make([]int, 0, len(dead))
	for d := range dead {
		i, found := slices.BinarySearchFunc(list, d.order(), func(x T, s uint64) int { return cmp.Compare(x.order(), s) })
		if !found || list[i] != d {
			// Not in seq order after all: look at every item.
			return slices.DeleteFunc(list, func(x T) bool { return dead[x] })
		}
		at = append(at, i)
	}
	if len(at) == 0 {
		return list
	}
	slices.Sort(at)
	w := at[0]
	for j, p := range at {
		end := len(list)
		if j+1 < len(at) {
			end = at[j+1]
		}
		w += copy(list[w:], list[p+1:end])
	}
	clear(list[w:])
	return list[:w]
}
