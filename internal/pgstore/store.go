package pgstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Store is one memory in the database and the graph last read from it. It
// is safe for concurrent use.
type Store struct {
	db     *DB
	name   string
	id     atomic.Int64 // memories.id; 0 until the memory's row exists
	origin string       // names this Store's writes in notifications
	ownsDB bool

	lastOwn atomic.Int64 // the revision of this Store's last write

	wholeReads, deltaReads atomic.Int64 // how the Store caught up, for tests

	writing chan struct{} // holds a token while a write of this Store runs

	// Guarded by writing: the newest history id this Store wrote, and
	// whether writing the history failed (the log said so once).
	lastID        string
	historyFailed bool

	mu     sync.RWMutex // guards the fields below
	cur    *state       // nil: read the memory first
	loaded bool         // false: cur is ahead of or behind the database
}

// state is the graph at one revision and what the database holds for it, to
// find what a mutation changed without looking inside the graph.
type state struct {
	g    *graph.Graph
	rev  int64
	ents table[string]
	rels table[relationKey]
}

type relationKey struct{ from, to, relationType string }

// Name returns the memory's name.
func (s *Store) Name() string { return s.name }

// Close releases the connection pool if Open made it for this Store.
func (s *Store) Close() {
	if s.ownsDB {
		s.db.Close()
	}
}

// Exists reports whether the memory has its row in the database, as this
// Store last saw: a memory nobody wrote has none, and reads of it create
// none.
func (s *Store) Exists() bool { return s.id.Load() != 0 }

// lookup returns the memory's row id, looking it up by name while the
// Store knows none; 0 when the memory has no row.
func (s *Store) lookup(ctx context.Context) (int64, error) {
	if id := s.id.Load(); id != 0 {
		return id, nil
	}
	return s.findRow(ctx)
}

// findRow looks the memory's row up by name, as committed, and returns its
// id, 0 when there is none.
func (s *Store) findRow(ctx context.Context) (int64, error) {
	var id int64
	err := s.db.pool.QueryRow(ctx, "SELECT id FROM memories WHERE name = $1", s.name).Scan(&id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, err
	}
	s.id.CompareAndSwap(0, id)
	return s.id.Load(), nil
}

// View runs fn on the latest committed graph: it asks the database for the
// memory's revision and reads the memory again only if it moved. fn must
// not modify the graph or keep it after returning. A memory that has no
// row yet reads as empty, and the read creates nothing. View's queries are
// bounded by Options.QueryTimeout.
func (s *Store) View(fn func(*graph.Graph)) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.db.opts.QueryTimeout)
	defer cancel()
	return s.ViewContext(ctx, fn)
}

// ViewContext is View bounded by ctx.
func (s *Store) ViewContext(ctx context.Context, fn func(*graph.Graph)) error {
	id, err := s.lookup(ctx)
	if err != nil {
		return s.failCtx(ctx, "reading", err)
	}
	var rev int64
	if id != 0 {
		err = s.db.pool.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1", id).Scan(&rev)
	}
	if id == 0 || errors.Is(err, pgx.ErrNoRows) {
		// No row, or the row a first write of this Store is creating and
		// has not committed yet: the memory is empty.
		fn(graph.New())
		return nil
	}
	if err != nil {
		return s.failCtx(ctx, "reading", err)
	}
	s.mu.RLock()
	if s.loaded && s.cur.rev >= rev {
		defer s.mu.RUnlock()
		fn(s.cur.g)
		return nil
	}
	s.mu.RUnlock()

	// Read without holding mu: readers go on with the graph they have, and
	// a writer waiting for mu holds no connection this read needs. First
	// only what changed since the graph held; if that cannot be applied,
	// the whole memory.
	for whole := false; ; whole = true {
		s.mu.RLock()
		base, from := s.cur, s.revLocked()
		s.mu.RUnlock()
		if whole {
			from = -1
		}
		var c catchUp
		err = pgx.BeginTxFunc(ctx, s.db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
			func(tx pgx.Tx) (err error) { c, err = s.catchUp(ctx, tx, from); return err })
		if err != nil {
			return s.failCtx(ctx, "reading", err)
		}
		s.mu.Lock()
		if s.installLocked(base, c) {
			defer s.mu.Unlock()
			fn(s.cur.g)
			return nil
		}
		s.mu.Unlock()
	}
}

