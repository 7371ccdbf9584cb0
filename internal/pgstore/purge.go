package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// PurgeHistory removes from the memory's history, for good, every change
// naming entity (history.Purger): in one transaction, each row whose
// changes name it is rewritten without them, or deleted when none is left.
func (s *Store) PurgeHistory(ctx context.Context, entity string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.db.opts.QueryTimeout)
	defer cancel()
	id, err := s.lookup(ctx)
	if err != nil {
		return 0, s.failCtx(ctx, "purging the history of", err)
	}
	if id == 0 {
		return 0, nil // nothing written yet
	}
	n := 0
	err = pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		var err error
		n, err = purgeRows(ctx, tx, id, entity)
		return err
	})
	if err != nil {
		return 0, s.failCtx(ctx, "purging the history of", err)
	}
	return n, nil
}

// purgeRows purges the history rows of memory id of entity, in tx.
func purgeRows(ctx context.Context, tx pgx.Tx, id int64, entity string) (int, error) {
	// The changes name an entity as AppendChanges writes its name: a JSON
	// string; rows without it cannot name the entity.
	quoted := string(graph.AppendString(nil, entity))
	rows, err := tx.Query(ctx, `SELECT id, changes FROM memory_history WHERE memory_id = $1 AND strpos(changes, $2) > 0 FOR UPDATE`, id, quoted)
	if err != nil {
		return 0, err
	}
	type row struct{ id, changes string }
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.changes); err != nil {
			rows.Close()
			return 0, err
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, r := range found {
		changes, err := jsonl.DecodeChanges([]byte(r.changes))
		if err != nil {
			// Unreadable, and holding the name: it goes.
			changes = nil
		}
		rec, changed := history.Purge(graph.Record{Changes: changes}, entity)
		switch {
		case err == nil && !changed:
			continue
		case len(rec.Changes) == 0:
			_, err = tx.Exec(ctx, `DELETE FROM memory_history WHERE memory_id = $1 AND id = $2`, id, r.id)
		default:
			text := graph.AppendChanges(nil, rec.Changes)
			_, err = tx.Exec(ctx, `UPDATE memory_history SET changes = $3, size = $4 WHERE memory_id = $1 AND id = $2`, id, r.id, string(text), len(text))
		}
		if err != nil {
			return 0, fmt.Errorf("record %s: %w", r.id, err)
		}
		n++
	}
	return n, nil
}
