package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Import makes the memory hold exactly g, in g's order, and the unreadable
// lines of the file g was read from (written back after the relations on
// Export, as the file store writes them back), in one transaction. Unless
// replace is set, a memory that holds anything is left alone and Import
// returns ErrNotEmpty. Together with Export it moves a memory between a
// file and the database losslessly.
func (s *Store) Import(ctx context.Context, g *graph.Graph, unreadable [][]byte, replace bool) error {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	if s.id.Load() == 0 {
		id, err := s.db.memoryID(ctx, s.name)
		if err != nil {
			return s.fail("importing into", err)
		}
		s.id.CompareAndSwap(0, id)
	}
	err := pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		var rev int64
		if err := tx.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1 FOR UPDATE", s.id.Load()).Scan(&rev); err != nil {
			return err
		}
		if !replace {
			var used bool
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memory_entities WHERE memory_id = $1)
				OR EXISTS (SELECT 1 FROM memory_relations WHERE memory_id = $1)
				OR EXISTS (SELECT 1 FROM memory_unreadable WHERE memory_id = $1)`, s.id.Load()).Scan(&used)
			if err != nil {
				return err
			}
			if used {
				return fmt.Errorf("%w: memory %q; import into an empty memory, or replace it", ErrNotEmpty, s.name)
			}
		}
		for _, table := range []string{"memory_entities", "memory_relations", "memory_unreadable", "memory_removed"} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE memory_id = $1", s.id.Load()); err != nil {
				return err
			}
		}
		// Every Store reads the memory whole after an import: no removals
		// are remembered from before it.
		rev++
		seq := int64(1)
		ents, rels := g.Entities(), g.Relations()
		if err := copyLines(ctx, tx, "memory_entities", s.id.Load(), rev, len(ents), &seq, func(i int) ([]byte, []byte, [2]graph.Time) {
			return hashEntity(ents[i].Name), entityLine(ents[i]), entityTimes(ents[i])
		}); err != nil {
			return err
		}
		if err := copyLines(ctx, tx, "memory_relations", s.id.Load(), rev, len(rels), &seq, func(i int) ([]byte, []byte, [2]graph.Time) {
			return hashRelation(relationKeyOf(rels[i])), relationLine(rels[i]), relationTimes(rels[i])
		}); err != nil {
			return err
		}
		useq := int64(1)
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"memory_unreadable"}, []string{"memory_id", "seq", "line"},
			pgx.CopyFromSlice(len(unreadable), func(i int) ([]any, error) {
				useq++
				return []any{s.id.Load(), useq - 1, unreadable[i]}, nil
			}))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE memories SET revision = $2, next_seq = $3, removed_since = $2 WHERE id = $1", s.id.Load(), rev, seq); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, notice{s.id.Load(), rev, s.origin}.String())
		return err
	})
	if err != nil {
		return s.fail("importing into", err)
	}
	s.mu.Lock()
	s.loaded = false // read what was imported on the next call
	s.mu.Unlock()
	// The planner's statistics still hold the tables as they were: for a
	// memory they knew as small, a write's DELETE of a few keys would walk
	// all of its rows by memory_entities_rev instead of finding each by
	// its key (30 ms a write at 100k entities), until autovacuum's next
	// analyze, which a big table puts off for long. Analyze them now.
	actx, cancel := context.WithTimeout(ctx, s.db.opts.QueryTimeout)
	defer cancel()
	if _, err := s.db.pool.Exec(actx, "ANALYZE memory_entities, memory_relations"); err != nil {
		s.db.opts.Logf("memory %q imported; analyzing its tables for the planner failed (writes that delete may be slow until autovacuum analyzes them): %v", s.name, err)
	}
	return nil
}

// copyLines copies n rows of (key, line, times) into table with the next
// sequence numbers.
func copyLines(ctx context.Context, tx pgx.Tx, table string, memory, rev int64, n int, seq *int64, at func(i int) (key, line []byte, times [2]graph.Time)) error {
	columns := []string{"memory_id", "key", "seq", "line", "rev", "created_at"}
	entities := table == "memory_entities"
	if entities {
		columns = append(columns, "updated_at")
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, columns,
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			key, line, times := at(i)
			*seq++
			if entities {
				return []any{memory, key, *seq - 1, line, rev, timeColumn(times[0]), timeColumn(times[1])}, nil
			}
			return []any{memory, key, *seq - 1, line, rev, timeColumn(times[0])}, nil
		}))
	return err
}
