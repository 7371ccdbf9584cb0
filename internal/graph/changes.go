package graph

import "slices"

// ChangeKind says what one Change did.
type ChangeKind uint8

// The changes the six write tools make. Each carries whole items, so the
// same record can redo the change (Apply) or, read backwards, undo it.
const (
	// EntityCreated: Entity is the new entity, observations included.
	EntityCreated ChangeKind = iota + 1
	// EntityDeleted: Entity is the entity as it was. The relations that
	// went with it follow as RelationDeleted changes.
	EntityDeleted
	// ObservationsAdded: Entity.Name and the Observations appended, in
	// order; Entity.Updated is when (the time the write recorded).
	// Entity.ObservedAt, when it holds times, is when each was first
	// written (an undo giving back removed observations).
	ObservationsAdded
	// ObservationsDeleted: Entity.Name and the Observations removed;
	// Entity.Updated is when; Entity.ObservedAt, when known, when each
	// removed one had been written.
	ObservationsDeleted
	// RelationCreated: Relation is the new relation, its time included.
	RelationCreated
	// RelationDeleted: Relation is the removed relation.
	RelationDeleted
)

// Change is one step of a write, as TakeChanges reports it.
type Change struct {
	Kind     ChangeKind
	Entity   Entity   // the entity kinds
	Relation Relation // the relation kinds
}

// changeLog is what TrackChanges records. version is the graph's version
// after the last recorded step: a change made by anything that does not
// record (Rewrite, a load) leaves the graph at another version, and the
// log is then incomplete.
type changeLog struct {
	changes    []Change
	version    uint64
	incomplete bool
}

// TrackChanges starts recording the changes the write tools make, until
// TakeChanges. Storage uses the record to write only what changed.
func (g *Graph) TrackChanges() {
	g.log = &changeLog{version: g.version}
}

// TakeChanges stops recording and returns the changes made since
// TrackChanges, in order. complete is false when something changed the
// graph that the record does not describe (the commands' edits, Rewrite):
// the caller must then save the whole graph.
func (g *Graph) TakeChanges() (changes []Change, complete bool) {
	l := g.log
	g.log = nil
	if l == nil {
		return nil, false
	}
	return l.changes, !l.incomplete && l.version == g.version
}

// beginStep and endStep bracket a recorded write tool.
func (g *Graph) beginStep() {
	if g.log != nil && g.log.version != g.version {
		g.log.incomplete = true
	}
}

func (g *Graph) endStep() {
	if g.log != nil {
		g.log.version = g.version
	}
}

func (g *Graph) record(c Change) {
	if g.log != nil {
		g.log.changes = append(g.log.changes, c)
	}
}

// recordRelationsDeleted records dead relations in graph order, so the
// record does not depend on map order.
func (g *Graph) recordRelationsDeleted(dead map[*Relation]bool) {
	if g.log == nil || len(dead) == 0 {
		return
	}
	list := make([]*Relation, 0, len(dead))
	for r := range dead {
		list = append(list, r)
	}
	slices.SortFunc(list, bySeq)
	for _, r := range list {
		g.record(Change{Kind: RelationDeleted, Relation: r.clone()})
	}
}

// Apply redoes recorded changes, in order, as idempotent steps: an entity
// or relation already present is not created again, and removing what is
// gone does nothing. Applied to the graph the changes of the write tools
// were recorded on, it gives the same graph, order included; the commands'
// edits (Rename, Merge, ReplaceObservation) are recorded as removals and
// creations, which give the same content with the edited items moved to
// the end. While TrackChanges records, Apply's own changes are recorded
// too (undo is a write). It returns how many changes could
// not apply (observations or relations of an entity that no longer
// exists), which happens only on another graph. Each change keeps the
// times it was recorded with.
func (g *Graph) Apply(changes []Change) (skipped int) {
	defer g.SetNow(g.now)
	for _, c := range changes {
		switch c.Kind {
		case ObservationsAdded, ObservationsDeleted:
			g.now = c.Entity.Updated
		case RelationCreated:
			g.now = c.Relation.Created
		}
		switch c.Kind {
		case EntityCreated:
			if g.byName[c.Entity.Name] != nil {
				continue
			}
			g.beginStep()
			ne := g.insertEntity(Entity{Name: c.Entity.Name, EntityType: c.Entity.EntityType, Extra: c.Entity.Extra,
				Created: c.Entity.Created, Updated: c.Entity.Updated})
			for i, o := range c.Entity.Observations {
				ne.addObservation(o, c.Entity.ObservationTime(i))
			}
			g.record(Change{Kind: EntityCreated, Entity: ne.clone()})
			g.endStep()
		case EntityDeleted:
			g.DeleteEntities([]string{c.Entity.Name})
		case ObservationsAdded:
			if c.Entity.HasObservationTimes() {
				skipped += g.addObservationsAt(c.Entity)
			} else if _, err := g.AddObservations([]ObservationAddition{{EntityName: c.Entity.Name, Contents: c.Entity.Observations}}); err != nil {
				skipped++
			}
		case ObservationsDeleted:
			g.DeleteObservations([]ObservationDeletion{{EntityName: c.Entity.Name, Observations: c.Entity.Observations}})
		case RelationCreated:
			if _, err := g.CreateRelations([]Relation{c.Relation}); err != nil {
				skipped++
			}
		case RelationDeleted:
			g.DeleteRelations([]Relation{c.Relation})
		default:
			skipped++
		}
	}
	return skipped
}

// addObservationsAt adds a's observations to the entity a names, each at
// its time in a.ObservedAt (g.now where that is unknown), as one recorded
// step; it returns 1 when the entity does not exist, else 0.
func (g *Graph) addObservationsAt(a Entity) (skipped int) {
	e := g.byName[a.Name]
	if e == nil {
		return 1
	}
	g.beginStep()
	defer g.endStep()
	var added []string
	var times []Time
	for i, o := range a.Observations {
		t := a.ObservationTime(i)
		if t == 0 {
			t = g.now
		}
		if e.addObservation(o, t) {
			added, times = append(added, o), append(times, t)
		}
	}
	if len(added) > 0 {
		e.Updated = g.now
		g.entityChanged(e)
		g.record(Change{Kind: ObservationsAdded, Entity: Entity{Name: e.Name, Observations: added, Updated: g.now, ObservedAt: times}})
	}
	return 0
}
