package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
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
