package graph

import (
	"fmt"
	"slices"
)

// This file holds the corrections people make to their memory by hand (the
// commands and the web page of docs/design.md §9), beyond the nine tools:
// renaming, merging, changing an observation, and finding and repairing what
// a file edited by hand or by older servers may hold. Like the tools, each
// method validates its whole input before it changes anything.

// ExistsError is returned when a call would create an entity whose name is
// already taken.
type ExistsError struct{ Name string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("Entity with name %s already exists", e.Name)
}

// RefusedError is a correction the graph refuses as it stands (an
// observation that is not there, or text already present). Nothing was
// changed.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refused(format string, args ...any) error { return &RefusedError{fmt.Sprintf(format, args...)} }

// RenameResult reports what Rename changed.
type RenameResult struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Relations is the number of relations that now point from or to the
	// new name.
	Relations int `json:"relations"`
}

// Rename gives the entity named from the name to, and carries every relation
// from or to it along, keeping graph order. It returns a *NotFoundError when
// from does not exist and an *ExistsError when to is taken (merge the two
// instead); renaming an entity to its own name changes nothing.
func (g *Graph) Rename(from, to string) (RenameResult, error) {
	e := g.byName[from]
	if e == nil {
		return RenameResult{}, &NotFoundError{from}
	}
	res := RenameResult{From: from, To: to}
	if from == to {
		res.Relations = len(g.touching([]*Entity{e}))
		return res, nil
	}
	if g.byName[to] != nil {
		return RenameResult{}, &ExistsError{to}
	}
	if to == "" {
		return RenameResult{}, refused("the new name is empty")
	}
	g.beginStep()
	defer g.endStep()
	rels := g.touching([]*Entity{e})
	// Recorded as the entity and its relations removed under the old name
	// and created under the new one: what undo reverses.
	if g.log != nil {
		g.record(Change{Kind: EntityDeleted, Entity: e.clone()})
		for _, r := range rels {
			g.record(Change{Kind: RelationDeleted, Relation: r.clone()})
		}
	}
	// Relations the file held with the new name and no entity to it
	// (dangling) now reach the renamed entity.
	waiting := g.touching([]*Entity{{Name: to}})
	delete(g.byName, from)
	e.Name = to
	e.Updated = g.now
	g.name(e) // its lists, and the waiting ones, are now the name's
	g.entityChanged(e)

	dead := g.renameEnds(rels, from, to)
	for _, list := range [][]*Relation{rels, waiting} {
		for _, r := range list {
			// The other end's context names this entity.
			g.relationChanged(r)
		}
	}
	g.removeDuplicates(dead)
	g.version++
	if g.log != nil {
		g.record(Change{Kind: EntityCreated, Entity: e.clone()})
		for _, r := range rels {
			if !dead[r] {
				g.record(Change{Kind: RelationCreated, Relation: r.clone()})
			}
		}
	}
	res.Relations = len(rels)
	return res, nil
}

// renameEnds points the relations from or to the entity named from at
// to, and moves its lists of relations under the new name. It returns the
// relations that now say what a dangling relation already said, to be
// removed (removeDuplicates).
func (g *Graph) renameEnds(rels []*Relation, from, to string) (dead map[*Relation]bool) {
	for _, r := range rels {
		g.relSet.del(r.key())
	}
	dead = make(map[*Relation]bool)
	for _, r := range rels {
		if r.From == from {
			r.From = to
		}
		if r.To == from {
			r.To = to
		}
		if g.relSet.get(r.key()) != nil {
			// A dangling relation already says the same: keep one.
			dead[r] = true
			continue
		}
		g.relSet.put(r)
	}
	return dead
}

// removeDuplicates removes the relations dead, each of which has the key
// of another that stays.
func (g *Graph) removeDuplicates(dead map[*Relation]bool) {
	survivors := make([]*Relation, 0, len(dead))
	for r := range dead {
		survivors = append(survivors, g.relSet.get(r.key()))
	}
	g.removeRelations(dead)
	for _, r := range survivors {
		g.relSet.put(r) // removing its duplicate dropped its entry
	}
}

