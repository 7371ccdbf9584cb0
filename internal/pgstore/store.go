package pgstore

import (
	"context"
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
	"github.com/kgmemory/mcp-server-memory/internal/heapgoal"
)

// Store is one memory in the database and the graph last read from it. It
// is safe for concurrent use.
type Store struct {
	db     *DB
	name   string
	id     atomic.Int64 // memories.id; 0 until the memory's row exists
	origin string       // names this Store's writes in notifications
	ownsDB bool

	lastOwn atomic.Int64  // the revision of this Store's last write
	written graph.Written // this Store's writes, for its Watches

	wholeReads, deltaReads atomic.Int64 // how the Store caught up, for tests
	sideReads              atomic.Int64 // whole reads that took a second connection, for tests
	walks                  atomic.Int64 // tables a write walked whole (syncTable), for tests

	writing chan struct{} // holds a token while a write of this Store runs
	reading chan struct{} // holds a token while a View or a write of this Store catches up

	// Guarded by writing: the newest history id this Store wrote, and
	// whether writing the history failed (the log said so once).
	lastID        string
	historyFailed bool

	mu     graph.RWMutex // guards the fields below
	cur    *state        // nil: read the memory first
	loaded bool          // false: cur is ahead of or behind the database
	// readFrom is the revision of the first graph this Store read, plus
	// one; 0 until it read one (firstRead).
	readFrom int64
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

// ExclusiveWanted reports whether a write or a reload waits for the
// graph held (graph.Contended).
func (s *Store) ExclusiveWanted() bool { return s.mu.Wanted() }

var _ graph.Contended = (*Store)(nil)

// View runs fn on the latest committed graph: it asks the database for the
// memory's revision and reads the memory again only if it moved. fn must
// not modify the graph or keep it after returning. A memory that has no
// row yet reads as empty, and the read creates nothing. View's queries are
// bounded by ctx and by Options.QueryTimeout; it returns fn's error.
func (s *Store) View(ctx context.Context, fn func(*graph.Graph) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.db.opts.QueryTimeout)
	defer cancel()
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
		return fn(graph.New())
	}
	if err != nil {
		return s.failCtx(ctx, "reading", err)
	}
	s.mu.RLock()
	if s.loaded && s.cur.rev >= rev {
		defer s.mu.RUnlock()
		return fn(s.cur.g)
	}
	s.mu.RUnlock()

	// One catch-up at a time: a View that comes while another reads waits
	// for it, then finds the graph current, rather than reading beside it
	// (at a server's start the first tool call and the index build both
	// read a memory of a million entities whole at once: twice the time
	// and twice the memory).
	select {
	case s.reading <- struct{}{}:
	case <-ctx.Done():
		return s.failCtx(ctx, "reading", ctx.Err())
	}
	release := sync.OnceFunc(func() { <-s.reading })
	defer release()
	s.mu.RLock()
	if s.loaded && s.cur.rev >= rev {
		release()
		defer s.mu.RUnlock()
		return fn(s.cur.g)
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
			release()
			defer s.mu.Unlock()
			return fn(s.cur.g)
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

// firstRead returns the revision of the first graph this Store read, -1
// before it read one.
func (s *Store) firstRead() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.readFrom - 1
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
		if s.readFrom == 0 {
			s.readFrom = c.state.rev + 1
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

// Update runs the write w in one transaction: it locks the memory's row,
// reads the memory again if another writer moved its revision, runs
// w.Apply at the time it reads then (graph.Graph.Write), and writes what
// changed, which it reports, with the write's history record. w.Apply
// must validate before it changes anything: when it returns an error
// nothing is written and the error is returned as it is. Other errors:
// ErrLockTimeout, or a database error after which nothing was written (the
// transaction rolled back), or whose commit was cut off (the error says
// so). The whole write, its wait for an earlier write of this Store
// included, is bounded by Options.WriteTimeout; a write that runs out of
// time fails with ErrTimeout and says whether it may have been saved. The
// first write that changes a memory with no row creates the row, in the
// same transaction.
func (s *Store) Update(ctx context.Context, w graph.Write) (changed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.db.opts.WriteTimeout)
	defer cancel()
	select {
	case s.writing <- struct{}{}:
		defer func() { <-s.writing }()
	case <-ctx.Done():
		return false, s.fail("writing", ctx.Err())
	}
	// A View catching up (at a server's start, the index build reading
	// the memory whole) finishes first, and the write catches up from
	// where it got rather than reading beside it. Waited for before the
	// write takes a connection, as a View does.
	select {
	case s.reading <- struct{}{}:
		<-s.reading
	case <-ctx.Done():
		return false, s.fail("writing", ctx.Err())
	}
	wt, err := s.beginWrite(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if !wt.committed {
			s.abandonWrite(ctx, wt)
		}
	}()
	rev, next, err := s.lockRow(ctx, wt)
	if err != nil {
		return false, err
	}
	if err := s.catchUpLocking(ctx, wt.tx, rev); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	g := s.cur.g
	before := g.Version()
	rec, changed, complete, err := g.Write(w, time.Now(), func() string { return s.lastID })
	if err != nil {
		if g.Version() != before {
			s.loaded = false // w.Apply broke its contract; forget what it did
		}
		return false, err
	}
	if !changed {
		return false, nil // and a row just created is rolled back
	}
	// From here on the graph is ahead of the database until COMMIT.
	s.loaded = false
	rev++
	b, histAt := s.queueWrite(g, rev, next, &rec, complete)
	if err := s.commitWrite(ctx, wt, b, histAt); err != nil {
		return false, err
	}
	s.cur.rev, s.loaded = rev, true
	s.lastOwn.Store(rev)
	s.written.Done()
	if rec.ID != "" && !s.db.opts.History.Off() {
		s.lastID = rec.ID
	}
	return true, nil
}

// writeTx is a write's transaction.
type writeTx struct {
	tx pgx.Tx
	id int64 // the memory's row
	// created: this transaction inserted the row, which a rollback takes
	// away again.
	created   bool
	committed bool
}

// beginWrite begins a write's transaction, inserting the memory's row if
// it has none yet. Another replica creating it at once makes this wait
// for that one's commit, and then use its row.
func (s *Store) beginWrite(ctx context.Context) (*writeTx, error) {
	id, err := s.lookup(ctx)
	if err != nil {
		return nil, s.failCtx(ctx, "writing", err)
	}
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, s.failCtx(ctx, "writing", err)
	}
	wt := &writeTx{tx: tx, id: id}
	if id != 0 {
		return wt, nil
	}
	if _, err := tx.Exec(ctx, "INSERT INTO memories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", s.name); err != nil {
		s.abandonWrite(ctx, wt)
		return nil, s.failCtx(ctx, "writing", err)
	}
	if err := tx.QueryRow(ctx, "SELECT id FROM memories WHERE name = $1", s.name).Scan(&wt.id); err != nil {
		s.abandonWrite(ctx, wt)
		return nil, s.failCtx(ctx, "writing", err)
	}
	s.id.Store(wt.id)
	wt.created = true
	return wt, nil
}