// revLocked is the revision of the graph held, or -1.
func (s *Store) revLocked() int64 {
	if !s.loaded {
		return -1
	}
	return s.cur.rev
}

// catchUp is what a Store read to catch up with the database: the whole
// memory (state), or the changes since the revision it held (delta).
type catchUp struct {
	state *state
	delta *delta
}

// catchUp reads what brings a graph at revision from (-1: none) to the
// database's revision: the changes since, if the database still knows
// every removal since then, else the whole memory.
func (s *Store) catchUp(ctx context.Context, tx pgx.Tx, from int64) (catchUp, error) {
	var rev, since int64
	if err := tx.QueryRow(ctx, "SELECT revision, removed_since FROM memories WHERE id = $1", s.id.Load()).Scan(&rev, &since); err != nil {
		return catchUp{}, err
	}
	if from >= 0 && from >= since && from <= rev {
		s.deltaReads.Add(1)
		d, err := s.readDelta(ctx, tx, from, rev)
		return catchUp{delta: d}, err
	}
	s.wholeReads.Add(1)
	st, err := s.read(ctx, tx)
	return catchUp{state: st}, err
}

// installLocked makes what c read the graph held, if it is newer, and
// reports whether the graph held is now at least as new as c. It applies a
// delta only to the graph it was read against; one that does not apply
// leaves no graph held (a whole read follows).
func (s *Store) installLocked(base *state, c catchUp) bool {
	switch {
	case c.state != nil:
		if !s.loaded || s.cur.rev < c.state.rev {
			s.cur, s.loaded = c.state, true
		}
		return true
	case s.loaded && s.cur.rev >= c.delta.rev:
		return true
	case !s.loaded || s.cur != base || s.cur.rev != c.delta.from:
		return false
	}
	if err := c.delta.apply(s.cur); err != nil {
		s.loaded = false
		s.db.opts.Logf("memory %q: reading it whole: %v", s.name, err)
		return false
	}
	s.cur.rev = c.delta.rev
	return true
}