// MergeResult reports what Merge changed.
type MergeResult struct {
	Into   string `json:"into"`
	Merged string `json:"merged"`
	// AddedObservations are the merged entity's observations that the kept
	// one did not hold, in order.
	AddedObservations []string `json:"addedObservations"`
	// MovedRelations now point from or to the kept entity instead.
	MovedRelations []Relation `json:"movedRelations"`
	// DroppedRelations were removed: they already existed on the kept
	// entity, or ran between the two entities and would have pointed the
	// kept entity at itself.
	DroppedRelations []Relation `json:"droppedRelations"`
	// TypeDropped is the merged entity's type when it differed from the kept
	// one's (the kept entity's type stays), else "".
	TypeDropped string `json:"typeDropped,omitempty"`
}

// Merge folds the entity named merged into the one named into, by the rule
// the file's duplicate lines follow: into keeps its type and gains the
// observations it lacks, in order; every relation from or to merged now runs
// from or to into, except those already there and those between the two
// (which would point into at itself); then merged is removed. It returns a
// *NotFoundError when either does not exist, and an error when they are the
// same entity.
func (g *Graph) Merge(into, merged string) (MergeResult, error) {
	keep, gone := g.byName[into], g.byName[merged]
	for _, n := range []struct {
		e    *Entity
		name string
	}{{keep, into}, {gone, merged}} {
		if n.e == nil {
			return MergeResult{}, &NotFoundError{n.name}
		}
	}
	if keep == gone {
		return MergeResult{}, refused("cannot merge %s into itself", into)
	}
	g.beginStep()
	res := MergeResult{Into: into, Merged: merged, AddedObservations: []string{}, MovedRelations: []Relation{}, DroppedRelations: []Relation{}}
	if gone.EntityType != keep.EntityType {
		res.TypeDropped = gone.EntityType
	}
	for i, o := range gone.Observations {
		if keep.addObservation(o, gone.ObservationTime(i)) {
			res.AddedObservations = append(res.AddedObservations, o)
		}
	}
	keep.Updated = g.now
	g.entityChanged(keep)
	if len(res.AddedObservations) > 0 {
		g.record(Change{Kind: ObservationsAdded, Entity: Entity{Name: into, Observations: slices.Clone(res.AddedObservations), Updated: g.now}})
	}

	// Decide every relation of the merged entity first, then apply.
	dead, moves := g.planMoves(g.touching([]*Entity{gone}), into, merged, &res)
	g.removeRelations(dead)
	for _, m := range moves {
		g.moveRelation(m)
		res.MovedRelations = append(res.MovedRelations, m.r.clone())
	}
	g.version++
	g.endStep()
	g.DeleteEntities([]string{merged}) // records the merged entity's removal
	return res, nil
}

// relationMove is a relation of a merged entity and the key it takes.
type relationMove struct {
	r      *Relation
	target relationKey
}

// planMoves decides each relation from or to merged: it moves to into,
// or is dropped (recorded in res) when into has it already, when two of
// merged's would become one, or when it runs between the two and would
// point into at itself.
func (g *Graph) planMoves(rels []*Relation, into, merged string, res *MergeResult) (dead map[*Relation]bool, moves []relationMove) {
	dead = make(map[*Relation]bool)
	taken := make(map[relationKey]bool)
	for _, r := range rels {
		k := r.key()
		if k.from == merged {
			k.from = into
		}
		if k.to == merged {
			k.to = into
		}
		between := k.from == into && k.to == into && !(r.From == merged && r.To == merged)
		if between || g.relSet.get(k) != nil || taken[k] {
			dead[r] = true
			res.DroppedRelations = append(res.DroppedRelations, r.clone())
			g.record(Change{Kind: RelationDeleted, Relation: r.clone()})
			continue
		}
		taken[k] = true
		moves = append(moves, relationMove{r, k})
	}
	return dead, moves
}

