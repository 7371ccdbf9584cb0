package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Options tune a Store. The zero value gives the defaults
// (docs/design.md §6).
type Options struct {
	Lock LockOptions
	// Logf reports unreadable lines and other notices; nil logs to stderr.
	Logf func(format string, args ...any)
}

// Store is one memory file and the graph last read from it. It is safe for
// concurrent use.
type Store struct {
	path string
	opts Options

	writeMu sync.Mutex // one writer of this process at a time

	mu         sync.RWMutex // guards the fields below
	g          *graph.Graph
	unreadable [][]byte // lines kept verbatim, written back after the relations
	stamp      stamp    // the file g was read from or saved as
	loaded     bool     // false: g must be read from the file first
	saved      stamp    // the file as this Store last saved it
}

// stamp tells whether the file changed since it was last read.
type stamp struct {
	exists bool
	size   int64
	mtime  time.Time
	id     uint64
}

func stampOf(fi fs.FileInfo) stamp {
	return stamp{exists: true, size: fi.Size(), mtime: fi.ModTime(), id: fileID(fi)}
}

// Open returns the Store for the memory file at path. It reads nothing yet; a
// missing file is an empty graph and is created on the first write.
func Open(path string, opts Options) *Store {
	if opts.Logf == nil {
		opts.Logf = log.New(os.Stderr, "", log.LstdFlags).Printf
	}
	if opts.Lock.Logf == nil {
		opts.Lock.Logf = opts.Logf
	}
	return &Store{path: path, opts: opts}
}

// Path returns the memory file's path.
func (s *Store) Path() string { return s.path }

func (s *Store) statFile() (stamp, error) {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, fmt.Errorf("reading the memory file: %w", err)
	}
	return stampOf(fi), nil
}

// View runs fn on the latest saved graph, reloading the file first if it
// changed. fn must not modify the graph or keep it after returning.
func (s *Store) View(fn func(*graph.Graph)) error {
	st, err := s.statFile()
	if err != nil {
		return s.explain(err)
	}
	s.mu.RLock()
	if s.loaded && s.stamp == st {
		defer s.mu.RUnlock()
		fn(s.g)
		return nil
	}
	s.mu.RUnlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return s.explain(err)
	}
	fn(s.g)
	return nil
}

// Update runs the mutation fn as a read-modify-write under the memory file's
// lock: it reloads the file if another process changed it, runs fn, and
// saves if fn changed the graph, which it reports. fn must validate before it
// changes anything: when it returns an error nothing is saved. Update returns
// fn's error, a lock error (errors.Is ErrLockTimeout after the lock timeout),
// or a save error, after which the file is as it was.
func (s *Store) Update(ctx context.Context, fn func(*graph.Graph) error) (changed bool, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// The lock lives beside the file, so a first write needs the directory.
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return false, s.explain(fmt.Errorf("creating the directory of the memory file: %w", err))
	}
	lock, err := AcquireLock(ctx, s.path, s.opts.Lock)
	if err != nil {
		return false, s.explain(err)
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil {
			s.opts.Logf("%v", rerr)
		}
	}()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return false, s.explain(err)
	}
	before := s.g.Version()
	if err := fn(s.g); err != nil || s.g.Version() == before {
		return false, err
	}
	if err := s.saveLocked(lock); err != nil {
		// The graph in memory is ahead of the file; read the file again next
		// time rather than serve what was never saved.
		s.loaded = false
		return false, s.explain(err)
	}
	return true, nil
}

// explain turns a file system error into the *PathError that says what is
// wrong with the memory file's path and how to fix it, when CheckPath finds
// something; any other error (a busy lock, a cancelled call, a full disk)
// comes back as it is. MCP hosts show tool errors to the user and often
// hide stderr, so a bad MEMORY_FILE_PATH must be named here, on every call
// it breaks, not only in the log at start.
func (s *Store) explain(err error) error {
	if errors.Is(err, ErrLockTimeout) || errors.Is(err, ErrLockLost) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if problem := CheckPath(s.path); problem != nil {
		return problem
	}
	return err
}

// refreshLocked reads the file if it changed since it was last read.
func (s *Store) refreshLocked() error {
	st, err := s.statFile()
	if err != nil {
		return err
	}
	if s.loaded && s.stamp == st {
		return nil
	}
	return s.loadLocked()
}

func (s *Store) loadLocked() error {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.g, s.unreadable, s.stamp, s.loaded = graph.New(), nil, stamp{}, true
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the memory file: %w", err)
	}
	defer f.Close()
	// Stamp the open file, not the name: a save by another process may
	// rename a new file over the name while we read.
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("reading the memory file: %w", err)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the memory file: %w", err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	// Decode keeps references into data (strings, cached lines): data is
	// never reused or modified.
	file := jsonl.Decode(data)
	for _, p := range file.Problems {
		s.opts.Logf("%s: line %d: %s", s.path, p.Line, p.Reason)
	}
	s.g, s.unreadable, s.stamp, s.loaded = file.Graph, file.Unreadable, stampOf(fi), true
	return nil
}

func (s *Store) saveLocked(lock *Lock) error {
	write := func(w io.Writer) error { return jsonl.Write(w, s.g, s.unreadable) }
	if err := writeFileAtomic(s.path, write, lock.Check); err != nil {
		return fmt.Errorf("saving %s: %w", s.path, err)
	}
	st, err := s.statFile()
	if err != nil {
		return err
	}
	s.stamp, s.saved = st, st
	return nil
}

// Watch polls the memory file every interval until ctx ends and calls
// onChange when it changed in a way this Store did not cause: another
// process saved it. Polling a stat is cheap, portable, needs no dependency,
// and sees renames over the file that directory watchers report
// inconsistently across platforms.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	lastSeen, _ := s.statFile()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Compare under the read lock: a save of ours holds the write lock
		// from rename to recording the new stamp, so it never looks foreign.
		s.mu.RLock()
		st, err := s.statFile()
		saved := s.saved
		s.mu.RUnlock()
		if err != nil {
			continue
		}
		if st != lastSeen && st != saved {
			onChange()
		}
		lastSeen = st
	}
}
