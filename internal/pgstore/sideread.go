package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A whole read of a big memory takes its two tables side by side: the
// relation rows over a second connection while the read's own transaction
// takes the entity rows, so the database sends each table with a core of
// its own. At a million entities sending the rows is most of a second per
// table.
//
// The second connection reads in a snapshot of its own. Every write of a
// memory raises its revision in the same transaction as it changes the
// rows, so when both snapshots hold the same revision they hold the same
// rows; when they do not (a write committed between the two), the read's
// transaction takes the relation rows itself, as it does when the pool has
// no connection to spare.

// sideReadRows is the number of rows (the memory's sequence numbers, which
// count every row it ever had) from which a whole read takes a second
// connection; a variable so tests can lower it.
var sideReadRows int64 = 100_000

// spareWait bounds the wait for a second connection: one being opened, or
// one the pool had a moment ago. A read that gets none takes both tables
// itself.
const spareWait = 200 * time.Millisecond

// errOtherRevision: the second connection's snapshot holds another
// revision than the read's.
var errOtherRevision = errors.New("the second connection sees another revision")

// readRows reads the lines of the memory's entity rows into ents and of
// its relation rows into rels, as tx sees them: at revision rev, of a
// memory that handed out seqs sequence numbers.
func (s *Store) readRows(ctx context.Context, tx pgx.Tx, rev, seqs int64, ents, rels *lineSink) error {
	id := s.id.Load()
	var side chan error
	if seqs >= sideReadRows {
		if conn := s.spareConn(ctx); conn != nil {
			sideCtx, cancel := context.WithCancel(ctx)
			side = make(chan error, 1)
			go func() {
				defer conn.Release()
				side <- readRelationsAt(sideCtx, conn, id, rev, rels)
			}()
			defer func() { // a read that failed first stops the other
				cancel()
				if side != nil {
					<-side
				}
			}()
		}
	}
	if err := ents.read(ctx, tx, "memory_entities", id); err != nil {
		return err
	}
	if side != nil {
		err := <-side
		side = nil
		if err == nil {
			s.sideReads.Add(1)
			return nil
		}
		rels.reset()
	}
	return rels.read(ctx, tx, "memory_relations", id)
}

// spareConn returns a connection the pool can give at once (an idle one,
// or a new one while it is under its size), or nil.
func (s *Store) spareConn(ctx context.Context) *pgxpool.Conn {
	st := s.db.pool.Stat()
	if st.IdleConns() == 0 && st.TotalConns() >= st.MaxConns() {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, spareWait)
	defer cancel()
	c, err := s.db.pool.Acquire(actx)
	if err != nil {
		return nil
	}
	return c
}

// readRelationsAt reads the lines of memory id's relation rows into rels
// over conn, in a transaction of its own, if the memory is at revision
// rev there.
func readRelationsAt(ctx context.Context, conn *pgxpool.Conn, id, rev int64, rels *lineSink) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if sideReadHook != nil {
		sideReadHook()
	}
	var at int64 // the snapshot is taken here
	if err := tx.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1", id).Scan(&at); err != nil {
		return err
	}
	if at != rev {
		return errOtherRevision
	}
	return rels.read(ctx, tx, "memory_relations", id)
}

// sideReadHook, when set by a test, runs in readRelationsAt before its
// snapshot is taken.
var sideReadHook func()