// moveRelation gives m.r its new ends, keeping the lists of relations
// from and to each entity in graph order, and records the move as the
// relation removed and created again.
func (g *Graph) moveRelation(m relationMove) {
	r := m.r
	g.record(Change{Kind: RelationDeleted, Relation: r.clone()})
	g.relSet.del(r.key())
	if r.From != m.target.from {
		name, to := g.end(m.target.from)
		from := g.ends(r.From)
		from.out = dropRelation(from.out, r)
		to.out = insertBySeq(to.out, r)
		g.tidy(r.From)
		r.From = name
	}
	if r.To != m.target.to {
		name, to := g.end(m.target.to)
		from := g.ends(r.To)
		from.in = dropRelation(from.in, r)
		to.in = insertBySeq(to.in, r)
		g.tidy(r.To)
		r.To = name
	}
	g.relSet.put(r)
	g.relationChanged(r) // both ends' context changed
	g.record(Change{Kind: RelationCreated, Relation: r.clone()})
}

// mergeBySeq merges two lists in graph order into one, in graph order.
func mergeBySeq(a, b []*Relation) []*Relation {
	if len(a) == 0 || len(b) == 0 {
		return append(a, b...)
	}
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, bySeq)
	return out
}

// insertBySeq inserts r into list, which is in graph order, keeping the order.
func insertBySeq(list []*Relation, r *Relation) []*Relation {
	i, _ := slices.BinarySearchFunc(list, r, bySeq)
	return slices.Insert(list, i, r)
}

// ReplaceObservation changes the observation old of the named entity to
// new, in place. It returns a *NotFoundError when the entity does not exist,
// and an error when it has no observation old or already has new.
func (g *Graph) ReplaceObservation(entity, old, new string) error {
	e := g.byName[entity]
	if e == nil {
		return &NotFoundError{entity}
	}
	i := slices.Index(e.Observations, old)
	if i < 0 {
		return refused("%s has no observation %q (it may have been changed meanwhile)", entity, old)
	}
	if old == new {
		return nil
	}
	if e.hasObservation(new) {
		return refused("%s already has the observation %q", entity, new)
	}
	g.beginStep()
	defer g.endStep()
	// Recorded as the old observation removed and the new one added (a
	// replay appends it rather than putting it in place).
	g.record(Change{Kind: ObservationsDeleted, Entity: Entity{Name: entity, Observations: []string{old}, Updated: g.now}})
	g.record(Change{Kind: ObservationsAdded, Entity: Entity{Name: entity, Observations: []string{new}, Updated: g.now}})
	e.Observations[i] = new
	if g.now != 0 && e.ObservedAt == nil {
		e.ObservedAt = make([]Time, len(e.Observations))
	}
	if e.ObservedAt != nil {
		e.ObservedAt[i] = g.now
	}
	e.Updated = g.now
	if e.obsSet != nil {
		e.obsSet = newObsTable(e.Observations).ref()
	}
	g.entityChanged(e)
	return nil
}

// DanglingRelations returns the relations whose from or to names no entity,
// in graph order. The file may hold them (written by hand, or by servers
// that did not remove them); search and open never return them.
func (g *Graph) DanglingRelations() []Relation {
	var out []Relation
	for _, r := range g.relations {
		if g.byName[r.From] == nil || g.byName[r.To] == nil {
			out = append(out, r.clone())
		}
	}
	return out
}

// RemoveDanglingRelations removes every relation DanglingRelations returns
// and returns them.
func (g *Graph) RemoveDanglingRelations() []Relation {
	g.beginStep()
	defer g.endStep()
	dead := make(map[*Relation]bool)
	var out []Relation
	for _, r := range g.relations {
		if g.byName[r.From] == nil || g.byName[r.To] == nil {
			dead[r] = true
			out = append(out, r.clone())
			g.record(Change{Kind: RelationDeleted, Relation: r.clone()})
		}
	}
	g.removeRelations(dead)
	return out
}

// Rewrite marks the graph changed without changing its content, so that a
// store saves it: after a load merged duplicate lines of the file, saving
// writes each entity and relation once.
func (g *Graph) Rewrite() { g.version++ }

