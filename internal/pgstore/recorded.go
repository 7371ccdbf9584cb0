package pgstore

import (
	"slices"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A write's record (graph.Write) names what it changed. When it holds only
// what moves no row — observations added or deleted, entities and
// relations created, which the graph appends — the rows to write are
// found from it: the changed entities by a binary search each
// (graph.EntityIndex) and the new items at the end. The walk of syncTable
// visits every row instead (at a million entities, 60-70 ms a write, most
// of it cache misses on entities that did not change). A deletion, a
// rename, an undo or an incomplete record walks: they move or remove
// rows, which the walk places.

// syncEntitiesRecorded is syncTable of the entities for a write whose
// complete record is changes, when the record allows (ok).
func syncEntitiesRecorded(t *table[string], g *graph.Graph, changes []graph.Change, next *int64) (ch changes, ok bool) {
	var created []string
	changed := make(map[string]bool)
	for _, c := range changes {
		switch c.Kind {
		case graph.EntityCreated:
			created = append(created, c.Entity.Name)
		case graph.ObservationsAdded, graph.ObservationsDeleted:
			changed[c.Entity.Name] = true
		case graph.RelationCreated, graph.RelationDeleted:
		default:
			return ch, false
		}
	}
	items, old := g.Entities(), len(t.rows)
	if !appended(t, items, entityRows, created) {
		return ch, false
	}
	at := make([]int, 0, len(changed))
	for name := range changed {
		i := g.EntityIndex(name)
		if i >= old {
			continue // created by this write: a new row
		}
		if i < 0 || t.rows[i].key != name {
			return ch, false
		}
		at = append(at, i)
	}
	slices.Sort(at) // in graph order, as the walk writes them
	for _, i := range at {
		syncRow(&t.rows[i], items[i], entityRows, &ch)
	}
	appendRows(t, items[old:], entityRows, next, &ch)
	return ch, true
}

// syncRelationsRecorded is syncTable of the relations for a write whose
// complete record is changes, when the record allows (ok): relations are
// only created by it (a relation never changes in place).
func syncRelationsRecorded(t *table[relationKey], g *graph.Graph, changes []graph.Change, next *int64) (ch changes, ok bool) {
	var created []relationKey
	for _, c := range changes {
		switch c.Kind {
		case graph.RelationCreated:
			created = append(created, relationKeyOf(&c.Relation))
		case graph.EntityCreated, graph.ObservationsAdded, graph.ObservationsDeleted:
		default:
			return ch, false
		}
	}
	items := g.Relations()
	if !appended(t, items, relationRows, created) {
		return ch, false
	}
	appendRows(t, items[len(t.rows):], relationRows, next, &ch)
	return ch, true
}

// appended reports whether items are t's rows' items followed by those of
// the keys created, in order, as far as their number and the keys of the
// new ones tell.
func appended[K comparable, T any](t *table[K], items []T, kind rowKind[K, T], created []K) bool {
	old := len(t.rows)
	if len(items) != old+len(created) {
		return false
	}
	for i, k := range created {
		if kind.key(items[old+i]) != k {
			return false
		}
	}
	return true
}