// Update runs the mutation fn in one transaction: it locks the memory's
// row, reads the memory again if another writer moved its revision, runs
// fn, and writes what fn changed, which it reports. fn must validate before
// it changes anything: when it returns an error nothing is written and the
// error is returned as it is. Other errors: ErrLockTimeout, or a database
// error after which nothing was written (the transaction rolled back), or
// whose commit was cut off (the error says so). The whole write, its wait
// for an earlier write of this Store included, is bounded by
// Options.WriteTimeout; a write that runs out of time fails with ErrTimeout
// and says whether it may have been saved. The first write that changes a
// memory with no row creates the row, in the same transaction.
func (s *Store) Update(ctx context.Context, fn func(*graph.Graph) error) (changed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.db.opts.WriteTimeout)
	defer cancel()
	select {
	case s.writing <- struct{}{}:
		defer func() { <-s.writing }()
	case <-ctx.Done():
		return false, s.fail("writing", ctx.Err())
	}
	id, err := s.lookup(ctx)
	if err != nil {
		return false, s.failCtx(ctx, "writing", err)
	}
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return false, s.failCtx(ctx, "writing", err)
	}
	committed := false
	defer func() {
		if !committed {
			// Bounded too: a database that hangs must not hold the write.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.db.opts.QueryTimeout)
			defer cancel()
			tx.Rollback(rctx)
		}
	}()
	if id == 0 {
		// The memory's first write: its row, which a rollback takes away
		// again. Another replica creating it at once makes this wait for
		// that one's commit, and then use its row.
		if _, err := tx.Exec(ctx, "INSERT INTO memories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", s.name); err != nil {
			return false, s.failCtx(ctx, "writing", err)
		}
		if err := tx.QueryRow(ctx, "SELECT id FROM memories WHERE name = $1", s.name).Scan(&id); err != nil {
			return false, s.failCtx(ctx, "writing", err)
		}
		s.id.Store(id)
		defer func() {
			if !committed {
				s.id.CompareAndSwap(id, 0) // lookup finds it, if another replica made it
			}
		}()
	}

	var rev, next int64
	err = tx.QueryRow(ctx, "SELECT revision, next_seq FROM memories WHERE id = $1 FOR UPDATE", id).Scan(&rev, &next)
	if err != nil {
		return false, s.failCtx(ctx, "writing", err)
	}
	// Under the row lock every other writer waits, so reading in this
	// transaction (read committed) gives exactly revision rev.
	s.mu.RLock()
	base, from := s.cur, s.revLocked()
	s.mu.RUnlock()
	var c catchUp
	if from != rev {
		if c, err = s.catchUp(ctx, tx, from); err != nil {
			return false, s.failCtx(ctx, "writing", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if from != rev && !s.installLocked(base, c) {
		if c, err = s.catchUp(ctx, tx, -1); err != nil {
			return false, s.failCtx(ctx, "writing", err)
		}
		s.installLocked(nil, c)
	}
	g := s.cur.g
	before := g.Version()
	g.TrackChanges()
	err = fn(g)
	changes, _ := g.TakeChanges()
	if err != nil {
		if g.Version() != before {
			s.loaded = false // fn broke its contract; forget what it did
		}
		return false, err
	}
	if g.Version() == before {
		return false, nil // and a row just created is rolled back
	}
	// From here on the graph is ahead of the database until COMMIT.
	s.loaded = false
	b := &pgx.Batch{}
	rev++
	queueChanges(b, "memory_entities", 'e', s.id.Load(), rev, syncTable(&s.cur.ents, g.Entities(), entityRows, &next))
	queueChanges(b, "memory_relations", 'r', s.id.Load(), rev, syncTable(&s.cur.rels, g.Relations(), relationRows, &next))
	b.Queue("UPDATE memories SET revision = $2, next_seq = $3 WHERE id = $1", s.id.Load(), rev, next)
	if rev%removedPruneEvery == 0 && rev > removedKept {
		b.Queue("DELETE FROM memory_removed WHERE memory_id = $1 AND rev <= $2", s.id.Load(), rev-removedKept)
		b.Queue("UPDATE memories SET removed_since = greatest(removed_since, $2) WHERE id = $1", s.id.Load(), rev-removedKept)
	}
	b.Queue("SELECT pg_notify($1, $2)", notifyChannel, notice{s.id.Load(), rev, s.origin}.String())
	histAt, histID := s.queueHistory(ctx, b, rev, changes)
	if err := s.sendBatch(ctx, tx, b, histAt); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Not ErrTimeout, whose Timeout says nothing was written.
			err = fmt.Errorf("%v (limit %v)", ErrTimeout, s.db.opts.WriteTimeout)
		}
		return false, fmt.Errorf("committing memory %q to PostgreSQL: %w (whether the change was saved is unknown; read the memory to see)", s.name, databaseError{err})
	}
	committed = true
	s.cur.rev, s.loaded = rev, true
	s.lastOwn.Store(rev)
	if histID != "" {
		s.lastID = histID
	}
	return true, nil
}

// historyTrimEvery is how many revisions apart a memory's history is
// trimmed, in the write's transaction.
const historyTrimEvery = 100

