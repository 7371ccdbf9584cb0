package memoryconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
)

// A SettingError is a setting the user has to change before anything can
// be opened: a malformed MEMORY_DATABASE_URL, or a flag that does not
// apply to where the memory is. The server and the commands exit 2 on it,
// as on any other usage mistake.
type SettingError struct{ Msg string }

func (e *SettingError) Error() string { return e.Msg }

func settingf(format string, args ...any) error {
	return &SettingError{fmt.Sprintf(format, args...)}
}

// Choice is what the command line says about the memory, and where
// notices about it go.
type Choice struct {
	// File is --file (the commands): a path typed on the command line,
	// taken from the current directory; "" uses MEMORY_FILE_PATH.
	File string
	// Memory is --memory: the memory in the database; "" is "default".
	Memory string
	// Logf reports notices: a legacy file moved into place, a stale lock
	// broken, unreadable lines, the database's notices. nil discards
	// them (the command hands down its one logger).
	Logf func(format string, args ...any)
	// Quiet leaves the store's own notices (unreadable lines) out of
	// Logf, for a caller that reports them itself.
	Quiet bool
	// Journal, for the server: a memory file's writes are appended to its
	// journal and folded into the file when idle, and at Close, so the
	// file alone is the whole memory again after a clean exit. The
	// commands save whole files.
	Journal bool
}

func (ch Choice) withDefaults() Choice {
	if ch.Logf == nil {
		ch.Logf = func(string, ...any) {}
	}
	return ch
}

// Memory is an opened memory.
type Memory struct {
	Store graph.Store
	// File is the memory file's store, nil for a memory in a database.
	File *filestore.Store
	// Where names the memory for logs and its page: "memory file PATH",
	// or `memory "NAME" in PostgreSQL database "DB" on HOST:PORT` (never
	// a password).
	Where string
	// HidePaths are the spellings of the memory file that error messages
	// to remote clients leave out (none for a database).
	HidePaths []string

	exists  func() bool
	close   func() error
	vectors func() meaning.Storage
}

// Vectors returns where search by meaning keeps the memory's vectors: the
// vectors file beside the memory file, or the database's table, which
// the replicas share. Each Index needs its own.
func (m *Memory) Vectors() meaning.Storage { return m.vectors() }

// Exists reports whether the memory has been written: a memory file on
// disk, a memory's row in the database.
func (m *Memory) Exists() bool { return m.exists() }

// Close releases the memory: the database connections it alone holds,
// or a memory file's journal, folded into the file. The error is a
// compaction at exit that failed (the log has said why; the journal keeps
// every write): the process should exit 1. A journal left because the
// lock was busy is said in the log and is no error.
func (m *Memory) Close() error { return m.close() }

// Open opens the one memory the configuration and ch choose: the memory
// ch.Memory in PostgreSQL when DatabaseURL is set, else the memory file.
// A flag that does not apply, or a malformed URL, is a *SettingError; a
// database that cannot be used is an error naming it in one line.
func (c Config) Open(ctx context.Context, ch Choice) (*Memory, error) {
	ch = ch.withDefaults()
	if c.openErr != nil {
		return nil, c.openErr
	}
	if c.DatabaseURL != "" {
		return c.openDatabase(ctx, ch)
	}
	if ch.Memory != "" {
		return nil, settingf("--memory applies to a database; set MEMORY_DATABASE_URL")
	}
	path, err := c.path(ch)
	if err != nil {
		return nil, err
	}
	return c.openFile(path, ch), nil
}

