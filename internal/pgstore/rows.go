package pgstore

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// changes are the rows a mutation wrote (inserted, changed or moved in
// graph order) and deleted.
type changes struct {
	keys    [][]byte
	seqs    []int64
	lines   [][]byte
	created []*time.Time // the times columns of the written rows; nil: unknown
	updated []*time.Time
	gone    [][]byte
	removed []int64 // seqs no row has any more: deleted, or moved to a new seq
}

// Removed rows are remembered for the last removedKept writes, so a Store
// that fell no further behind reads only what changed; pruned every
// removedPruneEvery writes.
var (
	removedKept       int64 = 4096
	removedPruneEvery int64 = 256
)

func (ch *changes) write(key []byte, seq int64, line []byte, times [2]graph.Time) {
	ch.keys, ch.seqs, ch.lines = append(ch.keys, key), append(ch.seqs, seq), append(ch.lines, line)
	ch.created, ch.updated = append(ch.created, timeColumn(times[0])), append(ch.updated, timeColumn(times[1]))
}

// timeColumn is a time as a timestamptz column holds it: NULL when unknown.
func timeColumn(t graph.Time) *time.Time {
	if t == 0 {
		return nil
	}
	u := t.UTC()
	return &u
}

// table is what the database holds of one kind of line, in graph order
// (ascending seq).
type table[K comparable] struct{ rows []row[K] }

// row is what the database holds for one entity or relation.
type row[K comparable] struct {
	key K
	seq int64
	sum lineSum // of the line
	// src is the entity or relation the row was last brought to (nil
	// when not known), and rev that entity's revision then (a relation's
	// is 0). The same entity at the same revision is unchanged (every
	// change of its line gives it a new one), and so is the same
	// relation, which never changes but for its ends' names, which are
	// its key: neither needs its line encoded to be found unchanged.
	src any
	rev uint64
}

// lineSum identifies a line: a row keeps its line's sum, not the line,
// which at a million entities would hold the whole memory again beside
// the graph. Lines that differ have the same sum once in 2^64 (a write
// would then miss a row): a server writing a thousand lines a second
// would meet one in half a billion years.
type lineSum uint64

var lineSeed = maphash.MakeSeed()

func sumLine(line []byte) lineSum { return lineSum(maphash.Bytes(lineSeed, line)) }

// bring records in r the item it now holds.
func (kind rowKind[K, T]) bring(r *row[K], item T) {
	r.src, r.rev = item, kind.revision(item)
}

// unchanged reports whether item is known without its line to be what
// the row r, of the same key, holds.
func (kind rowKind[K, T]) unchanged(r *row[K], item T) bool {
	return r.src != nil && r.src == any(item) && r.rev == kind.revision(item)
}

// syncTable brings t to items, the graph's entities or relations in graph
// order, and returns the rows to write.
//
// The usual mutation changes a few lines in place or appends at the end, so
// first t and items are walked side by side while the keys agree: a line
// that differs is a change, and items beyond the end of t are new. An item
// that is the row's own, at the revision the row was brought to, is
// unchanged without its line (rowKind.unchanged), so the walk costs a
// pointer and a revision per item. Only from the first
// disagreement on (something was deleted, or deleted and created again, or
// renamed) are the remaining rows looked up by key: an item is new when its
// key is unknown, and moved when its known seq is not above its
// predecessor's (it was deleted and created again within the mutation).
// Known keys no item has are deleted. A new item at the position of a row
// that is deleted takes that row's seq when it is that row renamed (see
// rowKind.renamed) and the seq is above its predecessor's: a name changed
// where it stands (rename, merge) keeps its place, and every row after it
// keeps its own. Otherwise new and moved items get the next sequence
// numbers, so the database keeps graph order.
func syncTable[K comparable, T any](t *table[K], items []T, kind rowKind[K, T], next *int64) changes {
	var ch changes
	i := syncPrefix(t, items, kind, &ch)
	if i < len(t.rows) {
		syncRest(t, items, i, kind, next, &ch)
		return ch
	}
	appendRows(t, items[i:], kind, next, &ch)
	return ch
}

// appendRows appends the rows of new items, with the next sequence
// numbers.
func appendRows[K comparable, T any](t *table[K], items []T, kind rowKind[K, T], next *int64, ch *changes) {
	for _, it := range items {
		k, line := kind.key(it), kind.line(it)
		t.rows = append(t.rows, row[K]{key: k, seq: *next, sum: sumLine(line)})
		kind.bring(&t.rows[len(t.rows)-1], it)
		ch.write(kind.hash(k), *next, line, kind.times(it))
		*next++
	}
}

// syncRow writes the row r of the same key as it when its line changed.
func syncRow[K comparable, T any](r *row[K], it T, kind rowKind[K, T], ch *changes) {
	if kind.unchanged(r, it) {
		return
	}
	line := kind.line(it)
	if sum := sumLine(line); sum != r.sum {
		r.sum = sum
		ch.write(kind.hash(r.key), r.seq, line, kind.times(it))
	}
	kind.bring(r, it)
}

