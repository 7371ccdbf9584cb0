package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
)

// memory is an opened memory and how the commands name it.
type memory struct {
	graph.Store
	where string // the file's path, or the memory and database
	close func()
}

// databaseURL returns MEMORY_DATABASE_URL: when set, the commands work on
// a memory in PostgreSQL, as the server does.
func databaseURL() string { return os.Getenv("MEMORY_DATABASE_URL") }

// open opens the memory the command works on: the memory --memory (default
// "default") in PostgreSQL when MEMORY_DATABASE_URL is set, else the memory
// file. The caller closes it.
func (c *context_) open(quiet bool) (*memory, error) {
	url := databaseURL()
	if url == "" {
		if c.memory != "" {
			return nil, usagef("--memory applies to a database; set MEMORY_DATABASE_URL")
		}
		s, err := c.store(quiet)
		if err != nil {
			return nil, err
		}
		return &memory{Store: s, where: s.Path(), close: func() {}}, nil
	}
	if c.file != "" {
		return nil, usagef("--file does not apply when MEMORY_DATABASE_URL is set; unset it to use a memory file")
	}
	name := c.memory
	if name == "" {
		name = "default"
	}
	where, err := describeDatabaseURL(url)
	if err != nil {
		return nil, err
	}
	where = fmt.Sprintf("memory %q in %s", name, where)
	lock, err := lockOptions()
	if err != nil {
		return nil, err
	}
	ctx, stop := interruptible()
	defer stop()
	logf := c.logf
	if quiet {
		logf = func(string, ...any) {}
	}
	s, err := pgstore.Open(ctx, url, name, pgstore.Options{LockTimeout: lock.Timeout, Logf: logf})
	if err != nil {
		msg := strings.NewReplacer(":\n\t", ": ", "\n\t", "; ", "\n", "; ").Replace(err.Error())
		return nil, fmt.Errorf("cannot use the %s: %s", where, msg)
	}
	return &memory{Store: s, where: where, close: s.Close}, nil
}

// describeDatabaseURL names the database for output; a connection string
// that does not parse is a usage error.
func describeDatabaseURL(url string) (string, error) {
	d, err := pgstore.Describe(url)
	if err != nil {
		return "", usagef("%v", err)
	}
	return d, nil
}