// abandonWrite rolls a write's transaction back, bounded too: a database
// that hangs must not hold the write.
func (s *Store) abandonWrite(ctx context.Context, wt *writeTx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.db.opts.QueryTimeout)
	defer cancel()
	wt.tx.Rollback(rctx)
	if wt.created {
		s.id.CompareAndSwap(wt.id, 0) // lookup finds it, if another replica made it
	}
}

// lockRow locks the memory's row, so every other writer waits, and
// returns its revision and next sequence number.
func (s *Store) lockRow(ctx context.Context, wt *writeTx) (rev, next int64, err error) {
	err = wt.tx.QueryRow(ctx, "SELECT revision, next_seq FROM memories WHERE id = $1 FOR UPDATE", wt.id).Scan(&rev, &next)
	if err != nil {
		return 0, 0, s.failCtx(ctx, "writing", err)
	}
	return rev, next, nil
}

// catchUpLocking brings the graph held to revision rev, reading in tx
// (under the row lock, read committed gives exactly rev), and returns with
// s.mu locked, unless it fails. The changes are read before s.mu is taken,
// so readers go on meanwhile; if they no longer apply, the whole memory is
// read with s.mu held.
func (s *Store) catchUpLocking(ctx context.Context, tx pgx.Tx, rev int64) error {
	// Views wait for this catch-up rather than read beside it; but a View
	// that began one since Update waited for it is not waited for here,
	// holding a connection: the View may be waiting for one.
	select {
	case s.reading <- struct{}{}:
		defer func() { <-s.reading }()
	default:
	}
	s.mu.RLock()
	base, from := s.cur, s.revLocked()
	s.mu.RUnlock()
	var c catchUp
	var err error
	if from != rev {
		if c, err = s.catchUp(ctx, tx, from); err != nil {
			return s.failCtx(ctx, "writing", err)
		}
	}
	s.mu.Lock()
	if from != rev && !s.installLocked(base, c) {
		if c, err = s.catchUp(ctx, tx, -1); err != nil {
			s.mu.Unlock()
			return s.failCtx(ctx, "writing", err)
		}
		s.installLocked(nil, c)
	}
	return nil
}