// syncPrefix is syncTable's fast path: it writes the rows of the leading
// items in the known rows' order whose lines changed, and returns how many
// items lead so.
func syncPrefix[K comparable, T any](t *table[K], items []T, kind rowKind[K, T], ch *changes) int {
	i, n := 0, min(len(items), len(t.rows))
	for ; i < n; i++ {
		if kind.key(items[i]) != t.rows[i].key {
			break
		}
		syncRow(&t.rows[i], items[i], kind, ch)
	}
	return i
}

// syncRest is syncTable's slow path, from items[i] on, where the known
// rows no longer follow the items: it looks the rest of the known rows up
// by key.
func syncRest[K comparable, T any](t *table[K], items []T, i int, kind rowKind[K, T], next *int64, ch *changes) {
	rest := make(map[K]row[K], len(t.rows)-i)
	for _, r := range t.rows[i:] {
		rest[r.key] = r
	}
	var last int64
	if i > 0 {
		last = t.rows[i-1].seq
	}
	// old[p] is read before the append of item p overwrites it.
	pl := &places[K, T]{kind: kind, items: items[i:], old: t.rows[i:]}
	t.rows = t.rows[:i] // rows[i:] are in rest now, so appending may overwrite them
	for p, it := range items[i:] {
		k := kind.key(it)
		r, ok := rest[k]
		delete(rest, k)
		if ok && r.seq > last && kind.unchanged(&r, it) {
			last = r.seq
			t.rows = append(t.rows, r)
			continue
		}
		line := kind.line(it)
		sum := sumLine(line)
		switch {
		case ok && r.seq > last && r.sum == sum:
		case ok && r.seq > last:
			r.sum = sum
			ch.write(kind.hash(k), r.seq, line, kind.times(it))
		case !ok && pl.inPlace(p, it, last):
			// In the place of a row that goes: the seq stays in
			// order, and rows after it keep theirs.
			r = row[K]{key: k, seq: pl.old[p].seq, sum: sum}
			ch.write(kind.hash(k), r.seq, line, kind.times(it))
		default:
			if ok {
				ch.removed = append(ch.removed, r.seq)
			}
			r = row[K]{key: k, seq: *next, sum: sum}
			*next++
			ch.write(kind.hash(k), r.seq, line, kind.times(it))
		}
		kind.bring(&r, it)
		last = r.seq
		t.rows = append(t.rows, r)
	}
	for k, r := range rest {
		ch.gone = append(ch.gone, kind.hash(k))
		ch.removed = append(ch.removed, r.seq)
	}
}

// places tells whether a new item takes the seq of the known row at its
// position, one that goes (see syncTable). Which rows go is worked out at
// the first renamed item: a write that only deletes or appends never pays
// for it.
type places[K comparable, T any] struct {
	kind      rowKind[K, T]
	items     []T      // the items from the first out of order on
	old       []row[K] // the known rows from there, overwritten as items are placed
	keep      map[K]bool
	keptAfter []bool // keptAfter[q]: a row after old[q] stays
}

// inPlace reports whether item p, it, takes old[p]'s seq; last is the
// seq of the item before it.
func (pl *places[K, T]) inPlace(p int, it T, last int64) bool {
	if p >= len(pl.old) || pl.old[p].seq <= last || !pl.kind.renamed(pl.old[p], it) {
		return false
	}
	if pl.keep == nil {
		pl.keep = make(map[K]bool, len(pl.items))
		for _, it := range pl.items {
			pl.keep[pl.kind.key(it)] = true
		}
		pl.keptAfter = make([]bool, len(pl.old))
		for q := len(pl.old) - 2; q >= p; q-- { // old[:p] is overwritten already
			pl.keptAfter[q] = pl.keptAfter[q+1] || pl.keep[pl.old[q+1].key]
		}
	}
	return !pl.keep[pl.old[p].key] && (pl.kind.renamedLast || pl.keptAfter[p])
}

