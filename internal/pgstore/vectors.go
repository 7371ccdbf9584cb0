package pgstore

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/meaning"
)

// Vectors returns the memory's vectors for search by meaning
// (meaning.Storage), kept in the table memory_vectors, which every
// replica of the memory shares: each loads the vectors the others added
// (the rows after the last it read, in the order of seq), and embeds a
// batch only while it holds the memory's vectors lock (Exclusive), after
// loading, so no two replicas embed the same text.
//
// A memory nobody wrote has no row, so its vectors are none and none are
// added: reading it creates nothing here either.
func (s *Store) Vectors() meaning.Storage { return &vectors{s: s} }

type vectors struct {
	s    *Store
	last int64 // the highest seq loaded or appended
}

// vectorsLockClass is the high half of the advisory lock keys of the
// memories' vectors ("memv"); the low half hashes the memory's name.
const vectorsLockClass int64 = 0x6d656d76 << 32

func (v *vectors) lockKey() int64 {
	h := fnv.New32a()
	h.Write([]byte(v.s.name))
	return vectorsLockClass | int64(h.Sum32())
}

// Load, Append and Compact are each bounded by Options.QueryTimeout.

func (v *vectors) Load(ctx context.Context, model string) ([]meaning.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, v.s.db.opts.QueryTimeout)
	defer cancel()
	// The rows of other models are read too, as their seq only, so that
	// Compact, which goes as far as the last row read, drops them.
	rows, err := v.s.db.pool.Query(ctx, `SELECT v.seq, v.key, v.scale, CASE WHEN v.model = $2 THEN v.vals END FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
		WHERE m.name = $1 AND v.seq > $3 ORDER BY v.seq`, v.s.name, model, v.last)
	if err != nil {
		return nil, v.s.failCtx(ctx, "reading the vectors of", err)
	}
	defer rows.Close()
	var out []meaning.Record
	last := v.last
	for rows.Next() {
		var (
			seq       int64
			key, vals []byte
			r         meaning.Record
		)
		if err := rows.Scan(&seq, &key, &r.Scale, &vals); err != nil {
			return nil, v.s.failCtx(ctx, "reading the vectors of", err)
		}
		last = seq
		if vals == nil || len(key) != len(r.Key) {
			continue // another model's
		}
		copy(r.Key[:], key)
		r.Values = make([]int8, len(vals))
		for i, b := range vals {
			r.Values[i] = int8(b)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, v.s.failCtx(ctx, "reading the vectors of", err)
	}
	v.last = last
	return out, nil
}

func (v *vectors) Append(ctx context.Context, model string, batch []meaning.Record) error {
	ctx, cancel := context.WithTimeout(ctx, v.s.db.opts.QueryTimeout)
	defer cancel()
	keys := make([][]byte, len(batch))
	scales := make([]float32, len(batch))
	vals := make([][]byte, len(batch))
	for i, r := range batch {
		keys[i] = r.Key[:]
		scales[i] = r.Scale
		vals[i] = make([]byte, len(r.Values))
		for j, x := range r.Values {
			vals[i][j] = byte(x)
		}
	}
	var last *int64
	err := v.s.db.pool.QueryRow(ctx, `WITH added AS (
			INSERT INTO memory_vectors (memory_id, model, key, scale, vals)
			SELECT m.id, $2, u.key, u.scale, u.vals FROM memories m, unnest($3::bytea[], $4::real[], $5::bytea[]) AS u (key, scale, vals)
			WHERE m.name = $1
			ON CONFLICT (memory_id, model, key) DO NOTHING
			RETURNING seq)
		SELECT max(seq) FROM added`, v.s.name, model, keys, scales, vals).Scan(&last)
	if err != nil {
		return v.s.failCtx(ctx, "keeping the vectors of", err)
	}
	// Rows are added only under the lock, after Load: none was added
	// between the last row read and these.
	if last != nil && *last > v.last {
		v.last = *last
	}
	return nil
}

func (v *vectors) Compact(ctx context.Context, model string, keep []meaning.Record) error {
	ctx, cancel := context.WithTimeout(ctx, v.s.db.opts.QueryTimeout)
	defer cancel()
	keys := make([][]byte, len(keep))
	for i := range keep {
		keys[i] = keep[i].Key[:]
	}
	_, err := v.s.db.pool.Exec(ctx, `DELETE FROM memory_vectors v USING memories m
		WHERE m.name = $1 AND v.memory_id = m.id AND v.seq <= $2
		AND (v.model <> $3 OR NOT EXISTS (SELECT 1 FROM unnest($4::bytea[]) AS k (key) WHERE k.key = v.key))`,
		v.s.name, v.last, model, keys)
	if err != nil {
		return v.s.failCtx(ctx, "compacting the vectors of", err)
	}
	return nil
}

// Exclusive holds the memory's vectors lock while fn runs. It is a
// session-level advisory lock, not the memory row's lock that writes
// take (doc.go): fn asks the embeddings endpoint, for up to a minute,
// and must neither hold a transaction open that long nor make writers
// wait; the lock goes with its connection if the server dies. A DB lends
// one connection at a time to it, so the memories' vectors never take the
// connections that reads and writes need.
func (v *vectors) Exclusive(ctx context.Context, fn func() error) error {
	db := v.s.db
	select {
	case db.vectorTurn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.vectorTurn }()
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return v.s.fail("locking the vectors of", err)
	}
	defer conn.Release()
	key := v.lockKey()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		// Whether or not the lock was taken as the wait ended, a closed
		// connection holds none.
		conn.Conn().Close(context.Background())
		return v.s.fail("locking the vectors of", err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var ok bool
		if err := conn.QueryRow(uctx, "SELECT pg_advisory_unlock($1)", key).Scan(&ok); err != nil || !ok {
			// Closing the connection releases the lock.
			conn.Conn().Close(uctx)
		}
	}()
	return fn()
}