// queueWrite queues the statements that bring the database to g as
// revision rev: the rows that changed, the revision, the pruning of old
// removals, the notice to the other replicas and the history record rec.
// It returns the batch and where the history's statements start (-1:
// none).
func (s *Store) queueWrite(g *graph.Graph, rev, next int64, rec *graph.Record, complete bool) (*pgx.Batch, int) {
	b := &pgx.Batch{}
	id := s.id.Load()
	// The rows a write changed, from its record where it says them all
	// (recorded.go), else from a walk over every row.
	var ents, rels changes
	var ok bool
	if complete {
		ents, ok = syncEntitiesRecorded(&s.cur.ents, g, rec.Changes, &next)
	}
	if !ok {
		s.walks.Add(1)
		ents = syncTable(&s.cur.ents, g.Entities(), entityRows, &next)
	}
	ok = false
	if complete {
		rels, ok = syncRelationsRecorded(&s.cur.rels, g, rec.Changes, &next)
	}
	if !ok {
		s.walks.Add(1)
		rels = syncTable(&s.cur.rels, g.Relations(), relationRows, &next)
	}
	queueChanges(b, "memory_entities", 'e', id, rev, ents)
	queueChanges(b, "memory_relations", 'r', id, rev, rels)
	b.Queue("UPDATE memories SET revision = $2, next_seq = $3 WHERE id = $1", id, rev, next)
	if rev%removedPruneEvery == 0 && rev > removedKept {
		b.Queue("DELETE FROM memory_removed WHERE memory_id = $1 AND rev <= $2", id, rev-removedKept)
		b.Queue("UPDATE memories SET removed_since = greatest(removed_since, $2) WHERE id = $1", id, rev-removedKept)
	}
	b.Queue("SELECT pg_notify($1, $2)", notifyChannel, notice{id, rev, s.origin}.String())
	return b, s.queueHistory(b, rev, rec)
}

// commitWrite sends the batch and commits.
func (s *Store) commitWrite(ctx context.Context, wt *writeTx, b *pgx.Batch, histAt int) error {
	if err := s.sendBatch(ctx, wt.tx, b, histAt); err != nil {
		return err
	}
	if err := wt.tx.Commit(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Not ErrTimeout, whose Timeout says nothing was written.
			err = fmt.Errorf("%v (limit %v)", ErrTimeout, s.db.opts.WriteTimeout)
		}
		return fmt.Errorf("committing memory %q to PostgreSQL: %w (whether the change was saved is unknown; read the memory to see)", s.name, databaseError{err})
	}
	wt.committed = true
	return nil
}

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
	return errors.As(err, &netErr) || errors.As(err, &connectErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		// A connection the driver closed after an earlier failure.
		errors.Is(err, pgconn.ErrConnClosed)
}

// read reads the whole memory as tx sees it: its revision, then its lines
// in graph order (a big memory's relation rows over a second connection,
// readRows), decoded as a memory file of entity lines then relation lines.
func (s *Store) read(ctx context.Context, tx pgx.Tx) (*state, error) {
	st := &state{}
	var seqs int64
	if err := tx.QueryRow(ctx, "SELECT revision, next_seq FROM memories WHERE id = $1", s.id.Load()).Scan(&st.rev, &seqs); err != nil {
		return nil, err
	}
	lines, relLines := lineSink{mapped: true}, lineSink{mapped: true}
	defer lines.free()
	defer relLines.free()
	if err := s.readRows(ctx, tx, st.rev, seqs, &lines, &relLines); err != nil {
		return nil, err
	}
	nents := len(lines.seqs)
	lines.take(&relLines)
	// No collections from here to the end, when the lines are many
	// (heapgoal.Loading): what follows allocates the graph and its rows,
	// which it all keeps.
	defer heapgoal.Loading(lines.size())()
	lines.order(nents)
	f := lines.decodeFreeing()
	st.g = f.Graph
	ents, rels := st.g.Entities(), st.g.Relations()
	if len(ents) != nents || len(rels) != len(lines.seqs)-nents || len(f.Unreadable) > 0 {
		return nil, fmt.Errorf("%w: %d entity and %d relation rows decode to %d entities, %d relations and %d unreadable lines",
			ErrCorrupt, nents, len(lines.seqs)-nents, len(ents), len(rels), len(f.Unreadable))
	}
	st.ents.rows = make([]row[string], len(ents))
	for i, e := range ents {
		st.ents.rows[i] = row[string]{key: e.Name, seq: lines.seqs[i], sum: lines.sums[i]}
		entityRows.bring(&st.ents.rows[i], e)
	}
	st.rels.rows = make([]row[relationKey], len(rels))
	for i, r := range rels {
		st.rels.rows[i] = row[relationKey]{key: relationKeyOf(r), seq: lines.seqs[nents+i], sum: lines.sums[nents+i]}
		relationRows.bring(&st.rels.rows[i], r)
	}
	return st, nil
}
