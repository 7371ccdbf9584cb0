package answer

import (
	"slices"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A page is picked while the graph is held and encoded after it is let
// go (Pick, then Picked.Encode), so that a write waits for no read's
// encoding: with no answer limit, a whole answer of a big memory takes
// seconds to encode. The graph changes entities in place (observations
// are appended and compacted in their arrays, a rename changes a name),
// so what the page can show is copied first: the entities and relations
// from the cursor on, until a lower bound of their encoded size passes the
// limit, and one more (a cursor digests the item it points to). A copied
// entity copies its list of observations, never their strings. With the
// default limit that is a few hundred entities, whatever the size of the
// memory; with no limit, everything from the cursor on.

// Picked is the part of an answer a page can show, copied: it shares
// nothing the graph changes, so it is encoded after the graph is let go.
type Picked struct {
	a     *Answer // the run, an answer of its own
	limit int
	obs   int // the first observation to show of the run's first entity
}

// run is where a copied answer (Picked) stands in the whole one.
type run struct {
	base int // the whole sequence's index of the run's first item
	// entitiesBefore is the whole answer's entities before the run;
	// entities and relations its counts.
	entitiesBefore      int
	entities, relations int
	prefix              uint64   // digest of the whole sequence before base
	notes               []string // the whole answer's notes
}

// Lower bounds of what an entity and a relation add to the text, beyond
// their strings (the keys, quotes and brackets of their compact JSON), and
// what each observation shown adds (its quotes).
const (
	entityBound      = 40
	relationBound    = 30
	observationBound = 2
)

// Pick checks the cursor ("" for the first page) and copies the part of
// the answer that the page it points to can show, cut to limit bytes of
// text (0: no limit), so that Picked.Encode reads nothing of the graph. It
// fails, wrapping ErrCursor, when the cursor is not one of this answer's.
// It reads the graph: the caller holds it until Pick returns.
func (a *Answer) Pick(limit int, cursorText string) (*Picked, error) {
	if limit > 0 && limit < MinLimit {
		limit = MinLimit
	}
	seq := a.sequence()
	k, obs, before, err := a.start(seq, cursorText)
	if err != nil {
		return nil, err
	}
	c := &Answer{
		Tool: a.Tool, Request: a.Request, Outline: a.Outline,
		OmittedRelations: a.OmittedRelations, Hint: a.Hint, Times: a.Times,
		run: &run{
			base: k, entitiesBefore: min(k, len(a.Entities)),
			entities: len(a.Entities), relations: len(a.Relations),
			prefix: before, notes: a.notes(),
		},
	}
	end := a.runEnd(seq, k, obs, limit)
	ents, rels := a.counts(seq[k:end])
	entities := make([]graph.Entity, 0, ents)
	c.Entities = make([]View, 0, ents)
	relations := make([]graph.Relation, 0, rels)
	c.Relations = make([]*graph.Relation, 0, rels)
	for _, it := range seq[k:end] {
		if it.ent >= 0 {
			entities = append(entities, a.copyEntity(int(it.ent)))
			c.Entities = append(c.Entities, View{Entity: &entities[len(entities)-1], Most: a.Entities[it.ent].Most})
		} else {
			r := a.Relations[it.rel]
			relations = append(relations, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType, Created: r.Created})
			c.Relations = append(c.Relations, &relations[len(relations)-1])
		}
	}
	return &Picked{a: c, limit: limit, obs: obs}, nil
}

// runEnd returns the end of the run from seq[k] (observation obs) that a
// page can show: the items until a lower bound of their text passes limit,
// and one more; with no limit, the end of seq.
func (a *Answer) runEnd(seq []item, k, obs, limit int) int {
	if limit == 0 {
		return len(seq)
	}
	size := 0
	for i := k; i < len(seq); i++ {
		if size > limit {
			return i + 1
		}
		size += a.lowerBound(seq[i], obs)
		obs = 0
	}
	return len(seq)
}

// lowerBound is at most what item it adds to the text of a page, from
// observation obs on.
func (a *Answer) lowerBound(it item, obs int) int {
	if it.ent < 0 {
		r := a.Relations[it.rel]
		return relationBound + len(r.From) + len(r.To) + len(r.RelationType)
	}
	e := a.Entities[it.ent].Entity
	n := entityBound + len(e.Name) + len(e.EntityType)
	if a.Outline {
		return n
	}
	for _, o := range a.shown(int(it.ent))[obs:a.obsCount(it)] {
		n += observationBound + len(o)
	}
	return n
}

// counts returns the entities and the relations among items.
func (a *Answer) counts(items []item) (entities, relations int) {
	for _, it := range items {
		if it.ent >= 0 {
			entities++
		} else {
			relations++
		}
	}
	return entities, relations
}

// copyEntity copies what the answer shows of entity i: its observations
// in the order they are shown (so the copy needs no First), their times
// when the answer shows times; of an outline only the number of
// observations, all it reads of them, so the copy shares their list,
// whose strings it never reads.
func (a *Answer) copyEntity(i int) graph.Entity {
	e := a.Entities[i].Entity
	c := graph.Entity{Name: e.Name, EntityType: e.EntityType, Created: e.Created, Updated: e.Updated}
	if a.Outline {
		c.Observations = e.Observations[:len(e.Observations):len(e.Observations)]
		return c
	}
	shown := a.shown(i)
	c.Observations = slices.Clone(shown)
	if !a.Times || !e.HasObservationTimes() {
		return c
	}
	if a.Entities[i].First == nil {
		c.ObservedAt = slices.Clone(e.ObservedAt)
		return c
	}
	at := make(map[string]graph.Time, len(e.Observations))
	for j, o := range e.Observations {
		at[o] = e.ObservationTime(j)
	}
	c.ObservedAt = make([]graph.Time, len(shown))
	for j, o := range shown {
		c.ObservedAt[j] = at[o]
	}
	return c
}