// queueChanges queues at most three statements for one table, however many
// rows changed: arrays travel as parameters. Written rows carry the
// revision rev, and removed ones are remembered under it, so another Store
// can read only what changed since its revision.
func queueChanges(b *pgx.Batch, table string, kind byte, memory, rev int64, ch changes) {
	if len(ch.gone) > 0 {
		b.Queue("DELETE FROM "+table+" WHERE memory_id = $1 AND key = ANY($2::bytea[])", memory, ch.gone)
	}
	if len(ch.removed) > 0 {
		b.Queue(`INSERT INTO memory_removed (memory_id, rev, kind, seq) SELECT $1, $2, $3, unnest($4::bigint[])`,
			memory, rev, string(kind), ch.removed)
	}
	if len(ch.keys) == 0 {
		return
	}
	if kind == 'e' {
		b.Queue("INSERT INTO "+table+` (memory_id, key, seq, line, rev, created_at, updated_at)
			SELECT $1, u.key, u.seq, u.line, $5, u.created_at, u.updated_at
			FROM unnest($2::bytea[], $3::bigint[], $4::bytea[], $6::timestamptz[], $7::timestamptz[]) AS u(key, seq, line, created_at, updated_at)
			ON CONFLICT (memory_id, key) DO UPDATE SET seq = excluded.seq, line = excluded.line, rev = excluded.rev,
				created_at = excluded.created_at, updated_at = excluded.updated_at`,
			memory, ch.keys, ch.seqs, ch.lines, rev, ch.created, ch.updated)
		return
	}
	b.Queue("INSERT INTO "+table+` (memory_id, key, seq, line, rev, created_at)
		SELECT $1, u.key, u.seq, u.line, $5, u.created_at FROM unnest($2::bytea[], $3::bigint[], $4::bytea[], $6::timestamptz[]) AS u(key, seq, line, created_at)
		ON CONFLICT (memory_id, key) DO UPDATE SET seq = excluded.seq, line = excluded.line, rev = excluded.rev, created_at = excluded.created_at`,
		memory, ch.keys, ch.seqs, ch.lines, rev, ch.created)
}

// rowKind is how syncTable handles one kind of line.
type rowKind[K comparable, T any] struct {
	key  func(T) K
	line func(T) []byte
	hash func(K) []byte
	// times are the row's time columns: created, updated.
	times func(T) [2]graph.Time
	// renamed reports whether item is the row old with another key: the
	// entity the row was brought to, renamed in place (whatever else the
	// write changed), or an item all else equal; for a relation, with an
	// end kept.
	renamed func(old row[K], item T) bool
	// renamedLast: a renamed item keeps its row's seq even with no row
	// after it that stays. An entity does, so that catching up renames it
	// and its relations follow; a relation needs not (a new seq at the
	// end costs nothing), and must not, as deleting an entity and
	// relating another to its neighbour in one write would look like it.
	renamedLast bool
	// revision is an item's revision (graph.Entity.Revision; 0 for a
	// relation).
	revision func(T) uint64
}

var (
	entityRows = rowKind[string, *graph.Entity]{entityKey, entityLine, hashEntity, entityTimes, func(old row[string], e *graph.Entity) bool {
		// The entity the row was brought to, under a new name (the
		// graph renames an entity in place), or one the same but for
		// its name.
		if old.src == any(e) {
			return true
		}
		was := &graph.Entity{Name: old.key, EntityType: e.EntityType, Observations: e.Observations, Extra: e.Extra,
			Created: e.Created, Updated: e.Updated, ObservedAt: e.ObservedAt}
		return sumLine(graph.AppendEntity(nil, was)) == old.sum
	}, true, (*graph.Entity).Revision}
	relationRows = rowKind[relationKey, *graph.Relation]{relationKeyOf, relationLine, hashRelation, relationTimes, func(old row[relationKey], r *graph.Relation) bool {
		k := old.key
		kept := r.From == k.from || r.To == k.to || (k.from == k.to && r.From == r.To)
		return kept && sumLine(graph.AppendRelation(nil, &graph.Relation{From: k.from, To: k.to, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created})) == old.sum
	}, false, func(*graph.Relation) uint64 { return 0 }}
)

func entityTimes(e *graph.Entity) [2]graph.Time     { return [2]graph.Time{e.Created, e.Updated} }
func relationTimes(r *graph.Relation) [2]graph.Time { return [2]graph.Time{r.Created, r.Created} }

func entityKey(e *graph.Entity) string { return e.Name }

func relationKeyOf(r *graph.Relation) relationKey {
	return relationKey{r.From, r.To, r.RelationType}
}

// entityLine returns e's memory-file line, cached on the entity until it
// changes, as the file store caches it.
func entityLine(e *graph.Entity) []byte {
	if l := e.EncodedLine(); l != nil {
		return l
	}
	l := graph.AppendEntity(nil, e)
	e.SetEncodedLine(l)
	return l
}

// relationLine returns r's memory-file line. A relation never changes, and
// its line is short: it is encoded when its row is written, not cached.
func relationLine(r *graph.Relation) []byte { return graph.AppendRelation(nil, r) }

func hashEntity(name string) []byte {
	h := sha256.Sum256([]byte(name))
	return h[:]
}

// hashRelation hashes the triple with each part's length first, so no two
// triples share an encoding.
func hashRelation(k relationKey) []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64+len(k.from)+len(k.to)+len(k.relationType))
	for _, s := range [3]string{k.from, k.to, k.relationType} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	h := sha256.Sum256(b)
	return h[:]
}
