package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations[i] brings the schema from version i to i+1. Append only: a
// database at version n has run the first n, and a release never changes one
// that shipped.
var migrations = []string{
	`CREATE TABLE memories (
		id         bigserial PRIMARY KEY,
		name       text NOT NULL UNIQUE,
		revision   bigint NOT NULL DEFAULT 0,
		next_seq   bigint NOT NULL DEFAULT 1,
		-- memory_removed holds every removal after this revision
		removed_since bigint NOT NULL DEFAULT 0,
		created_at timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE memory_entities (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		key       bytea NOT NULL, -- SHA-256 of the name
		seq       bigint NOT NULL, -- graph order
		line      bytea NOT NULL, -- the memory-file line
		rev       bigint NOT NULL, -- the revision that wrote the row
		PRIMARY KEY (memory_id, key)
	);
	CREATE INDEX memory_entities_rev ON memory_entities (memory_id, rev);
	CREATE TABLE memory_relations (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		key       bytea NOT NULL, -- SHA-256 of the triple
		seq       bigint NOT NULL,
		line      bytea NOT NULL,
		rev       bigint NOT NULL,
		PRIMARY KEY (memory_id, key)
	);
	CREATE INDEX memory_relations_rev ON memory_relations (memory_id, rev);
	-- Rows removed (deleted, or moved to a new seq) by recent writes, so a
	-- replica can catch up by reading only what changed.
	CREATE TABLE memory_removed (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		rev       bigint NOT NULL, -- the revision that removed it
		kind      "char" NOT NULL, -- 'e' entity, 'r' relation
		seq       bigint NOT NULL -- the removed row's seq
	);
	CREATE INDEX memory_removed_rev ON memory_removed (memory_id, rev);
	CREATE TABLE memory_unreadable (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		seq       bigint NOT NULL,
		line      bytea NOT NULL, -- a line of an imported file, verbatim
		PRIMARY KEY (memory_id, seq)
	);`,
	// When each fact was first written and an entity last changed, as the
	// line's time members say (NULL: unknown); the line stays the truth.
	// Rows written before hold no times: no server wrote any then.
	`ALTER TABLE memory_entities ADD COLUMN created_at timestamptz, ADD COLUMN updated_at timestamptz;
	ALTER TABLE memory_relations ADD COLUMN created_at timestamptz;`,
	// Search by meaning's vectors (vectors.go), shared by the replicas:
	// key is the first 16 bytes of SHA-256 of the model, a zero byte and
	// the text; vals the int8 values of the unit vector, scale what one
	// unit of them is worth. seq orders the rows as they were added, so a
	// replica reads only the rows added since it last looked.
	`CREATE TABLE memory_vectors (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		model     text NOT NULL,
		key       bytea NOT NULL,
		scale     real NOT NULL,
		vals      bytea NOT NULL,
		seq       bigserial NOT NULL,
		PRIMARY KEY (memory_id, model, key)
	);
	CREATE INDEX memory_vectors_seq ON memory_vectors (memory_id, seq);`,
	// The history of writes (docs/history.md): one row per write, inserted
	// in the write's transaction; changes is the record's changes as the
	// history file holds them, size their length (trimming by size).
	`CREATE TABLE memory_history (
		memory_id bigint NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
		id        text NOT NULL, -- unique, sorts by time
		time      timestamptz NOT NULL,
		tool      text NOT NULL,
		client    text NOT NULL,
		changes   text NOT NULL,
		size      integer NOT NULL,
		PRIMARY KEY (memory_id, id)
	);
	CREATE INDEX memory_history_time ON memory_history (memory_id, time);`,
}

// SchemaVersion is the schema version this package creates and expects.
var SchemaVersion = len(migrations)

// migrationLock is the transaction-level advisory lock key that serialises
// replicas migrating one database at the same start ("memory" + 1).
const migrationLock int64 = 0x6d656d6f72790001

// migrate brings the schema to SchemaVersion in one transaction: a failed
// migration leaves the database as it was.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS memory_schema_version (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM memory_schema_version").Scan(&have); err != nil {
			return err
		}
		if have > SchemaVersion {
			return fmt.Errorf("%w: the database is at version %d, this server knows %d; upgrade the server", ErrSchemaTooNew, have, SchemaVersion)
		}
		for v := have; v < SchemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema version %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO memory_schema_version (version) VALUES ($1)", v+1); err != nil {
				return err
			}
		}
		return nil
	})
}
