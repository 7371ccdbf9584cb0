package history

import (
	"fmt"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Inverse returns the changes that undo changes: each reversed (a
// creation becomes a deletion, an addition a removal), in the reverse
// order, so that applied to the graph the changes left they give the graph
// before them, and the inverse of the inverse is changes again. The
// relations an entity deletion took with it are recorded after it (the
// cascade); they are taken as removed first, so that the entity comes back
// before its relations.
func Inverse(changes []graph.Change) []graph.Change {
	changes = cascadeFirst(changes)
	out := make([]graph.Change, 0, len(changes))
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		c.Kind = inverseKind[c.Kind]
		out = append(out, c)
	}
	return out
}

var inverseKind = map[graph.ChangeKind]graph.ChangeKind{
	graph.EntityCreated:       graph.EntityDeleted,
	graph.EntityDeleted:       graph.EntityCreated,
	graph.ObservationsAdded:   graph.ObservationsDeleted,
	graph.ObservationsDeleted: graph.ObservationsAdded,
	graph.RelationCreated:     graph.RelationDeleted,
	graph.RelationDeleted:     graph.RelationCreated,
}

// cascadeFirst returns changes with each run of relation deletions that
// follows a run of entity deletions moved before it: the same content
// change (deleting a relation and deleting an entity commute), in an order
// whose every step is valid on its own.
func cascadeFirst(changes []graph.Change) []graph.Change {
	out := make([]graph.Change, 0, len(changes))
	for i := 0; i < len(changes); {
		if changes[i].Kind != graph.EntityDeleted {
			out = append(out, changes[i])
			i++
			continue
		}
		j := i
		for j < len(changes) && changes[j].Kind == graph.EntityDeleted {
			j++
		}
		k := j
		for k < len(changes) && changes[k].Kind == graph.RelationDeleted {
			k++
		}
		out = append(append(out, changes[j:k]...), changes[i:j]...)
		i = k
	}
	return out
}

// Undo applies the inverse of records, given newest first, to g, as far as
// the graph allows, and returns what it could not do as it was recorded
// (the conflicts: the memory changed since). Run it inside one write with
// the changes tracked: the undo is itself recorded.
func Undo(g *graph.Graph, records []graph.Record) (conflicts []string) {
	for i := range records {
		for _, c := range Inverse(records[i].Changes) {
			if msg := undoStep(g, c); msg != "" {
				conflicts = append(conflicts, msg)
			}
		}
	}
	return conflicts
}

// undoStep applies one inverse change and says what kept it from applying
// as recorded, or "".
func undoStep(g *graph.Graph, c graph.Change) string {
	switch c.Kind {
	case graph.EntityCreated:
		return restoreEntity(g, c)
	case graph.EntityDeleted:
		return removeEntity(g, c)
	case graph.ObservationsAdded:
		return restoreObservations(g, c)
	case graph.ObservationsDeleted:
		return removeObservations(g, c)
	case graph.RelationCreated:
		return restoreRelation(g, c)
	case graph.RelationDeleted:
		return removeRelation(g, c)
	}
	return ""
}

// restoreEntity gives back a deleted entity; one that exists again keeps
// what it has and gains the observations it lacks.
func restoreEntity(g *graph.Graph, c graph.Change) string {
	cur := g.Entity(c.Entity.Name)
	if cur == nil {
		g.Apply([]graph.Change{c})
		return ""
	}
	missing := lacking(&c.Entity, cur)
	if len(missing.Observations) > 0 {
		missing.Updated = g.Now()
		g.Apply([]graph.Change{{Kind: graph.ObservationsAdded, Entity: missing}})
	}
	return fmt.Sprintf("entity %s exists again: kept it, added the %s it lacked", c.Entity.Name, count(len(missing.Observations), "observation"))
}

// removeEntity removes a created entity; one that changed since is kept,
// without the observations it was created with.
func removeEntity(g *graph.Graph, c graph.Change) string {
	name := c.Entity.Name
	cur := g.Entity(name)
	switch {
	case cur == nil:
		return fmt.Sprintf("entity %s is already gone", name)
	case cur.EntityType != c.Entity.EntityType || len(without(cur.Observations, c.Entity.Observations)) > 0:
		g.Apply([]graph.Change{{Kind: graph.ObservationsDeleted, Entity: graph.Entity{Name: name, Observations: c.Entity.Observations, Updated: g.Now()}}})
		return fmt.Sprintf("entity %s changed since: kept it, removed only the observations it was created with", name)
	}
	g.Apply([]graph.Change{c})
	return ""
}

// restoreObservations gives back deleted observations, with their times.
func restoreObservations(g *graph.Graph, c graph.Change) string {
	if g.Entity(c.Entity.Name) == nil {
		return fmt.Sprintf("entity %s is gone: %s not restored", c.Entity.Name, count(len(c.Entity.Observations), "observation"))
	}
	c.Entity.Updated = g.Now()
	g.Apply([]graph.Change{c})
	return ""
}

// removeObservations removes added observations.
func removeObservations(g *graph.Graph, c graph.Change) string {
	cur := g.Entity(c.Entity.Name)
	if cur == nil {
		return fmt.Sprintf("entity %s is already gone", c.Entity.Name)
	}
	gone := without(c.Entity.Observations, cur.Observations)
	c.Entity.Updated = g.Now()
	g.Apply([]graph.Change{c})
	if len(gone) > 0 {
		return fmt.Sprintf("entity %s: %s already removed", c.Entity.Name, count(len(gone), "observation"))
	}
	return ""
}

// restoreRelation gives back a deleted relation, when both its ends exist.
func restoreRelation(g *graph.Graph, c graph.Change) string {
	r := c.Relation
	for _, end := range [2]string{r.From, r.To} {
		if g.Entity(end) == nil {
			return fmt.Sprintf("relation %s %s %s not restored: entity %s is gone", r.From, r.RelationType, r.To, end)
		}
	}
	g.Apply([]graph.Change{c})
	return ""
}

// removeRelation removes a created relation.
func removeRelation(g *graph.Graph, c graph.Change) string {
	r := c.Relation
	if !g.HasRelation(r) {
		return fmt.Sprintf("relation %s %s %s is already gone", r.From, r.RelationType, r.To)
	}
	g.Apply([]graph.Change{c})
	return ""
}

// lacking returns the observations of want that cur lacks, in order, with
// their times.
func lacking(want *graph.Entity, cur *graph.Entity) graph.Entity {
	have := make(map[string]bool, len(cur.Observations))
	for _, o := range cur.Observations {
		have[o] = true
	}
	out := graph.Entity{Name: want.Name}
	for i, o := range want.Observations {
		if !have[o] {
			out.Observations = append(out.Observations, o)
			out.ObservedAt = append(out.ObservedAt, want.ObservationTime(i))
		}
	}
	return out
}

// without returns the strings of a that b lacks, in order.
func without(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Summary says in one line what changes did, for people:
// "− entity Alice (person), 3 observations, 2 relations; + relation A knows B".
// Past a few parts it says how many more there are.
func Summary(changes []graph.Change) string {
	const shown = 4
	var parts []string
	used := make([]bool, len(changes))
	relsOf := relationDeletions(changes)
	for i, c := range changes {
		if used[i] {
			continue
		}
		used[i] = true
		p := part(&c)
		if c.Kind == graph.EntityDeleted {
			if n := cascadeOf(relsOf[c.Entity.Name], i, used); n > 0 {
				p += ", " + count(n, "relation")
			}
		}
		parts = append(parts, p)
	}
	if len(parts) > shown {
		parts = append(parts[:shown], fmt.Sprintf("and %d more", len(parts)-shown))
	}
	return strings.Join(parts, "; ")
}

// part says what one change did, for Summary.
func part(c *graph.Change) string {
	switch c.Kind {
	case graph.EntityCreated:
		return fmt.Sprintf("+ entity %s (%s), %s", c.Entity.Name, c.Entity.EntityType, count(len(c.Entity.Observations), "observation"))
	case graph.EntityDeleted:
		return fmt.Sprintf("− entity %s (%s), %s", c.Entity.Name, c.Entity.EntityType, count(len(c.Entity.Observations), "observation"))
	case graph.ObservationsAdded:
		return fmt.Sprintf("+ %s on %s", count(len(c.Entity.Observations), "observation"), c.Entity.Name)
	case graph.ObservationsDeleted:
		return fmt.Sprintf("− %s on %s", count(len(c.Entity.Observations), "observation"), c.Entity.Name)
	case graph.RelationCreated:
		return fmt.Sprintf("+ relation %s %s %s", c.Relation.From, c.Relation.RelationType, c.Relation.To)
	case graph.RelationDeleted:
		return fmt.Sprintf("− relation %s %s %s", c.Relation.From, c.Relation.RelationType, c.Relation.To)
	}
	return ""
}

// relationDeletions returns the indexes of the relation deletions naming
// each entity, so that counting those that went with a deleted entity
// costs what they are, not a scan of the whole record per entity (a mass
// deletion has 100,000).
func relationDeletions(changes []graph.Change) map[string][]int {
	relsOf := map[string][]int{}
	for j, c := range changes {
		if c.Kind == graph.RelationDeleted {
			relsOf[c.Relation.From] = append(relsOf[c.Relation.From], j)
			if c.Relation.To != c.Relation.From {
				relsOf[c.Relation.To] = append(relsOf[c.Relation.To], j)
			}
		}
	}
	return relsOf
}

// cascadeOf marks as used the relation deletions rels (of the entity
// deleted by change i) after i, which went with it, and returns how many
// there are.
func cascadeOf(rels []int, i int, used []bool) int {
	n := 0
	for _, j := range rels {
		if j > i && !used[j] {
			used[j] = true
			n++
		}
	}
	return n
}
