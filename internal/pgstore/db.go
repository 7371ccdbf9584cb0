package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// Options tune a DB. The zero value is the defaults.
type Options struct {
	// LockTimeout bounds a write's wait for another writer of the same
	// memory; 0 is 60 s, as for the memory file lock (docs/design.md §6).
	LockTimeout time.Duration
	// QueryTimeout bounds a View's queries, which take no context, and
	// finding a memory (DB.Memory); 0 is 30 s.
	QueryTimeout time.Duration
	// WriteTimeout bounds a whole write (Update), whatever its context
	// allows; 0 is LockTimeout, so a write ends within the time a write to
	// a memory file may wait for its lock.
	WriteTimeout time.Duration
	// Logf reports notices; nil discards them (the command hands down
	// its one logger).
	Logf func(format string, args ...any)
	// History bounds each memory's history of writes; nil is
	// history.Default.
	History *history.Limits
}

// DB is one PostgreSQL database holding any number of memories. It is safe
// for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	opts Options
	hub  hub // the Watches' listening connection
	// vectorTurn holds a token while a memory's vectors hold a
	// connection (Vectors, Exclusive).
	vectorTurn chan struct{}
}

// Connect opens a connection pool on the database at url (a postgres://
// URL or a libpq key=value string) and creates or migrates the schema.
func Connect(ctx context.Context, url string, opts Options) (*DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 60 * time.Second
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 30 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = opts.LockTimeout
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.History == nil {
		opts.History = &history.Default
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: say only what.
		return nil, errors.New("MEMORY_DATABASE_URL is not a valid PostgreSQL connection string (postgres://user:password@host:port/database)")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	rp := cfg.ConnConfig.RuntimeParams
	if rp["application_name"] == "" {
		rp["application_name"] = "mcp-server-memory"
	}
	// Set per connection, so a write costs no extra round trip for it. A
	// little under the write's deadline (when that is the lock timeout, as
	// by default), so that a write behind another writer fails as a lock
	// timeout, which it is, rather than as a database that did not answer.
	rp["lock_timeout"] = strconv.FormatInt(rowLockTimeout(opts).Milliseconds(), 10)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("preparing the PostgreSQL schema: %w", err)
	}
	db := &DB{pool: pool, opts: opts, vectorTurn: make(chan struct{}, 1)}
	db.hub.db = db
	return db, nil
}

// rowLockTimeout is how long a write waits for the memory's row lock: the
// lock timeout, less a margin for the rest of the write when the write's
// deadline is no later (at most 2 s: 58 s by default). Never 0, which
// PostgreSQL takes for no limit.
func rowLockTimeout(opts Options) time.Duration {
	if opts.WriteTimeout > opts.LockTimeout {
		return max(opts.LockTimeout, time.Millisecond)
	}
	return max(opts.LockTimeout-min(opts.LockTimeout/2, 2*time.Second), time.Millisecond)
}

// Close stops the Watches' listening and closes the pool. Stores of the DB
// must not be used afterwards.
func (db *DB) Close() {
	db.hub.close()
	db.pool.Close()
}

// Memory returns the Store for the named memory. A memory the database has
// no row for reads as empty, and its row is created by its first write
// that changes something (or by Import): reading names creates nothing.
// Finding the row is bounded by Options.QueryTimeout. Names follow
// access.ValidName.
func (db *DB) Memory(ctx context.Context, name string) (*Store, error) {
	if err := access.ValidName(name); err != nil {
		return nil, err
	}
	var origin [8]byte
	rand.Read(origin[:])
	s := &Store{db: db, name: name, origin: hex.EncodeToString(origin[:]), writing: make(chan struct{}, 1), reading: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(ctx, db.opts.QueryTimeout)
	defer cancel()
	if _, err := s.lookup(ctx); err != nil {
		return nil, s.fail("opening", err)
	}
	return s, nil
}

func (db *DB) memoryID(ctx context.Context, name string) (int64, error) {
	var id int64
	for range 3 {
		err := db.pool.QueryRow(ctx, "SELECT id FROM memories WHERE name = $1", name).Scan(&id)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, err
		}
		err = db.pool.QueryRow(ctx, "INSERT INTO memories (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING id", name).Scan(&id)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, err
		}
		// Another replica created it between our two statements: read it.
	}
	return 0, errors.New("the memory row keeps disappearing")
}

// Memories lists the names of the memories the database holds, sorted.
func (db *DB) Memories(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, "SELECT name FROM memories ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("listing memories in PostgreSQL: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("listing memories in PostgreSQL: %w", err)
	}
	return names, nil
}

// Open connects to the database at url and returns the Store of the named
// memory, creating its row if it has none; closing the Store closes the
// connection pool.
func Open(ctx context.Context, url, memory string, opts Options) (*Store, error) {
	db, err := Connect(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	s, err := db.Memory(ctx, memory)
	if err == nil && !s.Exists() {
		// The one memory a server or command works on: it exists from
		// the start, as a memory file's directory does.
		var id int64
		if id, err = db.memoryID(ctx, memory); err == nil {
			s.id.CompareAndSwap(0, id)
		} else {
			err = s.fail("opening", err)
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// ErrBadURL says a connection string does not parse. Its text never quotes
// the string, which may hold a password.
var ErrBadURL = errors.New("MEMORY_DATABASE_URL is not a valid PostgreSQL connection string (want postgres://user:password@host:port/database)")

// Describe names the database a connection string points to, for logs and
// messages: its name, host and port, never the user or the password.
func Describe(url string) (string, error) {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included: say only what.
		return "", ErrBadURL
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	return fmt.Sprintf("PostgreSQL database %q on %s:%d", cfg.Database, host, cfg.Port), nil
}
