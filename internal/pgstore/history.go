package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// historyTrimEvery is how many revisions apart a memory's history is
// trimmed, in the write's transaction.
const historyTrimEvery = 100

// queueHistory queues, after the write's statements, the write's history
// record (and, every historyTrimEvery revisions, the trim), between a
// SAVEPOINT and its RELEASE, so that a history that cannot be written
// never fails the write (sendBatch). It returns the index of the SAVEPOINT
// in the batch (-1: none).
func (s *Store) queueHistory(b *pgx.Batch, rev int64, rec *graph.Record) int {
	lim := *s.db.opts.History
	trim := rev%historyTrimEvery == 0
	if (lim.Off() || len(rec.Changes) == 0) && !trim {
		return -1
	}
	at := b.Len()
	b.Queue("SAVEPOINT history")
	memory := s.id.Load()
	if !lim.Off() && len(rec.Changes) > 0 {
		text := graph.AppendChanges(nil, rec.Changes)
		b.Queue("INSERT INTO memory_history (memory_id, id, time, tool, client, changes, size) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			memory, rec.ID, rec.Time, rec.Tool, rec.Client, string(text), len(text))
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
	return at
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
func (s *Store) History(f history.Filter) ([]graph.Record, error) {
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
	var out []graph.Record
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
func (s *Store) historyPage(ctx context.Context, id int64, f history.Filter, before string, page any, out *[]graph.Record) (int, string, error) {
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
		var r graph.Record
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
			if r.Changes, err = jsonl.DecodeChanges([]byte(changes)); err != nil {
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