// queueHistory queues, after the write's statements, the write's history
// record (and, every historyTrimEvery revisions, the trim), between a
// SAVEPOINT and its RELEASE, so that a history that cannot be written
// never fails the write (sendBatch). It returns the index of the SAVEPOINT
// in the batch (-1: none) and the record's id.
func (s *Store) queueHistory(ctx context.Context, b *pgx.Batch, rev int64, changes []graph.Change) (int, string) {
	lim := *s.db.opts.History
	trim := rev%historyTrimEvery == 0
	if (lim.Off() || len(changes) == 0) && !trim {
		return -1, ""
	}
	at, id := b.Len(), ""
	b.Queue("SAVEPOINT history")
	memory := s.id.Load()
	if !lim.Off() && len(changes) > 0 {
		now := time.Now()
		author := history.AuthorOf(ctx)
		id = history.NewID(now, s.lastID)
		text := history.AppendChanges(nil, changes)
		b.Queue("INSERT INTO memory_history (memory_id, id, time, tool, client, changes, size) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			memory, id, now.UTC().Truncate(time.Second), author.Tool, author.Client, string(text), len(text))
		if int64(len(text)) > lim.MaxBytes {
			s.db.opts.Logf("memory %q: %v", s.name, &history.OverBoundError{Size: int64(len(text)), Bound: lim.MaxBytes})
		}
	}
	if trim {
		if lim.Off() {
			b.Queue("DELETE FROM memory_history WHERE memory_id = $1", memory)
		} else {
			b.Queue("DELETE FROM memory_history WHERE memory_id = $1 AND time < $2", memory, time.Now().Add(-lim.MaxAge))
			// Past MaxBytes, the oldest rows go until 90 % of it is left;
			// never the newest, whatever its size (a mass deletion stays
			// undoable).
			b.Queue(`WITH t AS (SELECT id, sum(size) OVER (ORDER BY id DESC) AS total, row_number() OVER (ORDER BY id DESC) AS n
					FROM memory_history WHERE memory_id = $1)
				DELETE FROM memory_history h USING t
				WHERE h.memory_id = $1 AND h.id = t.id AND t.total > $3 AND t.n > 1 AND (SELECT max(total) FROM t) > $2`,
				memory, lim.MaxBytes, lim.MaxBytes*9/10)
		}
	}
	b.Queue("RELEASE SAVEPOINT history")
	return at, id
}

// sendBatch sends the write's batch. A statement after the SAVEPOINT at
// histAt that fails is the history's: it is rolled back to the savepoint
// and the write goes on, and the log says so once.
func (s *Store) sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, histAt int) error {
	br := tx.SendBatch(ctx, b)
	failedAt, n := -1, b.Len()
	var err error
	for i := range n {
		if _, err = br.Exec(); err != nil {
			failedAt = i
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if histAt >= 0 {
			s.historyFailed = false
		}
		return nil
	}
	if histAt < 0 || failedAt <= histAt {
		return s.failCtx(ctx, "writing", err)
	}
	if _, rerr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT history"); rerr != nil {
		return s.failCtx(ctx, "writing", rerr)
	}
	if !s.historyFailed {
		s.db.opts.Logf("the history of memory %q could not be written (the write was saved; until this is fixed its history misses writes): %v", s.name, databaseError{err})
	}
	s.historyFailed = true
	return nil
}

// History returns the records of the memory's history that f chooses,
// newest first, at most f.Limit.
func (s *Store) History(f history.Filter) ([]history.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.db.opts.QueryTimeout)
	defer cancel()
	id, err := s.lookup(ctx)
	if err != nil {
		return nil, s.failCtx(ctx, "reading the history of", err)
	}
	if id == 0 {
		return nil, nil // nothing written yet
	}
	// With a limit, pages of the newest rows (by the primary key, which
	// sorts by time), until the limit is met after the filters read here
	// (the entity, a row that does not parse) or no row is left.
	page := any(nil) // LIMIT NULL: every row
	if f.Limit > 0 {
		page = int64(max(f.Limit, 100))
	}
	var out []history.Record
	for before := ""; ; {
		n, last, err := s.historyPage(ctx, id, f, before, page, &out)
		if err != nil {
			return nil, s.failCtx(ctx, "reading the history of", err)
		}
		if f.Limit > 0 && len(out) >= f.Limit {
			return out[:f.Limit], nil
		}
		if page == nil || int64(n) < page.(int64) {
			return out, nil
		}
		before = last
	}
}

// historyPage appends to out the records f chooses among the newest page
// rows of memory id's history (every row when page is nil) before the id
// before (""; from the newest), and returns how many rows it read and the
// last one's id.
func (s *Store) historyPage(ctx context.Context, id int64, f history.Filter, before string, page any, out *[]history.Record) (int, string, error) {
	// Headers: the changes are not sent, nor decoded.
	headers := f.Headers && f.Entity == "" && !f.DeletesEntity
	// MaxBytes: the changes of a bigger row are not sent either.
	maxBytes := 0
	if f.Entity == "" {
		maxBytes = f.MaxBytes
	}
	rows, err := s.db.pool.Query(ctx, `SELECT id, time, tool, client, $9 > 0 AND size > $9, CASE WHEN $7 OR $9 > 0 AND size > $9 THEN '' ELSE changes END FROM memory_history
		WHERE memory_id = $1 AND time >= $2 AND ($3 = '' OR client = $3) AND ($4 = '' OR id = $4) AND ($5 = '' OR id < $5)
			AND (NOT $8 OR strpos(changes, 'deleteEntity') > 0)
		ORDER BY id DESC LIMIT $6`, id, f.Since, f.Client, f.ID, before, page, headers, f.DeletesEntity, maxBytes)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	n, last := 0, ""
	for rows.Next() {
		var r history.Record
		var changes string
		var cut bool
		if err := rows.Scan(&r.ID, &r.Time, &r.Tool, &r.Client, &cut, &changes); err != nil {
			return 0, "", err
		}
		n, last = n+1, r.ID
		match := f
		if cut {
			match.DeletesEntity = false // the query chose it by its changes
		} else if !headers {
			if r.Changes, err = history.DecodeChanges([]byte(changes)); err != nil {
				s.db.opts.Logf("memory %q: skipping an unreadable history record %s: %v", s.name, r.ID, err)
				continue
			}
		}
		r.Time = r.Time.UTC()
		if match.Match(&r) {
			if f.Headers {
				r.Changes = nil
			}
			*out = append(*out, r)
		}
	}
	return n, last, rows.Err()
}

