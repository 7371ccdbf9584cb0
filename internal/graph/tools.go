package graph

import (
	"fmt"
	"slices"
	"strings"
)

// Snapshot is a self-contained part of the graph, as read_graph, search_nodes
// and open_nodes return it. It shares no state with the Graph.
type Snapshot struct {
	Entities  []Entity   `json:"entities"`
	Relations []Relation `json:"relations"`
}

// NotFoundError is returned when a call names an entity that does not exist
// where one must (create_relations, add_observations).
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("Entity with name %s not found", e.Name) }

// CreateEntitiesResult is what create_entities returns.
type CreateEntitiesResult struct {
	Entities []Entity `json:"entities"`
	// Skipped names, once each in input order, the entries not created:
	// names that existed before the call, and names the call gives more
	// than once (their later entries).
	Skipped []string `json:"skipped,omitempty"`
	// Repeated names, once each in input order, those of Skipped that were
	// new: the call gave them more than once and each was created from its
	// first entry. The notice words them apart from the names that already
	// existed; the structured result lists them in skipped with the others.
	Repeated []string `json:"-"`
}

// Notice is the text telling the caller what was skipped, or "". The
// sentence for existing names is the one docs/design.md §2 gives, word for
// word.
func (r CreateEntitiesResult) Notice() string {
	var parts []string
	existing := r.Skipped
	if len(r.Repeated) > 0 {
		repeated := make(map[string]bool, len(r.Repeated))
		for _, name := range r.Repeated {
			repeated[name] = true
		}
		existing = slices.DeleteFunc(slices.Clone(r.Skipped), func(name string) bool { return repeated[name] })
	}
	switch n := len(existing); n {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("Skipped 1 entity that already exists: %s. Its observations were not added; use add_observations for existing entities.", existing[0]))
	default:
		parts = append(parts, fmt.Sprintf("Skipped %d entities that already exist: %s. Their observations were not added; use add_observations for existing entities.", n, strings.Join(existing, ", ")))
	}
	switch n := len(r.Repeated); n {
	case 0:
	case 1:
		parts = append(parts, fmt.Sprintf("%s was repeated in this call: created once, from its first entry; the observations of the later entries were not added (use add_observations).", r.Repeated[0]))
	default:
		parts = append(parts, fmt.Sprintf("%s were repeated in this call: each created once, from its first entry; the observations of the later entries were not added (use add_observations).", strings.Join(r.Repeated, ", ")))
	}
	return strings.Join(parts, " ")
}

// CreateEntities adds each entity whose name is new. An entity whose name
// existed before the call is skipped whole (Skipped); a name the call
// repeats is created once, from its first entry, and its later entries are
// skipped whole (Skipped and Repeated). Repeated observations of one new
// entity are stored once.
func (g *Graph) CreateEntities(in []Entity) CreateEntitiesResult {
	g.beginStep()
	defer g.endStep()
	res := CreateEntitiesResult{Entities: []Entity{}}
	var created, reported map[string]bool // names this call created; names already in Skipped or Repeated
	for _, e := range in {
		if g.byName[e.Name] == nil {
			ne := g.insertEntity(Entity{Name: e.Name, EntityType: e.EntityType, Created: g.now, Updated: g.now})
			for _, o := range e.Observations {
				ne.addObservation(o, g.now)
			}
			res.Entities = append(res.Entities, ne.clone())
			g.record(Change{Kind: EntityCreated, Entity: ne.clone()})
			if created == nil {
				created = map[string]bool{}
			}
			created[e.Name] = true
			continue
		}
		if reported[e.Name] {
			continue
		}
		if reported == nil {
			reported = map[string]bool{}
		}
		reported[e.Name] = true
		res.Skipped = append(res.Skipped, e.Name)
		if created[e.Name] {
			res.Repeated = append(res.Repeated, e.Name)
		}
	}
	return res
}

// CreateRelationsResult is what create_relations returns.
type CreateRelationsResult struct {
	Relations []Relation `json:"relations"`
}

// CreateRelations adds each relation that is new. If any relation names an
// entity that does not exist, it returns a *NotFoundError and adds nothing.
func (g *Graph) CreateRelations(in []Relation) (CreateRelationsResult, error) {
	for _, r := range in {
		for _, name := range [2]string{r.From, r.To} {
			if g.byName[name] == nil {
				return CreateRelationsResult{}, &NotFoundError{name}
			}
		}
	}
	g.beginStep()
	defer g.endStep()
	res := CreateRelationsResult{Relations: []Relation{}}
	for _, r := range in {
		old, h := g.relSet.find(r.key())
		if old != nil {
			continue
		}
		nr := g.insertRelation(Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: g.now}, h).clone()
		res.Relations = append(res.Relations, nr)
		g.record(Change{Kind: RelationCreated, Relation: nr})
	}
	return res, nil
}