// path resolves the memory file ch chooses. MEMORY_FILE_PATH follows the
// server's rule (a relative path is taken from the executable's
// directory), so every command reaches the file the server uses; --file
// is typed on a command line and, like any path there, is taken from the
// current directory.
func (c Config) path(ch Choice) (string, error) {
	ch = ch.withDefaults()
	value := ch.File
	if value != "" && value != "~" && !strings.HasPrefix(value, "~/") && !strings.HasPrefix(value, `~\`) {
		abs, err := filepath.Abs(value)
		if err != nil {
			return "", fmt.Errorf("--file %s: %w", value, err)
		}
		value = abs
	}
	if value == "" {
		value = c.FilePath
	}
	dir, err := filestore.ServerDir()
	if err != nil {
		return "", err
	}
	return filestore.ResolvePath(value, dir, ch.Logf)
}

// openFile opens the memory file at path.
func (c Config) openFile(path string, ch Choice) *Memory {
	lock := c.Lock
	lock.Logf = ch.Logf
	logf := ch.Logf
	if ch.Quiet {
		logf = func(string, ...any) {}
	}
	lim := c.historyLimits()
	s := filestore.Open(path, filestore.Options{Logf: logf, Lock: lock, Journal: ch.Journal, CompactIdle: c.CompactIdle, History: &lim})
	return &Memory{
		Store: s, File: s, Where: "memory file " + path, HidePaths: hiddenPaths(path),
		exists:  func() bool { _, err := os.Lstat(path); return err == nil },
		vectors: func() meaning.Storage { return meaning.FileStorage(meaning.VectorsPath(path)) },
		close: func() error {
			err := s.Close()
			switch {
			case errors.Is(err, filestore.ErrJournalLeft):
				ch.Logf("%v", err)
				return nil
			case err != nil:
				ch.Logf("compacting the memory file at exit failed (its journal keeps every write for the next start): %v", err)
			}
			return err
		},
	}
}

// openDatabase opens the memory ch.Memory in the database.
func (c Config) openDatabase(ctx context.Context, ch Choice) (*Memory, error) {
	if ch.File != "" {
		return nil, settingf("--file does not apply when MEMORY_DATABASE_URL is set; unset it to use a memory file")
	}
	name := ch.Memory
	if name == "" {
		name = access.DefaultMemory
	}
	desc, err := describe(c.DatabaseURL)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("memory %q in %s", name, desc)
	logf := ch.Logf
	if ch.Quiet {
		logf = func(string, ...any) {}
	}
	s, err := pgstore.Open(ctx, c.DatabaseURL, name, c.databaseOptions(logf))
	if err != nil {
		return nil, fmt.Errorf("cannot use the %s: %s", where, oneLine(err))
	}
	return &Memory{Store: s, Where: where, exists: s.Exists, close: func() error { s.Close(); return nil }, vectors: s.Vectors}, nil
}

// databaseOptions are the PostgreSQL store's options: the lock timeout,
// and the deadlines of reads and writes.
func (c Config) databaseOptions(logf func(string, ...any)) pgstore.Options {
	lim := c.historyLimits()
	return pgstore.Options{LockTimeout: c.Lock.Timeout, QueryTimeout: c.DatabaseReadTimeout, WriteTimeout: c.DatabaseWriteTimeout, Logf: logf, History: &lim}
}

// historyLimits are the history's bounds: history.Default for a Config
// not made by Read.
func (c Config) historyLimits() history.Limits {
	if c.History == (history.Limits{}) {
		return history.Default
	}
	return c.History
}

// describe names the database for logs and messages by host and database
// only; a connection string that does not parse is a *SettingError that
// does not quote it (it may hold a password).
func describe(url string) (string, error) {
	d, err := pgstore.Describe(url)
	if err != nil {
		return "", &SettingError{err.Error()}
	}
	return d, nil
}

// oneLine flattens the database driver's multi-line errors into the one
// line a log entry or a command's message is.
func oneLine(err error) string {
	return strings.NewReplacer(":\n\t", ": ", "\n\t", "; ", "\n", "; ").Replace(err.Error())
}

// hiddenPaths are the spellings of the memory file at path that error
// messages to remote clients must not show: the path, and the file it
// stands for once links are followed (in its directory's real place when
// it does not exist yet).
func hiddenPaths(path string) []string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		dir, derr := filepath.EvalSymlinks(filepath.Dir(path))
		if derr != nil {
			return []string{path}
		}
		real = filepath.Join(dir, filepath.Base(path))
	}
	if real != path {
		return []string{path, real}
	}
	return []string{path}
}
