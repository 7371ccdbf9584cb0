package memoryconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
)

// Memories is where named memories live: the files DIR/NAME.jsonl
// (--memories DIR), or the database of MEMORY_DATABASE_URL.
type Memories struct {
	// Where names the place for the log: "memory files NAME.jsonl in
	// DIR", or "memories in PostgreSQL database ..." (never a password).
	Where string

	open  func(ctx context.Context, name string) (*Memory, error)
	close func()
}

// Open opens memory name, which need not exist yet: a memory nobody wrote
// has no file or row until its first write (Memory.Exists).
func (m *Memories) Open(ctx context.Context, name string) (*Memory, error) {
	return m.open(ctx, name)
}

// Close closes the database connections the memories share.
func (m *Memories) Close() { m.close() }

// OpenMemories opens the place named memories live: the directory dir
// (--memories) when it is given, else the database. A malformed URL is a
// *SettingError; a directory that is a file, or a database that cannot be
// used, is an error saying so in one line. logf reports notices as
// Choice.Logf does.
func (c Config) OpenMemories(ctx context.Context, dir string, logf func(string, ...any)) (*Memories, error) {
	ch := Choice{Logf: logf}.withDefaults()
	if c.openErr != nil {
		return nil, c.openErr
	}
	if dir != "" {
		return c.memoryFiles(dir, ch)
	}
	desc, err := describe(c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db, err := pgstore.Connect(ctx, c.DatabaseURL, c.databaseOptions(ch.Logf))
	if err != nil {
		return nil, fmt.Errorf("cannot use the %s: %s", desc, oneLine(err))
	}
	return &Memories{
		Where: "memories in " + desc,
		open: func(ctx context.Context, name string) (*Memory, error) {
			s, err := db.Memory(ctx, name)
			if err != nil {
				return nil, err
			}
			// The connections are the Memories' to close, not the memory's.
			return &Memory{Store: s, Where: fmt.Sprintf("memory %q in %s", name, desc), exists: s.Exists, close: func() error { return nil }, vectors: s.Vectors}, nil
		},
		close: db.Close,
	}, nil
}

// memoryFiles is the directory of named memory files.
func (c Config) memoryFiles(dir string, ch Choice) (*Memories, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("--memories %s is not a directory", dir)
	}
	return &Memories{
		Where: "memory files NAME.jsonl in " + dir,
		open: func(_ context.Context, name string) (*Memory, error) {
			return c.openFile(filepath.Join(dir, name+".jsonl"), ch), nil
		},
		close: func() {},
	}, nil
}