// ObservationAddition asks to add Contents to the entity named EntityName.
type ObservationAddition struct {
	EntityName string   `json:"entityName"`
	Contents   []string `json:"contents"`
}

// AddedObservations reports what one ObservationAddition added.
type AddedObservations struct {
	EntityName        string   `json:"entityName"`
	AddedObservations []string `json:"addedObservations"`
}

// AddObservationsResult is what add_observations returns.
type AddObservationsResult struct {
	Results []AddedObservations `json:"results"`
}

// AddObservations appends each content that the entity does not hold yet.
// If any entity does not exist it returns a *NotFoundError and adds nothing.
func (g *Graph) AddObservations(in []ObservationAddition) (AddObservationsResult, error) {
	for _, a := range in {
		if g.byName[a.EntityName] == nil {
			return AddObservationsResult{}, &NotFoundError{a.EntityName}
		}
	}
	g.beginStep()
	defer g.endStep()
	res := AddObservationsResult{Results: make([]AddedObservations, 0, len(in))}
	for _, a := range in {
		e := g.byName[a.EntityName]
		added := []string{}
		for _, c := range a.Contents {
			if e.addObservation(c, g.now) {
				added = append(added, c)
			}
		}
		if len(added) > 0 {
			e.Updated = g.now
			g.entityChanged(e)
			g.record(Change{Kind: ObservationsAdded, Entity: Entity{Name: e.Name, Observations: slices.Clone(added), Updated: g.now}})
		}
		res.Results = append(res.Results, AddedObservations{EntityName: a.EntityName, AddedObservations: added})
	}
	return res, nil
}

// DeleteResult is what the three delete tools return.
type DeleteResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	// NotFound lists the entity names that did not exist (delete_entities).
	NotFound []string `json:"notFound,omitempty"`
	// DeletedCount is set by delete_observations and delete_relations.
	DeletedCount *int `json:"deletedCount,omitempty"`
}

// DeleteEntities removes the named entities and every relation from or to
// them. Unknown names are no error; they are reported.
func (g *Graph) DeleteEntities(names []string) DeleteResult {
	g.beginStep()
	defer g.endStep()
	names = distinct(names)
	var notFound []string
	dead := make(map[*Entity]bool)
	deadRel := make(map[*Relation]bool)
	for _, name := range names {
		e := g.byName[name]
		if e == nil {
			notFound = append(notFound, name)
			continue
		}
		dead[e] = true
		g.record(Change{Kind: EntityDeleted, Entity: e.clone()})
		delete(g.byName, name)
		g.entityRemoved(e)
		for _, r := range e.rels.out {
			deadRel[r] = true
		}
		for _, r := range e.rels.in {
			deadRel[r] = true
		}
		e.rels = endLists{} // all dead: the lists of the other ends lose them
	}
	if len(dead) > 0 {
		g.version++
		g.entities = withoutDead(g.entities, dead)
	}
	g.recordRelationsDeleted(deadRel)
	g.removeRelations(deadRel)
	if len(notFound) == 0 {
		return DeleteResult{Success: true, Message: "Entities deleted successfully"}
	}
	return DeleteResult{
		Success:  true,
		Message:  fmt.Sprintf("Deleted %d of %d entities. Not found: %s", len(names)-len(notFound), len(names), strings.Join(notFound, ", ")),
		NotFound: notFound,
	}
}

// ObservationDeletion asks to remove Observations from the entity named
// EntityName.
type ObservationDeletion struct {
	EntityName   string   `json:"entityName"`
	Observations []string `json:"observations"`
}

