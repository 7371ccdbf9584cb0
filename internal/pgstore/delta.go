package pgstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// delta is what other writers changed between two revisions: the rows they
// removed (by seq) and the rows they wrote.
type delta struct {
	from, rev   int64
	removedEnts []int64
	removedRels []int64
	ents, rels  lineSink // rows written after from, in seq order
}

// readDelta reads the changes between revisions from and rev.
func (s *Store) readDelta(ctx context.Context, tx pgx.Tx, from, rev int64) (*delta, error) {
	d := &delta{from: from, rev: rev}
	rows, err := tx.Query(ctx, "SELECT kind, seq FROM memory_removed WHERE memory_id = $1 AND rev > $2", s.id.Load(), from)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var kind string
		var seq int64
		if err := rows.Scan(&kind, &seq); err != nil {
			rows.Close()
			return nil, err
		}
		if kind == "e" {
			d.removedEnts = append(d.removedEnts, seq)
		} else {
			d.removedRels = append(d.removedRels, seq)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := d.ents.readSince(ctx, tx, "memory_entities", s.id.Load(), from); err != nil {
		return nil, err
	}
	if err := d.rels.readSince(ctx, tx, "memory_relations", s.id.Load(), from); err != nil {
		return nil, err
	}
	d.ents.order()
	d.rels.order()
	return d, nil
}

// errDelta: a delta does not fit the graph it was read against; the caller
// reads the memory whole. It never happens unless the database was changed
// by hand or by a bug, but the whole read is always right.
var errDelta = errors.New("the changes do not fit the graph held")

// apply brings st to the delta's revision: a row written in the place of a
// removed one (the same seq: a name changed where it stands) renames the
// entity, which carries its relations; other removed rows are deleted from
// the graph, rows written in place (an entity's observations changed) are
// changed in place, and new rows (their seq beyond every row st knows) are
// added at the end, so graph order stays the database's. Afterwards st's
// rows must agree with the graph position by position, or apply fails; st
// is then unusable.
func (d *delta) apply(st *state) error {
	ents, rels, err := d.decode()
	if err != nil {
		return err
	}
	renamedEnts := replacedSeqs(st.ents.rows, d.removedEnts, d.ents.seqs)
	renamedRels := replacedSeqs(st.rels.rows, d.removedRels, d.rels.seqs)
	d.applyRemovals(st, renamedEnts, renamedRels)
	if err := d.applyRenames(st, ents, renamedEnts); err != nil {
		return err
	}
	if err := d.applyEntities(st, ents); err != nil {
		return err
	}
	if err := d.applyRelations(st, rels, renamedRels); err != nil {
		return err
	}
	return st.checkRows()
}

// decode decodes the rows written: entities and relations, one per row.
func (d *delta) decode() ([]*graph.Entity, []*graph.Relation, error) {
	f := d.ents.decode()
	ents := f.Graph.Entities()
	if len(ents) != len(d.ents.seqs) || len(f.Unreadable) > 0 {
		return nil, nil, fmt.Errorf("%w: changed entity rows do not decode", errDelta)
	}
	f = d.rels.decode()
	rels := f.Graph.Relations()
	if len(rels) != len(d.rels.seqs) || len(f.Unreadable) > 0 || len(f.Graph.Entities()) > 0 {
		return nil, nil, fmt.Errorf("%w: changed relation rows do not decode", errDelta)
	}
	return ents, rels, nil
}

// applyRemovals deletes from the graph and from st the rows removed, except
// those renamed in place.
func (d *delta) applyRemovals(st *state, renamedEnts, renamedRels map[int64]bool) {
	g := st.g
	if gone := removeSeqs(&st.rels, d.removedRels, renamedRels); len(gone) > 0 {
		rels := make([]graph.Relation, len(gone))
		for i, k := range gone {
			rels[i] = graph.Relation{From: k.from, To: k.to, RelationType: k.relationType}
		}
		g.DeleteRelations(rels)
	}
	if gone := removeSeqs(&st.ents, d.removedEnts, renamedEnts); len(gone) > 0 {
		g.DeleteEntities(gone)
	}
}

// applyRenames renames the entities whose rows were renamed in place, which
// carries their relations; the rows take the new keys (the entities' here,
// the relations' in applyRelations). Several renames may pass names on (A
// to B, then C to A), so they go through names no entity has first.
func (d *delta) applyRenames(st *state, ents []*graph.Entity, renamedEnts map[int64]bool) error {
	g := st.g
	var renames []rename
	for i, e := range ents {
		if renamedEnts[d.ents.seqs[i]] {
			j, _ := findSeq(st.ents.rows, d.ents.seqs[i])
			renames = append(renames, rename{&st.ents.rows[j], e.Name})
		}
	}
	if len(renames) > 1 {
		for n, rn := range renames {
			tmp := fmt.Sprintf("\x00pgstore rename %d", n)
			for g.Entity(tmp) != nil {
				tmp += "'"
			}
			if _, err := g.Rename(rn.row.key, tmp); err != nil {
				return fmt.Errorf("%w: renaming %q: %v", errDelta, rn.row.key, err)
			}
			rn.row.key = tmp
		}
	}
	for _, rn := range renames {
		if _, err := g.Rename(rn.row.key, rn.to); err != nil {
			return fmt.Errorf("%w: renaming %q: %v", errDelta, rn.row.key, err)
		}
		rn.row.key = rn.to
	}
	return nil
}

// applyEntities applies the entity rows written: in place or new.
func (d *delta) applyEntities(st *state, ents []*graph.Entity) error {
	g := st.g
	for i, e := range ents {
		seq, line, sum := d.ents.seqs[i], d.ents.line(i), d.ents.sums[i]
		if j, ok := findSeq(st.ents.rows, seq); ok {
			ge := g.Entity(e.Name)
			if ge == nil || st.ents.rows[j].key != e.Name {
				return fmt.Errorf("%w: entity %q is not where its row is", errDelta, e.Name)
			}
			if !setObservations(g, ge, e) {
				// Deleted and created again with another type by one write,
				// as the last entity, so it kept its place: do the same
				// (the check at the end proves it was the last).
				g.DeleteEntities([]string{e.Name})
				ge, _ = g.LoadEntity(loaded(e))
			}
			// The row's times, not those the operations above recorded.
			ge.Created, ge.Updated, ge.ObservedAt = e.Created, e.Updated, e.ObservedAt
			ge.SetEncodedLine(line)
			st.ents.rows[j].sum = sum
			entityRows.bring(&st.ents.rows[j], ge)
			continue
		}
		if n := len(st.ents.rows); n > 0 && st.ents.rows[n-1].seq >= seq {
			return fmt.Errorf("%w: new entity %q inside the graph order", errDelta, e.Name)
		}
		ne, merged := g.LoadEntity(loaded(e))
		if merged {
			return fmt.Errorf("%w: new entity %q exists", errDelta, e.Name)
		}
		ne.SetEncodedLine(line)
		st.ents.rows = append(st.ents.rows, row[string]{key: e.Name, seq: seq, sum: sum})
		entityRows.bring(&st.ents.rows[len(st.ents.rows)-1], ne)
	}
	return nil
}

// applyRelations applies the relation rows written: renamed in place (the
// entities' renames carried them; here the rows take the new keys), or new
// (a relation never changes otherwise).
func (d *delta) applyRelations(st *state, rels []*graph.Relation, renamedRels map[int64]bool) error {
	g := st.g
	for i, r := range rels {
		seq, sum := d.rels.seqs[i], d.rels.sums[i]
		if renamedRels[seq] {
			j, _ := findSeq(st.rels.rows, seq)
			st.rels.rows[j] = row[relationKey]{key: relationKey{r.From, r.To, r.RelationType}, seq: seq, sum: sum}
			continue
		}
		if n := len(st.rels.rows); n > 0 && st.rels.rows[n-1].seq >= seq {
			return fmt.Errorf("%w: a relation changed or was added inside the graph order", errDelta)
		}
		nr, dup := g.LoadRelation(graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created})
		if dup {
			return fmt.Errorf("%w: new relation exists", errDelta)
		}
		st.rels.rows = append(st.rels.rows, row[relationKey]{key: relationKeyOf(nr), seq: seq, sum: sum})
		relationRows.bring(&st.rels.rows[len(st.rels.rows)-1], nr)
	}
	return nil
}

