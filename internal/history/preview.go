package history

import (
	"slices"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Preview returns what undoing records (newest first) would do to g as it
// is now, without changing it: the net effect, as changes from g to the
// memory the undo would leave (a relation the undo would add and remove
// again is in neither), and the conflicts Undo would report. It runs the
// undo on a copy of the part of g the records name, at time now.
func Preview(g *graph.Graph, records []graph.Record, now graph.Time) (effect []graph.Change, conflicts []string) {
	names := touched(records)
	scratch := graph.New()
	before := copyPart(g, scratch, names)
	scratch.SetNow(now)
	conflicts = Undo(scratch, records)
	return netEffect(before, scratch, names), conflicts
}

// touched returns the entity names records name, relation ends included.
func touched(records []graph.Record) map[string]bool {
	names := map[string]bool{}
	for i := range records {
		for _, c := range records[i].Changes {
			switch c.Kind {
			case graph.RelationCreated, graph.RelationDeleted:
				names[c.Relation.From], names[c.Relation.To] = true, true
			default:
				names[c.Entity.Name] = true
			}
		}
	}
	return names
}

// copyPart loads into dst the entities of g named in names and every
// relation from or to them, and returns them as they were (a snapshot).
func copyPart(g *graph.Graph, dst *graph.Graph, names map[string]bool) graph.Snapshot {
	var sel graph.Selection
	seen := map[*graph.Relation]bool{}
	for _, name := range sortedNames(names) {
		if e := g.Entity(name); e != nil {
			sel.Entities = append(sel.Entities, e)
		}
		out, in := g.RelationsOf(name)
		for _, r := range append(slices.Clone(out), in...) {
			if !seen[r] {
				seen[r] = true
				sel.Relations = append(sel.Relations, r)
			}
		}
	}
	snap := sel.Snapshot()
	for _, e := range snap.Entities {
		dst.LoadEntity(e)
	}
	for _, r := range snap.Relations {
		dst.LoadRelation(r)
	}
	return sel.Snapshot()
}

func sortedNames(names map[string]bool) []string {
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

type relKey struct{ from, to, relationType string }

// netEffect returns the changes from before to after, over the entities
// named: entities that appear or go whole, observations gained or lost by
// an entity on both sides, relations that appear or go; entities by name,
// relations in order.
func netEffect(before graph.Snapshot, after *graph.Graph, names map[string]bool) []graph.Change {
	was := map[string]*graph.Entity{}
	for i := range before.Entities {
		was[before.Entities[i].Name] = &before.Entities[i]
	}
	var out []graph.Change
	for _, name := range sortedNames(names) {
		out = append(out, entityEffect(was[name], after.Entity(name))...)
	}
	hadRel := map[relKey]bool{}
	for _, r := range before.Relations {
		hadRel[relKey{r.From, r.To, r.RelationType}] = true
		if !after.HasRelation(r) {
			out = append(out, graph.Change{Kind: graph.RelationDeleted, Relation: r})
		}
	}
	for _, r := range after.Relations() {
		if !hadRel[relKey{r.From, r.To, r.RelationType}] {
			out = append(out, graph.Change{Kind: graph.RelationCreated, Relation: *r})
		}
	}
	return out
}

// entityEffect is the net change of one entity, from b to a (nil: absent).
func entityEffect(b, a *graph.Entity) []graph.Change {
	switch {
	case b == nil && a == nil:
		return nil
	case b == nil:
		return []graph.Change{{Kind: graph.EntityCreated, Entity: *a}}
	case a == nil:
		return []graph.Change{{Kind: graph.EntityDeleted, Entity: *b}}
	case a.EntityType != b.EntityType:
		return []graph.Change{{Kind: graph.EntityDeleted, Entity: *b}, {Kind: graph.EntityCreated, Entity: *a}}
	}
	var out []graph.Change
	if gone := without(b.Observations, a.Observations); len(gone) > 0 {
		out = append(out, graph.Change{Kind: graph.ObservationsDeleted, Entity: graph.Entity{Name: b.Name, Observations: gone}})
	}
	if added := without(a.Observations, b.Observations); len(added) > 0 {
		out = append(out, graph.Change{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: a.Name, Observations: added}})
	}
	return out
}