// DeleteObservations removes the listed observations. Unknown entities and
// observations are no error; the message tells how many were removed of how
// many asked (each distinct entity and observation pair counts once).
func (g *Graph) DeleteObservations(in []ObservationDeletion) DeleteResult {
	g.beginStep()
	defer g.endStep()
	type pair struct{ entity, observation string }
	asked := make(map[pair]bool)
	var missing []string
	missingSeen := make(map[string]bool)
	deleted := 0
	for _, d := range in {
		e := g.byName[d.EntityName]
		drop := make(map[string]bool)
		for _, o := range d.Observations {
			p := pair{d.EntityName, o}
			if asked[p] {
				continue
			}
			asked[p] = true
			if e != nil && e.hasObservation(o) {
				drop[o] = true
			}
		}
		if e == nil {
			if !missingSeen[d.EntityName] {
				missingSeen[d.EntityName] = true
				missing = append(missing, d.EntityName)
			}
			continue
		}
		if len(drop) == 0 {
			continue
		}
		if g.log != nil {
			var removed []string
			var times []Time // when each removed one was written, so an undo gives it back as it was
			for i, o := range e.Observations {
				if drop[o] {
					removed = append(removed, o)
					if e.ObservedAt != nil {
						times = append(times, e.ObservationTime(i))
					}
				}
			}
			g.record(Change{Kind: ObservationsDeleted, Entity: Entity{Name: e.Name, Observations: removed, Updated: g.now, ObservedAt: times}})
		}
		e.dropObservations(drop)
		e.Updated = g.now
		g.entityChanged(e)
		deleted += len(drop)
	}
	res := DeleteResult{Success: true, DeletedCount: &deleted}
	if deleted == len(asked) {
		res.Message = "Observations deleted successfully"
		return res
	}
	res.Message = fmt.Sprintf("Deleted %d of %d observations.", deleted, len(asked))
	if len(missing) > 0 {
		res.Message += " Entities not found: " + strings.Join(missing, ", ")
	}
	return res
}

// DeleteRelations removes the listed relations. Unknown relations are no
// error; the message tells how many matched.
func (g *Graph) DeleteRelations(in []Relation) DeleteResult {
	g.beginStep()
	defer g.endStep()
	asked := make(map[relationKey]bool)
	dead := make(map[*Relation]bool)
	for _, r := range in {
		k := r.key()
		if asked[k] {
			continue
		}
		asked[k] = true
		if old := g.relSet.get(k); old != nil {
			dead[old] = true
		}
	}
	g.recordRelationsDeleted(dead)
	g.removeRelations(dead)
	deleted := len(dead)
	res := DeleteResult{Success: true, DeletedCount: &deleted}
	if deleted == len(asked) {
		res.Message = "Relations deleted successfully"
	} else {
		res.Message = fmt.Sprintf("Deleted %d of %d relations. The rest matched nothing.", deleted, len(asked))
	}
	return res
}

// Selection is part of the graph as the read tools return it: entities and
// relations in their result order. It points into the graph, so it is valid
// only until the next mutation and must not be modified; Snapshot copies it.
type Selection struct {
	Entities  []*Entity
	Relations []*Relation
}

// Snapshot returns a copy of the selection that shares nothing with the graph.
func (s Selection) Snapshot() Snapshot {
	snap := Snapshot{Entities: make([]Entity, len(s.Entities)), Relations: make([]Relation, len(s.Relations))}
	for i, e := range s.Entities {
		snap.Entities[i] = e.clone()
	}
	for i, r := range s.Relations {
		snap.Relations[i] = r.clone()
	}
	return snap
}

// ReadGraph returns every entity and relation.
func (g *Graph) ReadGraph() Snapshot { return g.All().Snapshot() }

// All selects every entity and relation, in graph order.
func (g *Graph) All() Selection { return Selection{g.entities, g.relations} }

// Open selects the named entities that exist, in graph order, and the
// relations whose both ends are among them. Unknown names are skipped.
func (g *Graph) Open(names []string) Selection {
	found := make(map[string]*Entity, len(names))
	var ents []*Entity
	for _, n := range names {
		if e := g.byName[n]; e != nil && found[n] == nil {
			found[n] = e
			ents = append(ents, e)
		}
	}
	slices.SortFunc(ents, bySeq)
	var rels []*Relation
	for _, e := range ents {
		for _, r := range g.outOf(e.Name) {
			if found[r.To] != nil {
				rels = append(rels, r)
			}
		}
	}
	slices.SortFunc(rels, bySeq)
	return Selection{ents, rels}
}

// touching returns the relations with at least one end among ents, in graph
// order.
func (g *Graph) touching(ents []*Entity) []*Relation {
	seen := make(map[*Relation]bool)
	var rels []*Relation
	for _, e := range ents {
		for _, list := range [2][]*Relation{g.outOf(e.Name), g.inOf(e.Name)} {
			for _, r := range list {
				if !seen[r] {
					seen[r] = true
					rels = append(rels, r)
				}
			}
		}
	}
	slices.SortFunc(rels, bySeq)
	return rels
}

// distinct returns list without repeats, first occurrences kept in order.
func distinct(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