// checkRows reports whether st's rows and its graph agree, position by
// position.
func (st *state) checkRows() error {
	g := st.g
	if gs := g.Entities(); len(gs) != len(st.ents.rows) {
		return fmt.Errorf("%w: %d entities, %d rows", errDelta, len(gs), len(st.ents.rows))
	}
	for i, e := range g.Entities() {
		if e.Name != st.ents.rows[i].key {
			return fmt.Errorf("%w: entity %q at %d, row %q", errDelta, e.Name, i, st.ents.rows[i].key)
		}
	}
	if gr := g.Relations(); len(gr) != len(st.rels.rows) {
		return fmt.Errorf("%w: %d relations, %d rows", errDelta, len(gr), len(st.rels.rows))
	}
	for i, r := range g.Relations() {
		if relationKeyOf(r) != st.rels.rows[i].key {
			return fmt.Errorf("%w: relation order differs at %d", errDelta, i)
		}
	}
	return nil
}

// loaded is what LoadEntity takes to add e, read from a row, to the graph.
func loaded(e *graph.Entity) graph.Entity {
	return graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: e.Observations, Extra: e.Extra,
		Created: e.Created, Updated: e.Updated, ObservedAt: e.ObservedAt}
}

// rename is an entity row that a name changed where it stands took.
type rename struct {
	row *row[string]
	to  string
}