// failCtx is fail for a call bounded by ctx: when ctx's deadline passed,
// the error is that deadline, whatever shape the driver gave it (a
// network timeout, a closed connection), unless the database itself
// answered with an error.
func (s *Store) failCtx(ctx context.Context, doing string, err error) error {
	var pgErr *pgconn.PgError
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.As(err, &pgErr) {
		err = context.DeadlineExceeded
	}
	return s.fail(doing, err)
}

// fail wraps a database error with what was being done and to which memory.
func (s *Store) fail(doing string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
		return fmt.Errorf("%w: memory %q, after %v; nothing was written", ErrLockTimeout, s.name, rowLockTimeout(s.db.opts))
	}
	if errors.Is(err, pgx.ErrNoRows) {
		err = errors.New("the memory no longer exists in the database")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		limit := s.db.opts.QueryTimeout
		if doing == "writing" {
			limit = s.db.opts.WriteTimeout
		}
		err = fmt.Errorf("%w (limit %v)", ErrTimeout, limit)
	}
	msg := fmt.Sprintf("%s memory %q in PostgreSQL", doing, s.name)
	var after string
	if doing == "writing" {
		after = "; nothing was written"
	}
	if connectionFailed(err) {
		// The pool's other connections most likely went with this one (a
		// restart, a network cut): drop them all, so that the next call
		// does connect again rather than find another dead one.
		s.db.pool.Reset()
		after += "; the connection to the database failed, and the next call connects again"
	}
	if connectionFailed(err) || errors.As(err, &pgErr) {
		err = databaseError{err}
	}
	return fmt.Errorf("%s: %w%s", msg, err, after)
}

// connectionFailed reports whether err says the connection to the database
// was lost or could not be made (rather than that a statement failed), so
// that trying again is the remedy: the pool replaces broken connections.
func connectionFailed(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: the server shuts
		// down or is starting.
		return strings.HasPrefix(pgErr.Code, "08") || slices.Contains([]string{"57P01", "57P02", "57P03"}, pgErr.Code)
	}
	var (
		netErr     net.Error
		connectErr *pgconn.ConnectError
	)
	return errors.As(err, &netErr) || errors.As(err, &connectErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// read reads the whole memory in tx: its revision, then its lines in graph
// order, decoded as a memory file of entity lines then relation lines.
func (s *Store) read(ctx context.Context, tx pgx.Tx) (*state, error) {
	st := &state{}
	if err := tx.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1", s.id.Load()).Scan(&st.rev); err != nil {
		return nil, err
	}
	var lines lineSink
	if err := lines.read(ctx, tx, "memory_entities", s.id.Load()); err != nil {
		return nil, err
	}
	nents := len(lines.seqs)
	if err := lines.read(ctx, tx, "memory_relations", s.id.Load()); err != nil {
		return nil, err
	}
	lines.order(nents)
	f := jsonl.Decode(lines.buf)
	st.g = f.Graph
	ents, rels := st.g.Entities(), st.g.Relations()
	if len(ents) != nents || len(rels) != len(lines.seqs)-nents || len(f.Unreadable) > 0 {
		return nil, fmt.Errorf("%w: %d entity and %d relation rows decode to %d entities, %d relations and %d unreadable lines",
			ErrCorrupt, nents, len(lines.seqs)-nents, len(ents), len(rels), len(f.Unreadable))
	}
	st.ents.rows = make([]row[string], len(ents))
	for i, e := range ents {
		st.ents.rows[i] = row[string]{e.Name, lines.seqs[i], lines.line(i)}
	}
	st.rels.rows = make([]row[relationKey], len(rels))
	for i, r := range rels {
		st.rels.rows[i] = row[relationKey]{relationKeyOf(r), lines.seqs[nents+i], lines.line(nents + i)}
	}
	return st, nil
}

