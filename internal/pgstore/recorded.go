package pgstore

import (
	"slices"
	"sort"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A write's record (graph.Write) names what it changed. When it holds only
// what moves no row — observations added or deleted, entities and
// relations created or deleted — the rows to write are found from it: the
// changed entities by a binary search each (graph.EntityIndex), the rows
// of the deleted ones by a binary search each over the rows and the items
// left (goneRows), and the new items at the end. The walk of syncTable
// visits every row instead (at a million entities, 60-100 ms a write, most
// of it cache misses on entities that did not change). A rename, an undo,
// a name deleted and created again in one write, or an incomplete record
// walks: they move rows, which the walk places.

// syncEntitiesRecorded is syncTable of the entities for a write whose
// complete record is changes, when the record allows (ok).
func syncEntitiesRecorded(t *table[string], g *graph.Graph, changes []graph.Change, next *int64) (ch changes, ok bool) {
	var created []string
	changed, deleted := make(map[string]bool), make(map[string]bool)
	for _, c := range changes {
		switch c.Kind {
		case graph.EntityCreated:
			created = append(created, c.Entity.Name)
		case graph.EntityDeleted:
			deleted[c.Entity.Name] = true
		case graph.ObservationsAdded, graph.ObservationsDeleted:
			changed[c.Entity.Name] = true
		case graph.RelationCreated, graph.RelationDeleted:
		default:
			return ch, false
		}
	}
	items := g.Entities()
	gone, ok := goneRows(t, items, entityRows, deleted, created)
	if !ok {
		return ch, false
	}
	kept := len(t.rows) - len(gone)
	at := make([]int, 0, len(changed))
	for name := range changed {
		if deleted[name] {
			continue
		}
		i := g.EntityIndex(name)
		if i >= kept {
			continue // created by this write: a new row
		}
		if i < 0 || t.rows[rowOf(i, gone)].key != name {
			return ch, false
		}
		at = append(at, i)
	}
	drop(t, gone, entityRows, &ch)
	slices.Sort(at) // in graph order, as the walk writes them
	for _, i := range at {
		syncRow(&t.rows[i], items[i], entityRows, &ch)
	}
	appendRows(t, items[kept:], entityRows, next, &ch)
	return ch, true
}

// syncRelationsRecorded is syncTable of the relations for a write whose
// complete record is changes, when the record allows (ok): relations are
// only created or deleted by it (a relation never changes in place).
func syncRelationsRecorded(t *table[relationKey], g *graph.Graph, changes []graph.Change, next *int64) (ch changes, ok bool) {
	var created []relationKey
	deleted := make(map[relationKey]bool)
	for _, c := range changes {
		switch c.Kind {
		case graph.RelationCreated:
			created = append(created, relationKeyOf(&c.Relation))
		case graph.RelationDeleted:
			deleted[relationKeyOf(&c.Relation)] = true
		case graph.EntityCreated, graph.EntityDeleted, graph.ObservationsAdded, graph.ObservationsDeleted:
		default:
			return ch, false
		}
	}
	items := g.Relations()
	gone, ok := goneRows(t, items, relationRows, deleted, created)
	if !ok {
		return ch, false
	}
	drop(t, gone, relationRows, &ch)
	appendRows(t, items[len(t.rows):], relationRows, next, &ch)
	return ch, true
}

// goneRows returns the positions in t's rows, ascending, of the keys
// deleted, when items are t's rows' items but for those, followed by the
// items of the keys created (ok). A key deleted and created again moves
// its row, and an item created where a row that goes stood may take its
// seq: the walk places them (not ok). Up to the next row gone, row
// m+shift holds item m, and from it on never again (keys are unique), so
// a binary search over the rows finds each.
func goneRows[K comparable, T any](t *table[K], items []T, kind rowKind[K, T], deleted map[K]bool, created []K) (at []int, ok bool) {
	kept := len(t.rows) - len(deleted)
	if kept < 0 || len(items) != kept+len(created) {
		return nil, false
	}
	for i, k := range created {
		if deleted[k] || kind.key(items[kept+i]) != k {
			return nil, false
		}
		// In the place of a row that goes, and that row's item renamed
		// (a rename is recorded as a deletion and a creation) or the same
		// but for its key: the walk gives it that row's seq (places),
		// which the other replicas read as a rename that carries its
		// relations, and the relations' rows are placed so too.
		if j := kept + i; j < len(t.rows) && deleted[t.rows[j].key] && kind.renamed(t.rows[j], items[j]) {
			return nil, false
		}
	}
	at = make([]int, 0, len(deleted))
	lo := 0
	for shift := range len(deleted) {
		m := lo + sort.Search(kept-lo, func(j int) bool {
			return t.rows[lo+j+shift].key != kind.key(items[lo+j])
		})
		if !deleted[t.rows[m+shift].key] {
			return nil, false
		}
		at = append(at, m+shift)
		lo = m
	}
	return at, true
}

// rowOf is the position in the rows, before the rows at gone go, of the
// row of item i.
func rowOf(i int, gone []int) int {
	for _, p := range gone {
		if p > i {
			break
		}
		i++
	}
	return i
}

// drop removes the rows at gone (ascending) from t and records them gone
// in ch.
func drop[K comparable, T any](t *table[K], gone []int, kind rowKind[K, T], ch *changes) {
	if len(gone) == 0 {
		return
	}
	w := gone[0]
	for j, p := range gone {
		r := t.rows[p]
		ch.gone = append(ch.gone, kind.hash(r.key))
		ch.removed = append(ch.removed, r.seq)
		end := len(t.rows)
		if j+1 < len(gone) {
			end = gone[j+1]
		}
		w += copy(t.rows[w:], t.rows[p+1:end])
	}
	clear(t.rows[w:])
	t.rows = t.rows[:w]
}
