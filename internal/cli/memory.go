package cli

import (
	"errors"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

// memory is an opened memory and how the commands name it.
type memory struct {
	graph.Store
	file  *filestore.Store // nil for a memory in a database
	where string           // the file's path, or the memory and database
	close func()
	// vectors is where search by meaning keeps the memory's vectors.
	vectors func() meaning.Storage
}

// open opens the memory the command works on, as the server opens it: the
// memory --memory (default "default") in PostgreSQL when
// MEMORY_DATABASE_URL is set, else the memory file (--file, or
// MEMORY_FILE_PATH). Unreadable lines are reported on stderr, as the
// server reports them, unless quiet. The caller closes it.
func (c *context_) open(quiet bool) (*memory, error) {
	ctx, stop := interruptible()
	defer stop()
	m, err := c.config.Open(ctx, memoryconfig.Choice{File: c.file, Memory: c.memory, Logf: c.logf, Quiet: quiet})
	var setting *memoryconfig.SettingError
	if errors.As(err, &setting) {
		return nil, usageError{setting.Msg}
	}
	if err != nil {
		return nil, err
	}
	if m.File != nil {
		return &memory{Store: m.Store, file: m.File, where: m.File.Path(), close: func() { m.Close() }, vectors: m.Vectors}, nil
	}
	return &memory{Store: m.Store, where: m.Where, close: func() { m.Close() }, vectors: m.Vectors}, nil
}

// store opens the memory file, for the commands that work on memory files
// only.
func (c *context_) store(quiet bool) (*filestore.Store, error) {
	if c.config.DatabaseURL != "" {
		return nil, usagef("%s works on memory files only; unset MEMORY_DATABASE_URL", c.cmd.name)
	}
	m, err := c.open(quiet)
	if err != nil {
		return nil, err
	}
	return m.file, nil
}