// lineSink gathers lines from bytea columns into one buffer, "\n" after
// each, as a memory file: one allocation per growth, not one per row.
type lineSink struct {
	buf  []byte
	ends []int   // ends[i]: where line i ends (its "\n")
	seqs []int64 // seqs[i]: line i's sequence number
}

// ScanBytes implements pgtype.BytesScanner.
func (l *lineSink) ScanBytes(v []byte) error {
	l.buf = append(l.buf, v...)
	l.ends = append(l.ends, len(l.buf))
	l.buf = append(l.buf, '\n')
	return nil
}

// line returns line i, once every line has been read.
func (l *lineSink) line(i int) []byte {
	start := 0
	if i > 0 {
		start = l.ends[i-1] + 1
	}
	return l.buf[start:l.ends[i]:l.ends[i]]
}

// read appends the lines of a table's rows of one memory, in the order the
// database finds them: sorting is left to order, since a sort in the
// server of a big memory spills to disk (work_mem) and the rows mostly lie
// in seq order already.
func (l *lineSink) read(ctx context.Context, tx pgx.Tx, table string, memory int64) error {
	return l.readSince(ctx, tx, table, memory, -1)
}

// readSince is read of the rows written after revision since only.
func (l *lineSink) readSince(ctx context.Context, tx pgx.Tx, table string, memory, since int64) error {
	query, args := "SELECT seq, line FROM "+table+" WHERE memory_id = $1", []any{memory}
	if since >= 0 {
		query, args = query+" AND rev > $2", append(args, since)
	}
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq, l); err != nil {
			return err
		}
		l.seqs = append(l.seqs, seq)
	}
	return rows.Err()
}

// order sorts the lines by seq within each section (lines [0, bounds[0]),
// [bounds[0], bounds[1]), …, [last bound, end)), copying the buffer only if
// some section is out of order.
func (l *lineSink) order(bounds ...int) {
	bounds = append(bounds, len(l.seqs))
	perm := make([]int, len(l.seqs))
	sorted, from := true, 0
	for _, to := range bounds {
		for i := from; i < to; i++ {
			perm[i] = i
			if i > from && l.seqs[i] < l.seqs[i-1] {
				sorted = false
			}
		}
		slices.SortFunc(perm[from:to], func(a, b int) int { return cmp.Compare(l.seqs[a], l.seqs[b]) })
		from = to
	}
	if sorted {
		return
	}
	out := lineSink{buf: make([]byte, 0, len(l.buf)), ends: make([]int, 0, len(l.ends)), seqs: make([]int64, 0, len(l.seqs))}
	for _, i := range perm {
		out.ScanBytes(l.line(i))
		out.seqs = append(out.seqs, l.seqs[i])
	}
	*l = out
}

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
	key  K
	seq  int64
	line []byte
}

