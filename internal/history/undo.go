package history

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Inverse returns the changes that undo changes: each reversed (a
// creation becomes a deletion, an addition a removal), latest first, with
// what is created before what is removed, so that an entity comes back
// before the relations that went with it.
func Inverse(changes []graph.Change) []graph.Change {
	out := make([]graph.Change, 0, len(changes))
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		switch c.Kind {
		case graph.EntityCreated:
			c.Kind = graph.EntityDeleted
		case graph.EntityDeleted:
			c.Kind = graph.EntityCreated
		case graph.ObservationsAdded:
			c.Kind = graph.ObservationsDeleted
		case graph.ObservationsDeleted:
			c.Kind = graph.ObservationsAdded
		case graph.RelationCreated:
			c.Kind = graph.RelationDeleted
		case graph.RelationDeleted:
			c.Kind = graph.RelationCreated
		}
		out = append(out, c)
	}
	rank := map[graph.ChangeKind]int{
		graph.EntityCreated: 0, graph.ObservationsAdded: 1, graph.RelationCreated: 2,
		graph.RelationDeleted: 3, graph.ObservationsDeleted: 4, graph.EntityDeleted: 5,
	}
	slices.SortStableFunc(out, func(a, b graph.Change) int { return rank[a.Kind] - rank[b.Kind] })
	return out
}

// Undo applies the inverse of records, given newest first, to g, as far as
// the graph allows, and returns what it could not do as it was recorded
// (the conflicts: the memory changed since). Run it inside one write with
// the changes tracked: the undo is itself recorded.
func Undo(g *graph.Graph, records []Record) (conflicts []string) {
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
	name := c.Entity.Name
	cur := g.Entity(name)
	switch c.Kind {
	case graph.EntityCreated: // restore a deleted entity
		if cur != nil {
			missing := without(c.Entity.Observations, cur.Observations)
			if len(missing) > 0 {
				g.Apply([]graph.Change{{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: name, Observations: missing, Updated: g.Now()}}})
			}
			return fmt.Sprintf("entity %s exists again: kept it, added the %d observations it lacked", name, len(missing))
		}
		g.Apply([]graph.Change{c})
	case graph.EntityDeleted: // remove a created entity
		if cur == nil {
			return fmt.Sprintf("entity %s is already gone", name)
		}
		if cur.EntityType != c.Entity.EntityType || len(without(cur.Observations, c.Entity.Observations)) > 0 {
			g.Apply([]graph.Change{{Kind: graph.ObservationsDeleted, Entity: graph.Entity{Name: name, Observations: c.Entity.Observations, Updated: g.Now()}}})
			return fmt.Sprintf("entity %s changed since: kept it, removed only the observations it was created with", name)
		}
		g.Apply([]graph.Change{c})
	case graph.ObservationsAdded: // restore deleted observations
		if cur == nil {
			return fmt.Sprintf("entity %s is gone: %s not restored", name, count(len(c.Entity.Observations), "observation"))
		}
		c.Entity.Updated = g.Now()
		g.Apply([]graph.Change{c})
	case graph.ObservationsDeleted: // remove added observations
		if cur == nil {
			return fmt.Sprintf("entity %s is already gone", name)
		}
		gone := without(c.Entity.Observations, cur.Observations)
		c.Entity.Updated = g.Now()
		g.Apply([]graph.Change{c})
		if len(gone) > 0 {
			return fmt.Sprintf("entity %s: %s already removed", name, count(len(gone), "observation"))
		}
	case graph.RelationCreated: // restore a deleted relation
		r := c.Relation
		for _, end := range [2]string{r.From, r.To} {
			if g.Entity(end) == nil {
				return fmt.Sprintf("relation %s %s %s not restored: entity %s is gone", r.From, r.RelationType, r.To, end)
			}
		}
		g.Apply([]graph.Change{c})
	case graph.RelationDeleted: // remove a created relation
		r := c.Relation
		if !g.HasRelation(r) {
			return fmt.Sprintf("relation %s %s %s is already gone", r.From, r.RelationType, r.To)
		}
		g.Apply([]graph.Change{c})
	}
	return ""
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
	// The relation deletions naming each entity, so that counting those
	// that went with a deleted entity costs what they are, not a scan of
	// the whole record per entity (a mass deletion has 100,000).
	relsOf := map[string][]int{}
	for j, c := range changes {
		if c.Kind == graph.RelationDeleted {
			relsOf[c.Relation.From] = append(relsOf[c.Relation.From], j)
			if c.Relation.To != c.Relation.From {
				relsOf[c.Relation.To] = append(relsOf[c.Relation.To], j)
			}
		}
	}
	for i, c := range changes {
		if used[i] {
			continue
		}
		used[i] = true
		var p string
		switch c.Kind {
		case graph.EntityCreated, graph.EntityDeleted:
			sign := "+"
			if c.Kind == graph.EntityDeleted {
				sign = "−"
			}
			p = fmt.Sprintf("%s entity %s (%s), %s", sign, c.Entity.Name, c.Entity.EntityType, count(len(c.Entity.Observations), "observation"))
			if c.Kind == graph.EntityDeleted {
				// The relations that went with it.
				n := 0
				for _, j := range relsOf[c.Entity.Name] {
					if j > i && !used[j] {
						used[j] = true
						n++
					}
				}
				if n > 0 {
					p += ", " + count(n, "relation")
				}
			}
		case graph.ObservationsAdded:
			p = fmt.Sprintf("+ %s on %s", count(len(c.Entity.Observations), "observation"), c.Entity.Name)
		case graph.ObservationsDeleted:
			p = fmt.Sprintf("− %s on %s", count(len(c.Entity.Observations), "observation"), c.Entity.Name)
		case graph.RelationCreated:
			p = fmt.Sprintf("+ relation %s %s %s", c.Relation.From, c.Relation.RelationType, c.Relation.To)
		case graph.RelationDeleted:
			p = fmt.Sprintf("− relation %s %s %s", c.Relation.From, c.Relation.RelationType, c.Relation.To)
		}
		parts = append(parts, p)
	}
	if len(parts) > shown {
		parts = append(parts[:shown], fmt.Sprintf("and %d more", len(parts)-shown))
	}
	return strings.Join(parts, "; ")
}
