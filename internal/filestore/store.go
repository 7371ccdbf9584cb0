package filestore

import (
	"bytes"
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
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Options tune a Store. The zero value gives the defaults
// (docs/design.md §6).
type Options struct {
	Lock LockOptions
	// Logf reports unreadable lines and other notices; nil logs to stderr.
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

	writeMu sync.Mutex // one writer of this process at a time

	mu         sync.RWMutex // guards the fields below
	g          *graph.Graph
	unreadable [][]byte // lines kept verbatim, written back after the relations
	stamp      stamp    // the file g was read from or saved as
	sum        fileSum  // that file's content, once sumOK
	sumOK      bool
	raw        []byte // that file's bytes, until sum is taken
	journal    journalStamp
	records    int // records in the journal
	// mustCompact: the journal does not apply to the memory file as its
	// base (a compaction was cut short, or another program replaced the
	// file), so the next write compacts rather than appends.
	mustCompact bool
	loaded      bool       // false: g must be read from the file first
	saved       watchStamp // the files as this Store last wrote them
	// foreign counts the reads that changed g after the first:
	// another process's writes reaching this Store, which its Watches
	// report.
	foreign  uint64
	readOnce bool
	dirty    bool // this Store appended records not yet compacted
	// historyFailed: writing the history failed and the log said so; it
	// says so again only after the history worked again.
	historyFailed bool
	lastID        string // the newest record id this Store has seen

	bgMu    sync.Mutex // guards the fields below
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup // background compactions
}

// journalStamp is what a Store has read of the journal.
type journalStamp struct {
	exists bool
	id     uint64
	size   int64 // the size when last read
	end    int64 // bytes of complete lines applied
	// retired: the journal ends with the intent of a compaction whose
	// file g was read from, and is about to be removed; nothing in it
	// applies, and nothing may be appended to it.
	retired bool
}

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

// Open returns the Store for the memory file at path. It reads nothing yet; a
// missing file is an empty graph and is created on the first write.
func Open(path string, opts Options) *Store {
	if opts.Logf == nil {
		opts.Logf = log.New(os.Stderr, "", log.LstdFlags).Printf
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
	return &Store{path: path, opts: opts}
}

func (s *Store) journalPath() string { return s.path + journalSuffix }

// HistoryPath returns the history file's path: beside the memory file.
func (s *Store) HistoryPath() string { return s.path + history.Suffix }

// statJournal returns the journal's identity and size, exists false when
// there is none.
func (s *Store) statJournal() (journalStamp, error) {
	fi, err := os.Stat(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return journalStamp{}, nil
	}
	if err != nil {
		return journalStamp{}, fmt.Errorf("reading the journal: %w", err)
	}
	return journalStamp{exists: true, id: fileID(fi), size: fi.Size()}, nil
}

// current reports whether g holds what the files hold.
func (s *Store) current(st stamp, j journalStamp) bool {
	return s.loaded && s.stamp == st && s.journal.exists == j.exists &&
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

// View runs fn on the latest saved graph, reloading the file first if it
// changed. fn must not modify the graph or keep it after returning.
func (s *Store) View(fn func(*graph.Graph)) error {
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
// lock: it reloads the file and the journal if another process changed
// them, runs fn, and, if fn changed the graph, which it reports, makes the
// change durable: with Options.Journal, by appending what the write tools
// changed to the journal; otherwise, or for any other change, by saving the
// whole graph. fn must validate before it
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
	author := history.AuthorOf(ctx)
	err = s.underLock(ctx, func(lock *Lock) error {
		changed, err = s.updateLocked(lock, author, fn)
		return err
	})
	return changed, err
}

// updateLocked is Update with the lock held and the graph read again. A
// write's record goes to the journal whatever follows: its sync is the
// write's acknowledgement, and compaction moves it to the history. A write
// the record does not wholly describe (Rewrite), and every write of a
// Store without Options.Journal, then saves the whole file at once.
func (s *Store) updateLocked(lock *Lock, author history.Author, fn func(*graph.Graph) error) (changed bool, err error) {
	s.g.TrackChanges()
	before := s.g.Version()
	err = fn(s.g)
	changes, complete := s.g.TakeChanges()
	if err != nil || s.g.Version() == before {
		return false, err
	}
	prev := s.journal
	if len(changes) > 0 {
		now := time.Now()
		if s.journal.end == 0 {
			// A new journal: the last record is the history's.
			s.lastID = max(s.lastID, history.LastID(s.HistoryPath()))
		}
		rec := history.Record{ID: history.NewID(now, s.lastID), Time: now.UTC().Truncate(time.Second), Tool: author.Tool, Client: author.Client, Changes: changes}
		if err := s.appendLocked(lock, &rec); err != nil {
			s.loaded = false
			return false, s.explain(err)
		}
		if complete && s.opts.Journal && !s.mustCompact && !s.journal.retired {
			s.armCompaction(s.journal.end > max(minCompactBytes, s.stamp.size/4) || s.records >= maxJournalRecords)
			return true, nil
		}
	}
	if err := s.compactLocked(lock); err != nil {
		if len(changes) > 0 {
			// The write failed: its record must not stay to be applied.
			s.takeBackLocked(prev)
		}
		// The graph in memory is ahead of the file; read the file again next
		// time rather than serve what was never saved.
		s.loaded = false
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

// refreshLocked reads the file if it changed since it was last read,
// and counts in foreign a read that changed g.
func (s *Store) refreshLocked() error {
	g, version := s.g, uint64(0)
	if g != nil {
		version = g.Version()
	}
	err := s.readChangesLocked()
	if s.readOnce && (s.g != g || s.g.Version() != version) {
		s.foreign++
	}
	s.readOnce = s.readOnce || err == nil
	return err
}

// readChangesLocked is refreshLocked without the count.
func (s *Store) readChangesLocked() error {
	st, err := s.statFile()
	if err != nil {
		return err
	}
	j, err := s.statJournal()
	if err != nil {
		return err
	}
	if s.current(st, j) {
		return nil
	}
	// Another process compacted the journal we had applied (and may have
	// begun a new one since).
	if s.loaded && s.stamp != st && s.journal.exists && !s.mustCompact {
		ok, err := s.adoptCompactedLocked(st)
		if err != nil {
			return err
		}
		if ok {
			// The journal was looked at before the file: the compaction
			// may have retired it since.
			if j, err = s.statJournal(); err != nil {
				return err
			}
			if s.current(st, j) {
				return nil
			}
		}
	}
	// The compaction we adopted removed its journal: nothing changed.
	if s.loaded && s.stamp == st && !j.exists && s.journal.retired {
		s.journal = journalStamp{}
		return nil
	}
	// Only the journal grew, or appeared: apply what was appended since.
	if s.loaded && s.stamp == st && j.exists && !s.mustCompact &&
		(!s.journal.exists || j.id == s.journal.id && j.size >= s.journal.end) {
		if ok, err := s.catchUpLocked(); ok || err != nil {
			return err
		}
	}
	return s.loadLocked()
}

// adoptCompactedLocked takes the memory file at stamp st as the one g was
// read from when it holds exactly what g would be saved as: another
// process compacted the journal that g already holds. Comparing costs a
// pass over the file, where reading it again would cost a parse and a new
// graph. It reports false when the file holds anything else.
func (s *Store) adoptCompactedLocked(st stamp) (bool, error) {
	data, got, err := readMemoryFile(s.path)
	if err != nil || got != st {
		return false, err
	}
	cmp := &comparingWriter{want: data}
	sw := newSummingWriter(cmp)
	if err := jsonl.Write(sw, s.g, s.unreadable); err != nil || !cmp.equal() {
		return false, nil
	}
	s.stamp, s.sum, s.sumOK, s.raw = st, sw.sum(), true, nil
	s.journal, s.records = journalStamp{}, 0
	return true, nil
}

// comparingWriter tells whether what is written to it is want.
type comparingWriter struct {
	want     []byte
	off      int
	mismatch bool
}

func (c *comparingWriter) Write(p []byte) (int, error) {
	if !c.mismatch && (c.off+len(p) > len(c.want) || !bytes.Equal(c.want[c.off:c.off+len(p)], p)) {
		c.mismatch = true
	}
	c.off += len(p)
	return len(p), nil
}

func (c *comparingWriter) equal() bool { return !c.mismatch && c.off == len(c.want) }

// catchUpLocked applies the journal's lines after those already applied.
// It reports false when the journal is not the one g was read with after
// all, and the whole memory must be read again.
func (s *Store) catchUpLocked() (bool, error) {
	f, err := os.Open(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the journal: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("reading the journal: %w", err)
	}
	fresh := !s.journal.exists
	if fresh {
		s.journal = journalStamp{exists: true, id: fileID(fi)}
	}
	if fileID(fi) != s.journal.id || fi.Size() < s.journal.end {
		return false, nil
	}
	data := make([]byte, fi.Size()-s.journal.end)
	if _, err := f.ReadAt(data, s.journal.end); err != nil && err != io.EOF {
		return false, fmt.Errorf("reading the journal: %w", err)
	}
	p := parseJournal(data, s.journal.end, s.opts.Logf, s.journalPath())
	if fresh && retiredInto(p, s.fileSum()) {
		s.journal.size, s.journal.end, s.journal.retired = fi.Size(), p.end, true
		return true, nil
	}
	if fresh && (p.base == nil || *p.base != s.fileSum()) {
		// Not a journal begun on the file we hold: read it all the
		// careful way.
		s.journal = journalStamp{}
		return false, nil
	}
	for _, r := range p.records {
		if r.record != nil {
			s.g.Apply(r.record.Changes)
			s.lastID = max(s.lastID, r.record.ID)
			s.records++
			// Compact at exit what another process may never compact.
			s.dirty = s.dirty || s.opts.Journal
		}
	}
	s.journal.size, s.journal.end = fi.Size(), p.end
	return true, nil
}

// retiredInto reports whether the journal p was compacted into the file
// of sum: its last line is the intent naming that file.
func retiredInto(p parsedJournal, sum fileSum) bool {
	n := len(p.records)
	return n > 0 && p.records[n-1].intent != nil && *p.records[n-1].intent == sum
}

// loadAttempts bounds how often a load starts again because a compaction
// replaced the memory file while it read: each attempt that fails saw a
// compaction finish, and compactions are seconds apart.
const loadAttempts = 10

// loadLocked reads the memory file and then the journal, and applies the
// journal's records (docs/design.md §5, "Reading"). Readers take no lock, so
// a compaction may replace the file and retire the journal between the two
// reads; a load that sees the file change under it starts again.
func (s *Store) loadLocked() error {
	for attempt := 1; ; attempt++ {
		settled, err := s.loadOnce(attempt == loadAttempts)
		if err != nil || settled {
			return err
		}
	}
}

func (s *Store) loadOnce(last bool) (settled bool, err error) {
	data, st, err := readMemoryFile(s.path)
	if err != nil {
		return false, err
	}
	jdata, j, err := readJournal(s.journalPath())
	if err != nil {
		return false, err
	}
	if now, err := s.statFile(); err != nil {
		return false, err
	} else if now != st && !last {
		return false, nil
	}
	// Decode keeps references into data (strings, cached lines): data is
	// never reused or modified.
	file := jsonl.Decode(data)
	for _, p := range file.Problems {
		s.opts.Logf("%s: line %d: %s", s.path, p.Line, p.Reason)
	}
	s.g, s.unreadable, s.stamp, s.loaded = file.Graph, file.Unreadable, st, true
	// The sum costs a pass over the file: take it only when a journal
	// needs it. The graph keeps data alive anyway (its strings point into
	// it).
	s.sum, s.sumOK, s.raw = fileSum{}, false, data
	s.journal, s.records, s.mustCompact = j, 0, false
	if !j.exists {
		return true, nil
	}
	p := parseJournal(jdata, 0, s.opts.Logf, s.journalPath())
	s.journal.end = p.end
	sum := s.fileSum()
	// The records to apply: those after the last compaction that wrote
	// this very file, else all of them on the file they were written
	// against, else (another program replaced the file) all of them again,
	// as idempotent steps.
	from, foreign := 0, true
	for i := len(p.records) - 1; i >= 0; i-- {
		if in := p.records[i].intent; in != nil && *in == sum {
			from, foreign = i+1, false
			s.mustCompact = true
			s.journal.retired = from == len(p.records)
			break
		}
	}
	if foreign && p.base != nil && *p.base == sum {
		foreign = false
	}
	if foreign && len(p.records) > 0 {
		s.mustCompact = true
	}
	for _, r := range p.records {
		if r.record != nil {
			s.lastID = max(s.lastID, r.record.ID)
		}
	}
	skipped, applied := 0, 0
	for _, r := range p.records[from:] {
		if r.record != nil {
			skipped += s.g.Apply(r.record.Changes)
			applied++
		}
	}
	s.records = applied
	if foreign && applied > 0 {
		s.opts.Logf("%s was replaced by another program while the journal %s held %d writes not yet in it: applying them again (%d could not apply)",
			s.path, s.journalPath(), applied, skipped)
	}
	if applied > 0 && s.opts.Journal {
		// Left by a process that ended without compacting, or still
		// another's: compact when idle, and at exit.
		s.dirty = true
		s.armCompaction(false)
	}
	return true, nil
}

// readMemoryFile returns the memory file's content and the stamp of the
// file read (empty when there is none).
func readMemoryFile(path string) ([]byte, stamp, error) {
	data, fi, err := readWhole(path, "the memory file")
	if fi == nil {
		return nil, stamp{}, err
	}
	return data, stampOf(fi), nil
}

func readJournal(path string) ([]byte, journalStamp, error) {
	data, fi, err := readWhole(path, "the journal")
	if fi == nil {
		return nil, journalStamp{}, err
	}
	return data, journalStamp{exists: true, id: fileID(fi), size: int64(len(data))}, nil
}

// readWhole reads the file at path, what it is named in errors, and
// returns its content and the FileInfo of the file read: nil, with no
// error, when there is none. The FileInfo is the open file's, not the
// name's: a save by another process may rename a new file over the name
// while we read.
func readWhole(path, what string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", what, err)
	}
	data, err := readAll(f, fi.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return data, fi, nil
}

// readAll reads f to its end, sized for the size it had.
func readAll(f *os.File, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// appendLocked acknowledges a write: it appends the write's record to the
// journal (with the header first when the journal is new) and syncs it.
func (s *Store) appendLocked(lock *Lock, rec *history.Record) error {
	if err := lock.Check(); err != nil {
		return err
	}
	var buf []byte
	if s.journal.end == 0 {
		buf = appendHeader(buf, s.fileSum())
	}
	buf = history.AppendLine(buf, rec)
	s.lastID = rec.ID
	end, id, err := s.writeJournalLocked(buf)
	if err != nil {
		return fmt.Errorf("appending to the journal %s: %w", s.journalPath(), err)
	}
	s.journal = journalStamp{exists: true, id: id, size: end, end: end}
	s.records++
	s.dirty = true
	s.saved = watchStamp{file: s.stamp, jexists: true, jid: id, jsize: end}
	return nil
}

// takeBackLocked cuts the journal back to what it was (prev) before a
// write whose save then failed appended its record, so that the record of
// a write reported as failed is never applied.
func (s *Store) takeBackLocked(prev journalStamp) {
	var err error
	if prev.exists {
		err = os.Truncate(s.journalPath(), prev.end)
	} else {
		err = os.Remove(s.journalPath())
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logf("taking back the record of a failed write from the journal %s: %v", s.journalPath(), err)
	}
}

// writeJournalLocked writes buf at the end of the journal's complete lines,
// cutting off a torn line a killed writer left, and syncs it.
func (s *Store) writeJournalLocked(buf []byte) (end int64, id uint64, err error) {
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(s.path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.OpenFile(s.journalPath(), os.O_WRONLY|os.O_CREATE, mode)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	created := !s.journal.exists
	if created {
		// A new journal follows a compaction: clear what killed savers
		// left, as a save does.
		dir, base := filepath.Split(s.path)
		if dir == "" {
			dir = "."
		}
		removeStaleTemps(dir, base)
	}
	if fi.Size() != s.journal.end {
		if err := f.Truncate(s.journal.end); err != nil {
			return 0, 0, err
		}
	}
	if _, err := f.WriteAt(buf, s.journal.end); err != nil {
		f.Truncate(s.journal.end) // no reader may take an unacknowledged write as landed
		return 0, 0, err
	}
	if err := f.Sync(); err != nil {
		f.Truncate(s.journal.end)
		return 0, 0, err
	}
	if created {
		// The journal's name must survive a crash as well as its content.
		if err := syncDir(filepath.Dir(s.path)); err != nil {
			return 0, 0, err
		}
	}
	return s.journal.end + int64(len(buf)), fileID(fi), f.Close()
}

// compactLocked writes the whole graph to the memory file and retires the
// journal. Before it renames the new file into place it appends a
// compacting line naming that file, so that a reader after a crash between
// the rename and the journal's removal knows the journal is already in the
// file.
func (s *Store) compactLocked(lock *Lock) error {
	var sw *summingWriter
	write := func(w io.Writer) error {
		sw = newSummingWriter(w)
		return jsonl.Write(sw, s.g, s.unreadable)
	}
	beforeRename := func() error {
		if err := crashAt("before intent"); err != nil {
			return err
		}
		if s.journal.exists && s.journal.end > 0 {
			if _, _, err := s.writeJournalLocked(appendIntent(nil, sw.sum(), time.Now())); err != nil {
				return fmt.Errorf("appending to the journal %s: %w", s.journalPath(), err)
			}
		}
		if err := crashAt("before rename"); err != nil {
			return err
		}
		return lock.Check()
	}
	if err := writeFileAtomic(s.path, write, beforeRename); err != nil {
		return fmt.Errorf("saving %s: %w", s.path, err)
	}
	if err := crashAt("before the history"); err != nil {
		return err
	}
	s.keepHistoryLocked()
	if err := crashAt("before retiring the journal"); err != nil {
		return err
	}
	if s.journal.exists {
		// Losing this removal to a crash is harmless: the compacting line
		// says the journal is in the file.
		if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.opts.Logf("removing the compacted journal %s: %v", s.journalPath(), err)
		}
	}
	st, err := s.statFile()
	if err != nil {
		return err
	}
	s.stamp, s.sum, s.sumOK, s.raw = st, sw.sum(), true, nil
	s.journal, s.records, s.mustCompact, s.dirty = journalStamp{}, 0, false, false
	s.saved = watchStamp{file: st}
	return nil
}

// keepHistoryLocked moves the journal's records to the history file
// (AppendFile skips those a move cut short already wrote) and bounds the
// history. A history that cannot be written loses records, never a write:
// the log says so once.
func (s *Store) keepHistoryLocked() {
	lim := *s.opts.History
	var lines [][]byte
	if s.journal.exists && !lim.Off() {
		data, _, err := readJournal(s.journalPath())
		if err != nil {
			s.historyFailure(err)
			return
		}
		// The record lines are the history's own: copied, not decoded.
		for raw := range bytes.Lines(data) {
			if raw[len(raw)-1] != '\n' || bytes.HasPrefix(raw, []byte(`{"journal":`)) || bytes.HasPrefix(raw, []byte(`{"compacting":`)) {
				continue
			}
			if line, ok := history.LineOf(raw); ok {
				lines = append(lines, line)
			}
		}
	}
	err := history.AppendLines(s.HistoryPath(), lines, s.fileMode())
	if err == nil {
		_, err = history.Trim(s.HistoryPath(), lim, time.Now())
	}
	if over := (*history.OverBoundError)(nil); errors.As(err, &over) {
		s.opts.Logf("%s: %v", s.HistoryPath(), over)
		err = nil
	}
	if err != nil {
		s.historyFailure(err)
		return
	}
	s.historyFailed = false
}

func (s *Store) historyFailure(err error) {
	if !s.historyFailed {
		s.opts.Logf("the history %s could not be written (the memory was saved; until this is fixed its history misses writes): %v", s.HistoryPath(), err)
	}
	s.historyFailed = true
}

// fileMode is the memory file's mode, which the files beside it take.
func (s *Store) fileMode() fs.FileMode {
	if fi, err := os.Stat(s.path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// History returns the records f chooses, newest first (at most f.Limit):
// the history file's and those of the journal not yet moved to it. It takes no lock:
// it reads the journal first, so a record a compaction moves meanwhile is
// read from the history (and a record read twice is kept once).
func (s *Store) History(f history.Filter) ([]history.Record, error) {
	data, _, err := readJournal(s.journalPath())
	if err != nil {
		return nil, err
	}
	var recs []history.Record
	for _, r := range parseJournal(data, 0, func(string, ...any) {}, s.journalPath()).records {
		if r.record != nil && f.Match(r.record) {
			recs = append(recs, *r.record)
			if f.Headers {
				recs[len(recs)-1].Changes = nil
			}
		}
	}
	// The journal's records are the newest: the history file's reader
	// stops at f.Limit of its own, and what the two hold twice is kept
	// once before the limit is applied.
	old, _, err := history.ReadFile(s.HistoryPath(), f)
	if err != nil {
		return nil, fmt.Errorf("reading the history %s: %w", s.HistoryPath(), err)
	}
	recs = history.Newest(append(old, recs...))
	if f.Limit > 0 && len(recs) > f.Limit {
		recs = recs[:f.Limit]
	}
	return recs, nil
}

// crashAt lets tests stop a compaction at a named stage, leaving the files
// as a process killed there leaves them; the Store is then thrown away.
var crashAt = func(stage string) error { return nil }

// fileSum returns the sum of the memory file g was read from or saved as.
func (s *Store) fileSum() fileSum {
	if !s.sumOK {
		s.sum, s.sumOK, s.raw = sumOf(s.raw), true, nil
	}
	return s.sum
}

// armCompaction schedules a compaction: after the idle time, or at once.
func (s *Store) armCompaction(now bool) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.closed {
		return
	}
	d := s.opts.CompactIdle
	if now {
		d = 0
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.compactInBackground)
		return
	}
	s.timer.Reset(d)
}

func (s *Store) compactInBackground() {
	s.bgMu.Lock()
	if s.closed {
		s.bgMu.Unlock()
		return
	}
	s.running.Add(1)
	s.bgMu.Unlock()
	defer s.running.Done()
	if err := s.Compact(context.Background()); err != nil {
		s.opts.Logf("compacting %s: %v", s.path, err)
	}
}

// Compact folds the journal into the memory file, under the lock, if there
// is a journal: afterwards the memory file alone is the whole memory, in
// the reference's format. Writes wait for it as for any other write.
func (s *Store) Compact(ctx context.Context) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if j, err := s.statJournal(); err != nil || !j.exists {
		return err
	}
	return s.underLock(ctx, func(lock *Lock) error {
		if !s.journal.exists {
			return nil
		}
		if err := s.compactLocked(lock); err != nil {
			s.loaded = false
			return s.explain(err)
		}
		return nil
	})
}

// Close stops background compaction and, when this Store journaled writes,
// or read records, that are not yet compacted, compacts, so that after a clean exit the
// memory file is the whole memory.
func (s *Store) Close() error {
	s.bgMu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.bgMu.Unlock()
	s.running.Wait()
	s.mu.RLock()
	dirty := s.dirty
	s.mu.RUnlock()
	if !dirty {
		return nil
	}
	return s.Compact(context.Background())
}

// Watch polls the memory file and its journal every interval until ctx
// ends and calls onChange when another process changed the memory: it
// wrote. This Store's own writes, and another process's compaction, which
// rewrites the file with what this Store already holds, are no change.
// Polling a stat is cheap, portable, needs no dependency, and sees renames
// over the file that directory watchers report inconsistently across
// platforms.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	// What the memory holds now is what later changes are told against.
	lastSeen, _ := s.watchStamp()
	s.mu.Lock()
	s.refreshLocked()
	heard := s.foreign
	s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := s.watchStamp()
		if err != nil || st == lastSeen {
			continue
		}
		lastSeen = st
		// Read what changed: the count tells whether another process's
		// write reached this Store since the last look, whoever read it
		// (this Watch, another, a call).
		s.mu.Lock()
		if err := s.refreshLocked(); err != nil {
			s.foreign++ // cannot tell: report
		}
		foreign := s.foreign
		s.mu.Unlock()
		if foreign != heard {
			heard = foreign
			onChange()
		}
	}
}

func (s *Store) watchStamp() (watchStamp, error) {
	st, err := s.statFile()
	if err != nil {
		return watchStamp{}, err
	}
	j, err := s.statJournal()
	if err != nil {
		return watchStamp{}, err
	}
	return watchStamp{file: st, jexists: j.exists, jid: j.id, jsize: j.size}, nil
}
