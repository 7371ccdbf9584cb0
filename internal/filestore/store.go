package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// Options tune a Store. The zero value gives the defaults
// (docs/design.md §6).
type Options struct {
	Lock LockOptions
	// Logf reports unreadable lines and other notices; nil discards
	// them (the command hands down its one logger).
	Logf func(format string, args ...any)
	// Journal makes a write that the write tools describe append a record
	// to the journal beside the memory file instead of rewriting the file;
	// compaction rewrites it later (docs/design.md §5, "The journal").
	// Without it every write rewrites the file, and compacts any journal
	// another process left. Every Store reads journals either way.
	Journal bool
	// CompactIdle is how long after its last journaled write a Store
	// compacts. 0 means 1 s.
	CompactIdle time.Duration
	// History bounds the history file beside the memory file, which
	// compaction moves the journal's records to; nil means
	// history.Default.
	History *history.Limits
}

const defaultCompactIdle = time.Second

// Compaction also starts at once, off the write path, when the journal
// passes a quarter of the memory file (and at least minCompactBytes) or
// holds maxJournalRecords records: the journal stays bounded however fast
// writes come.
const (
	minCompactBytes   = 256 << 10
	maxJournalRecords = 10000
)

// Store is one memory file and the graph last read from it. It is safe for
// concurrent use.
type Store struct {
	path string
	opts Options

	writeMu sync.Mutex    // one writer of this process at a time
	written graph.Written // this Store's writes, for its Watches

	mu         graph.RWMutex // guards the fields below
	g          *graph.Graph  // nil: g must be read from the file first
	unreadable [][]byte      // lines kept verbatim, written back after the relations
	stamp      stamp         // the file g was read from or saved as
	sum        *fileSum      // that file's content
	journal    journalStamp  // the journal as g holds it, and what it means
	saved      watchStamp    // the files as this Store last wrote them
	// foreign counts the reads that changed g after the first:
	// another process's writes reaching this Store, which its Watches
	// report.
	foreign  uint64
	readOnce bool
	lastID   string // the newest record id this Store has seen
	// The failures the log reports once per outage.
	historyOutage, compactOutage outage

	bgMu    sync.Mutex // guards the fields below
	timer   *time.Timer
	closed  bool
	stopBg  context.CancelFunc // cancels background compactions at Close
	bgCtx   context.Context
	running sync.WaitGroup // background compactions
}

// journalState is what the journal beside the memory file means for the
// file g was read from (docs/design.md §5, "Crashes").
type journalState uint8

const (
	// noJournal: the memory file alone is the memory.
	noJournal journalState = iota
	// overBase: the journal was begun on the file g was read from (its
	// header names it): every record applies, and writes append.
	overBase
	// compacting: the journal's last compacting line names a file that
	// was never renamed into place (a compaction killed before its
	// rename; its temporary file is still there): every record applies,
	// to the journal's base or to a foreign file, and the next write
	// compacts.
	compacting
	// compacted: the journal's last compacting line names the file g was
	// read from, so the records before it are in the file and only those
	// after it apply; the next write compacts. With none after it the
	// journal is retired: about to be removed, nothing may be appended.
	compacted
	// foreignFile: another program replaced the memory file (the
	// reference, a person, a restore). When a compaction of ours had
	// renamed its file into place first, the foreign file replaced that
	// one and wins: only the records after that compaction's line apply.
	// Otherwise every record applies again, as idempotent steps. The next
	// write compacts.
	foreignFile
)

// appends reports whether a write may append to a journal in state j.
func (j journalState) appends() bool { return j == noJournal || j == overBase }

// journalStamp is what a Store has read of the journal.
type journalStamp struct {
	state   journalState
	id      uint64
	size    int64 // the size when last read
	end     int64 // bytes of complete lines applied
	records int   // records applied
}

func (j journalStamp) exists() bool { return j.state != noJournal }

// retired: the journal ends with the compacting line of the file g was
// read from; nothing in it applies.
func (j journalStamp) retired() bool { return j.state == compacted && j.records == 0 }