// replacedSeqs returns the seqs of rows that were removed and whose seq a
// row written since took: a name changed where it stands.
func replacedSeqs[K comparable](rows []row[K], removed, written []int64) map[int64]bool {
	if len(removed) == 0 || len(written) == 0 {
		return nil
	}
	out := make(map[int64]bool)
	for _, q := range removed {
		if _, known := findSeq(rows, q); known {
			if _, again := slices.BinarySearch(written, q); again {
				out[q] = true
			}
		}
	}
	return out
}

// removeSeqs drops t's rows with the given seqs, but those in keep, and
// returns their keys.
func removeSeqs[K comparable](t *table[K], seqs []int64, keep map[int64]bool) []K {
	if len(seqs) == 0 {
		return nil
	}
	drop := make(map[int64]bool, len(seqs))
	for _, q := range seqs {
		if _, ok := findSeq(t.rows, q); ok && !keep[q] {
			drop[q] = true
		}
	}
	if len(drop) == 0 {
		return nil
	}
	var gone []K
	t.rows = slices.DeleteFunc(t.rows, func(r row[K]) bool {
		if drop[r.seq] {
			gone = append(gone, r.key)
			return true
		}
		return false
	})
	return gone
}

// findSeq finds the row with seq in rows, which are in seq order.
func findSeq[K comparable](rows []row[K], seq int64) (int, bool) {
	return slices.BinarySearchFunc(rows, seq, func(r row[K], q int64) int { return cmp.Compare(r.seq, q) })
}

// setObservations changes ge's observations to want's, in place, with the
// operations the tools use: those of ge's list that want keeps in order
// stay, the others are deleted, and want's rest is appended. It reports
// whether ge is now exactly want; it changes nothing when their types or
// Extra differ, which no tool changes in place.
func setObservations(g *graph.Graph, ge, want *graph.Entity) bool {
	if ge.EntityType != want.EntityType || !bytes.Equal(ge.Extra, want.Extra) {
		return false
	}
	var drop []string
	i := 0
	for _, o := range ge.Observations {
		if i < len(want.Observations) && o == want.Observations[i] {
			i++
		} else {
			drop = append(drop, o)
		}
	}
	if len(drop) > 0 {
		g.DeleteObservations([]graph.ObservationDeletion{{EntityName: ge.Name, Observations: drop}})
	}
	if tail := want.Observations[i:]; len(tail) > 0 {
		g.AddObservations([]graph.ObservationAddition{{EntityName: ge.Name, Contents: tail}})
	}
	return slices.Equal(ge.Observations, want.Observations)
}