// Neighbourhood selects the entity named name and the entities within depth
// relations of it (either direction), breadth first, at most limit entities
// in all (0: no limit), with every relation among the selected entities.
// Truncated reports that the limit cut the neighbourhood short. It returns
// an empty selection when name does not exist.
func (g *Graph) Neighbourhood(name string, depth, limit int) (sel Selection, truncated bool) {
	if g.byName[name] == nil {
		return Selection{}, false
	}
	ents, truncated := g.reach([]string{name}, depth, limit)
	seen := make(map[*Entity]bool, len(ents))
	for _, e := range ents {
		seen[e] = true
	}
	var rels []*Relation
	for _, e := range ents {
		for _, r := range g.outOf(e.Name) {
			if to := g.byName[r.To]; to != nil && seen[to] {
				rels = append(rels, r)
			}
		}
	}
	slices.SortFunc(rels, bySeq)
	return Selection{ents, rels}, truncated
}

// RelationsOf returns the relations from and to the named entity, each in
// graph order.
func (g *Graph) RelationsOf(name string) (out, in []*Relation) {
	return g.outOf(name), g.inOf(name)
}

// ImportResult reports what Import added and what it skipped because the
// graph already held it.
type ImportResult struct {
	AddedEntities []string `json:"addedEntities"`
	// AddedObservations lists, per entity that already existed, the
	// observations added to it.
	AddedObservations []AddedObservations `json:"addedObservations"`
	AddedRelations    []Relation          `json:"addedRelations"`
	// SkippedObservations and SkippedRelations count what was already there.
	SkippedObservations int `json:"skippedObservations"`
	SkippedRelations    int `json:"skippedRelations"`
	// TypesKept lists entities that existed with another type: the graph's
	// type stays.
	TypesKept []TypeKept `json:"typesKept"`
}

// TypeKept is an entity whose imported type differed from the graph's.
type TypeKept struct {
	Name     string `json:"name"`
	Kept     string `json:"kept"`
	Imported string `json:"imported"`
}

// Import merges src into g by the rules of the tools: a new entity is
// created with its observations (create_entities) and the members of its
// line the graph does not know (Extra), an existing one gains
// the observations it lacks (add_observations) and keeps its type, and new
// relations are added (create_relations). As create_relations does, it
// returns a *NotFoundError, and changes nothing, when a relation names an
// entity that is in neither graph.
func (g *Graph) Import(src Snapshot) (ImportResult, error) {
	incoming := make(map[string]bool, len(src.Entities))
	for _, e := range src.Entities {
		incoming[e.Name] = true
	}
	for _, r := range src.Relations {
		for _, name := range [2]string{r.From, r.To} {
			if g.byName[name] == nil && !incoming[name] {
				return ImportResult{}, &NotFoundError{name}
			}
		}
	}
	g.beginStep()
	defer g.endStep()
	res := ImportResult{AddedEntities: []string{}, AddedObservations: []AddedObservations{}, AddedRelations: []Relation{}, TypesKept: []TypeKept{}}
	for _, e := range src.Entities {
		old := g.byName[e.Name]
		if old == nil {
			ne := g.insertEntity(Entity{Name: e.Name, EntityType: e.EntityType, Extra: e.Extra, Created: e.Created, Updated: e.Updated})
			for i, o := range e.Observations {
				ne.addObservation(o, e.ObservationTime(i))
			}
			g.record(Change{Kind: EntityCreated, Entity: ne.clone()})
			res.AddedEntities = append(res.AddedEntities, e.Name)
			continue
		}
		if old.EntityType != e.EntityType {
			res.TypesKept = append(res.TypesKept, TypeKept{e.Name, old.EntityType, e.EntityType})
		}
		added := []string{}
		for i, o := range e.Observations {
			if old.addObservation(o, e.ObservationTime(i)) {
				added = append(added, o)
			} else {
				res.SkippedObservations++
			}
		}
		if len(added) > 0 {
			old.Updated = g.now
			g.entityChanged(old)
			res.AddedObservations = append(res.AddedObservations, AddedObservations{EntityName: e.Name, AddedObservations: added})
			g.record(Change{Kind: ObservationsAdded, Entity: Entity{Name: e.Name, Observations: slices.Clone(added), Updated: g.now}})
		}
	}
	for _, r := range src.Relations {
		old, h := g.relSet.find(r.key())
		if old != nil {
			res.SkippedRelations++
			continue
		}
		nr := g.insertRelation(Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created}, h).clone()
		res.AddedRelations = append(res.AddedRelations, nr)
		g.record(Change{Kind: RelationCreated, Relation: nr})
	}
	return res, nil
}