// watchStamp tells whether the memory changed: the memory file or the
// journal.
type watchStamp struct {
	file    stamp
	jexists bool
	jid     uint64
	jsize   int64
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

// outage is a failure the log reports once: when it starts, not again
// until it has ended (ok) and started again.
type outage struct{ told bool }

func (o *outage) fail(logf func(string, ...any), format string, args ...any) {
	if !o.told {
		logf(format, args...)
	}
	o.told = true
}

func (o *outage) ok() { o.told = false }

// Open returns the Store for the memory file at path. It reads nothing yet; a
// missing file is an empty graph and is created on the first write.
func Open(path string, opts Options) *Store {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.Lock.Logf == nil {
		opts.Lock.Logf = opts.Logf
	}
	if opts.CompactIdle <= 0 {
		opts.CompactIdle = defaultCompactIdle
	}
	if opts.History == nil {
		opts.History = &history.Default
	}
	s := &Store{path: path, opts: opts}
	s.bgCtx, s.stopBg = context.WithCancel(context.Background())
	return s
}

func (s *Store) journalPath() string { return s.path + journalSuffix }

// HistoryPath returns the history file's path: beside the memory file.
func (s *Store) HistoryPath() string { return s.path + history.Suffix }

// absent reports whether err says there is no file: none at the path, or
// a file where the path needs a directory (a MEMORY_FILE_PATH under a
// file, which the server warns about when it starts).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// statJournal returns the journal's identity and size; its state is
// overBase when it exists (what it means takes reading it).
func (s *Store) statJournal() (journalStamp, error) {
	fi, err := os.Stat(s.journalPath())
	if absent(err) {
		return journalStamp{}, nil
	}
	if err != nil {
		return journalStamp{}, s.journalError("reading", err)
	}
	return journalStamp{state: overBase, id: fileID(fi), size: fi.Size()}, nil
}

// current reports whether g holds what the files hold.
func (s *Store) current(st stamp, j journalStamp) bool {
	return s.g != nil && s.stamp == st && s.journal.exists() == j.exists() &&
		s.journal.id == j.id && s.journal.size == j.size
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

// ExclusiveWanted reports whether a write or a reload waits for the
// graph held (graph.Contended).
func (s *Store) ExclusiveWanted() bool { return s.mu.Wanted() }

var _ graph.Contended = (*Store)(nil)

// View runs fn on the latest saved graph, reloading the file first if it
// changed, and returns fn's error. fn must not modify the graph or keep it
// after returning. ctx is not looked at: reading a file is not cancelled.
func (s *Store) View(ctx context.Context, fn func(*graph.Graph) error) error {
	st, err := s.statFile()
	if err != nil {
		return s.explain(err)
	}
	j, err := s.statJournal()
	if err != nil {
		return s.explain(err)
	}
	s.mu.RLock()
	if s.current(st, j) {
		defer s.mu.RUnlock()
		return fn(s.g)
	}
	s.mu.RUnlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return s.explain(err)
	}
	return fn(s.g)
}

// Update runs the write w as a read-modify-write under the memory file's
// lock: it reloads the file and the journal if another process changed
// them, runs w.Apply at the time it reads then (graph.Graph.Write), and, if
// that changed the graph, which it reports, makes the change durable:
// with Options.Journal, by appending the write's record to the journal;
// otherwise, or for a change the record does not describe, by saving the
// whole graph. w.Apply must validate before it changes anything: when it
// returns an error nothing is saved. Update returns that error, a lock
// error (errors.Is ErrLockTimeout after the lock timeout), or a save
// error, after which the file is as it was.
func (s *Store) Update(ctx context.Context, w graph.Write) (changed bool, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// The lock lives beside the file, so a first write needs the directory.
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return false, s.explain(fmt.Errorf("creating the directory of the memory file: %w", err))
	}
	err = s.underLock(ctx, func(lock *Lock) error {
		changed, err = s.updateLocked(lock, w)
		return err
	})
	if changed {
		s.written.Done()
	}
	return changed, err
}

// updateLocked is Update with the lock held and the graph read again. A
// write's record goes to the journal whatever follows: its sync is the
// write's acknowledgement, and compaction moves it to the history. A write
// the record does not wholly describe (Rewrite), every write of a Store
// without Options.Journal, and every write while the journal does not
// take appends, then saves the whole file at once.
func (s *Store) updateLocked(lock *Lock, w graph.Write) (changed bool, err error) {
	rec, changed, complete, err := s.g.Write(w, time.Now(), func() string {
		if s.journal.end == 0 {
			// A new journal: the last record is the history's.
			s.lastID = max(s.lastID, history.LastID(s.HistoryPath()))
		}
		return s.lastID
	})
	if !changed {
		return false, err
	}
	prev := s.journal
	changes := rec.Changes
	if len(changes) > 0 {
		if err := s.appendLocked(lock, &rec); err != nil {
			s.g = nil
			return false, s.explain(err)
		}
		if complete && s.opts.Journal && prev.state.appends() {
			s.armCompaction(s.journal.end > max(minCompactBytes, s.stamp.size/4) || s.journal.records >= maxJournalRecords)
			return true, nil
		}
	}
	// A write whose record holds it all survives another program
	// replacing the file meanwhile: its record applies to the new file.
	compact := s.compactLocked
	if complete && len(changes) > 0 {
		compact = s.compactFreshLocked
	}
	if err := compact(lock); err != nil {
		if len(changes) > 0 {
			// The write failed: its record must not stay to be applied.
			s.takeBackLocked(prev)
		}
		// The graph in memory is ahead of the file; read the file again next
		// time rather than serve what was never saved.
		s.g = nil
		return false, s.explain(err)
	}
	return true, nil
}

// underLock runs fn with the memory file's lock held, s.mu locked and the
// graph brought up to date with the file and the journal. A lock or
// reading error is explained; fn's is returned as it is.
func (s *Store) underLock(ctx context.Context, fn func(*Lock) error) error {
	lock, err := AcquireLock(ctx, s.path, s.opts.Lock)
	if err != nil {
		return s.explain(err)
	}
	defer func() {
		if rerr := lock.Release(); rerr != nil {
			s.opts.Logf("%v", rerr)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return s.explain(err)
	}
	return fn(lock)
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

// fileSum returns the sum of the memory file g was read from or saved as
// (none yet: the empty file's).
func (s *Store) fileSum() fileSum {
	if s.sum == nil {
		return sumOf(nil)
	}
	return *s.sum
}