// syncTable brings t to items, the graph's entities or relations in graph
// order, and returns the rows to write.
//
// The usual mutation changes a few lines in place or appends at the end, so
// first t and items are walked side by side while the keys agree: a line
// that differs is a change, and items beyond the end of t are new. Unchanged
// lines are usually the very slice the graph caches, so the walk costs a
// pointer comparison per item and no hashing. Only from the first
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
	keyOf, lineOf, hash := kind.key, kind.line, kind.hash
	var ch changes
	i, n := 0, min(len(items), len(t.rows))
	for ; i < n; i++ {
		k, r := keyOf(items[i]), &t.rows[i]
		if k != r.key {
			break
		}
		if line := lineOf(items[i]); !bytes.Equal(r.line, line) {
			r.line = line
			ch.write(hash(k), r.seq, line, kind.times(items[i]))
		}
	}
	if i < len(t.rows) {
		// The slow path: look the rest of the known rows up by key.
		rest := make(map[K]row[K], len(t.rows)-i)
		for _, r := range t.rows[i:] {
			rest[r.key] = r
		}
		var last int64
		if i > 0 {
			last = t.rows[i-1].seq
		}
		// A new item at the position of a row that goes takes that row's
		// seq (see above). Which rows go is worked out at the first
		// renamed item: a write that only deletes or appends never pays
		// for it.
		old := t.rows[i:] // old[p] is read before the append of item p overwrites it
		var (
			keep      map[K]bool
			keptAfter []bool // keptAfter[q]: a row after old[q] stays
		)
		inPlace := func(p int, it T, last int64) bool {
			if p >= len(old) || old[p].seq <= last || !kind.renamed(old[p], it) {
				return false
			}
			if keep == nil {
				keep = make(map[K]bool, len(items)-i)
				for _, it := range items[i:] {
					keep[keyOf(it)] = true
				}
				keptAfter = make([]bool, len(old))
				for q := len(old) - 2; q >= p; q-- { // old[:p] is overwritten already
					keptAfter[q] = keptAfter[q+1] || keep[old[q+1].key]
				}
			}
			return !keep[old[p].key] && (kind.renamedLast || keptAfter[p])
		}
		t.rows = t.rows[:i] // rows[i:] are in rest now, so appending may overwrite them
		for p, it := range items[i:] {
			k, line := keyOf(it), lineOf(it)
			r, ok := rest[k]
			delete(rest, k)
			switch {
			case ok && r.seq > last && bytes.Equal(r.line, line):
			case ok && r.seq > last:
				r.line = line
				ch.write(hash(k), r.seq, line, kind.times(it))
			case !ok && inPlace(p, it, last):
				// In the place of a row that goes: the seq stays in
				// order, and rows after it keep theirs.
				r = row[K]{key: k, seq: old[p].seq, line: line}
				ch.write(hash(k), r.seq, line, kind.times(it))
			default:
				if ok {
					ch.removed = append(ch.removed, r.seq)
				}
				r = row[K]{key: k, seq: *next, line: line}
				*next++
				ch.write(hash(k), r.seq, line, kind.times(it))
			}
			last = r.seq
			t.rows = append(t.rows, r)
		}
		for k, r := range rest {
			ch.gone = append(ch.gone, hash(k))
			ch.removed = append(ch.removed, r.seq)
		}
		return ch
	}
	for _, it := range items[i:] {
		k, line := keyOf(it), lineOf(it)
		t.rows = append(t.rows, row[K]{key: k, seq: *next, line: line})
		ch.write(hash(k), *next, line, kind.times(it))
		*next++
	}
	return ch
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
	// renamed reports whether item is the row old with another key: all
	// else equal, and, for a relation, an end kept.
	renamed func(old row[K], item T) bool
	// renamedLast: a renamed item keeps its row's seq even with no row
	// after it that stays. An entity does, so that catching up renames it
	// and its relations follow; a relation needs not (a new seq at the
	// end costs nothing), and must not, as deleting an entity and
	// relating another to its neighbour in one write would look like it.
	renamedLast bool
}

var (
	entityRows = rowKind[string, *graph.Entity]{entityKey, entityLine, hashEntity, entityTimes, func(old row[string], e *graph.Entity) bool {
		// The same entity but for its name and the time of its last
		// change, which a rename sets.
		was := &graph.Entity{Name: old.key, EntityType: e.EntityType, Observations: e.Observations, Extra: e.Extra,
			Created: e.Created, Updated: e.Updated, ObservedAt: e.ObservedAt}
		if bytes.Equal(jsonl.AppendEntity(nil, was), old.line) {
			return true
		}
		f := jsonl.Decode(old.line)
		if ents := f.Graph.Entities(); len(ents) == 1 {
			o := ents[0]
			return o.Name == old.key && o.EntityType == e.EntityType && slices.Equal(o.Observations, e.Observations) &&
				bytes.Equal(o.Extra, e.Extra) && o.Created == e.Created && graph.SameTimes(o.ObservedAt, e.ObservedAt)
		}
		return false
	}, true}
	relationRows = rowKind[relationKey, *graph.Relation]{relationKeyOf, relationLine, hashRelation, relationTimes, func(old row[relationKey], r *graph.Relation) bool {
		k := old.key
		kept := r.From == k.from || r.To == k.to || (k.from == k.to && r.From == r.To)
		return kept && bytes.Equal(jsonl.AppendRelation(nil, &graph.Relation{From: k.from, To: k.to, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created}), old.line)
	}, false}
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
	l := jsonl.AppendEntity(nil, e)
	e.SetEncodedLine(l)
	return l
}

func relationLine(r *graph.Relation) []byte {
	if l := r.EncodedLine(); l != nil {
		return l
	}
	l := jsonl.AppendRelation(nil, r)
	r.SetEncodedLine(l)
	return l
}

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
