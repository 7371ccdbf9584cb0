package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Reads reports how often s read the memory whole and how often only the
// changes since its revision.
func (s *Store) Reads() (whole, delta int64) { return s.wholeReads.Load(), s.deltaReads.Load() }

// SetRemovedKept makes the stores remember removals for the last kept
// writes, pruned every every writes, until the returned func restores it.
func SetRemovedKept(kept, every int64) (restore func()) {
	k, e := removedKept, removedPruneEvery
	removedKept, removedPruneEvery = kept, every
	return func() { removedKept, removedPruneEvery = k, e }
}

// HoldConnections makes the store's pool open n connections at once and
// return them idle, as a busy server's pool holds them.
func (s *Store) HoldConnections(ctx context.Context, n int) error {
	var held []*pgxpool.Conn
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range n {
		c, err := s.db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		held = append(held, c)
	}
	return nil
}

// Export reads the memory as a memory file: its graph and, after the
// relations, the unreadable lines Import kept. jsonl.Write of the result
// writes the file that was imported, byte for byte, when that file was in
// the form jsonl.Write writes.
func (s *Store) Export(ctx context.Context) (*jsonl.File, error) {
	var f *jsonl.File
	err := pgx.BeginTxFunc(ctx, s.db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var lines lineSink
		var bounds []int
		for _, table := range []string{"memory_entities", "memory_relations", "memory_unreadable"} {
			if err := lines.read(ctx, tx, table, s.id.Load()); err != nil {
				return err
			}
			bounds = append(bounds, len(lines.seqs))
		}
		lines.order(bounds[:2]...)
		f = lines.decode()
		return nil
	})
	if err != nil {
		return nil, s.fail("exporting", err)
	}
	return f, nil
}

// Walks reports how many times a write of s found its rows by walking a
// table whole.
func (s *Store) Walks() int64 { return s.walks.Load() }

// SideReads reports how many whole reads of s took the relation rows over
// a second connection.
func (s *Store) SideReads() int64 { return s.sideReads.Load() }

// SetSideRead makes whole reads of memories from rows sequence numbers up
// take a second connection, calling hook (if not nil) on it before its
// snapshot, until the returned func restores both.
func SetSideRead(rows int64, hook func()) (restore func()) {
	r, h := sideReadRows, sideReadHook
	sideReadRows, sideReadHook = rows, hook
	return func() { sideReadRows, sideReadHook = r, h }
}
