package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// errReplaced: another program replaced the memory file while a
// compaction wrote its new one, which was not renamed into place.
var errReplaced = errors.New("another program replaced the memory file during the save, so the save was not made")

// replacedAttempts bounds how often a compaction starts again because
// another program replaced the memory file while it wrote.
const replacedAttempts = 3

// compactFreshLocked is compactLocked, read again and started over when
// another program replaced the memory file meanwhile: its file is read,
// and the journal applied to it, before the compaction writes the whole.
func (s *Store) compactFreshLocked(lock *Lock) error {
	for attempt := 1; ; attempt++ {
		err := s.compactLocked(lock)
		if !errors.Is(err, errReplaced) || attempt == replacedAttempts {
			return err
		}
		if err := s.refreshLocked(); err != nil {
			return err
		}
	}
}

// compactLocked writes the whole graph to the memory file and retires the
// journal (docs/design.md §5, "Crashes"). Before it renames the new file
// into place it appends a compacting line naming that file and its
// temporary name, so that a reader after a crash between the rename and
// the journal's removal knows the journal is in the file. The stamp of
// the file it leaves is the file it wrote, taken before the rename:
// whatever is at the path later is another program's, and is read.
func (s *Store) compactLocked(lock *Lock) error {
	if err := crashAt("before writing"); err != nil {
		return err
	}
	temps := s.journalTemps()
	p, err := durable.CreateKeeping(s.path, durable.Mode(s.path), temps)
	if err != nil {
		return fmt.Errorf("saving %s: %w", s.path, err)
	}
	sw := newSummingWriter(saveWriter(p))
	if err := jsonl.Write(sw, s.g, s.unreadable); err != nil {
		p.Cleanup()
		return fmt.Errorf("saving %s: writing %s: %w", s.path, p.TempPath(), err)
	}
	written, err := p.Sync()
	if err != nil {
		p.Cleanup()
		return fmt.Errorf("saving %s: %w", s.path, err)
	}
	sum := sw.sum()
	if err := s.renameLocked(lock, p, sum); err != nil {
		return err
	}
	s.stamp, s.sum = stampOf(written), &sum
	s.saved = watchStamp{file: s.stamp}
	return s.retireLocked(temps)
}

// renameLocked puts the new file p (of content sum) in place of the file
// g was read from, with the journal's compacting line first. Another
// program's file found at the path instead is never replaced: errReplaced.
// On failure no line names p, or p stays where the line says it is.
func (s *Store) renameLocked(lock *Lock, p *durable.Pending, sum fileSum) error {
	if err := crashAt("before intent"); err != nil {
		p.Cleanup()
		return err
	}
	if err := s.stillOursLocked(lock); err != nil {
		p.Cleanup()
		return err
	}
	named := s.journal.exists() && s.journal.end > 0
	var after int64 // the journal's size with the line
	if named {
		line := appendIntent(nil, intent{target: sum, file: filepath.Base(p.TempPath())}, time.Now())
		if _, err := s.writeJournalLocked(line); err != nil {
			p.Cleanup()
			return s.journalError("appending to", err)
		}
		after = s.journal.end + int64(len(line))
	}
	err := crashAt("before rename")
	if errors.Is(err, errCrashHook) {
		return err // killed: the files stay as they are
	}
	if err == nil {
		err = s.stillOursLocked(lock)
	}
	if err == nil {
		var fi fs.FileInfo
		if fi, err = p.Replace(); fi != nil {
			return nil // in place; a failed directory sync may lose only the name's durability
		}
	}
	// Not renamed: take the line back, or leave p where it says. A
	// journal that grew past the line (a lost lock: another process
	// appended) keeps it.
	if !named || s.takeBackIntent(after) == nil {
		p.Cleanup()
	}
	return err
}

// takeBackIntent cuts the compacting line off the journal, which is after
// bytes long with it, unless something was appended after it.
func (s *Store) takeBackIntent(after int64) error {
	fi, err := os.Stat(s.journalPath())
	if err != nil {
		return err
	}
	if fi.Size() != after {
		return fmt.Errorf("the journal %s grew past the compacting line", s.journalPath())
	}
	return s.cutJournal(s.journal.end)
}

// stillOursLocked checks that this process still holds the lock and that
// the memory file is still the one g was read from.
func (s *Store) stillOursLocked(lock *Lock) error {
	if err := lock.Check(); err != nil {
		return err
	}
	st, err := s.statFile()
	if err != nil {
		return err
	}
	if st != s.stamp {
		return errReplaced
	}
	return nil
}

// retireLocked ends a compaction whose file is in place: it moves the
// journal's records to the history and removes the journal, then the
// temporary files the journal's earlier compacting lines named (their
// compactions were killed before their rename).
func (s *Store) retireLocked(temps []string) error {
	if err := crashAt("before the history"); err != nil {
		return err
	}
	s.keepHistoryLocked()
	if err := crashAt("before retiring the journal"); err != nil {
		return err
	}
	if s.journal.exists() {
		// Losing this removal to a crash is harmless: the compacting line
		// says the journal is in the file.
		if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.opts.Logf("removing the compacted journal %s: %v", s.journalPath(), err)
		}
	}
	s.journal = journalStamp{}
	dir := filepath.Dir(s.path)
	for _, t := range temps {
		os.Remove(filepath.Join(dir, t))
	}
	return crashAt("after retiring the journal")
}

// journalTemps returns the temporary files the journal's compacting lines
// name: a compaction must keep them while the journal may need them. It
// decodes those lines only, not the records.
func (s *Store) journalTemps() []string {
	if !s.journal.exists() {
		return nil
	}
	data, _, err := readJournal(s.journalPath())
	if err != nil {
		return nil
	}
	var lines []byte
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte(`{"compacting":`)) && bytes.HasSuffix(line, []byte("\n")) {
			lines = append(lines, line...)
		}
	}
	var temps []string
	for _, r := range parseJournal(lines, 0, func(string, ...any) {}, s.journalPath()).records {
		if r.intent != nil && r.intent.file != "" {
			temps = append(temps, r.intent.file)
		}
	}
	return temps
}

// saveWriter is what a save writes the temporary file through. Tests swap
// it to make a write fail part-way, as a full disk does, which no file
// permission can do for root.
var saveWriter = func(w io.Writer) io.Writer { return w }

// crashAt lets tests act at a named stage of a compaction: return
// errCrashHook to stop it there, leaving the files as a process killed
// there leaves them (the Store is then thrown away), or replace the
// memory file as another program would.
var crashAt = func(stage string) error { return nil }

// errCrashHook is the error a test's crashAt returns for a kill.
var errCrashHook = errors.New("simulated crash")

// closeLockWait is how long the compaction at a clean exit waits for the
// lock: a lock another process holds, or a stale one not yet breakable
// (an empty lock file counts as stale only after 30 s), must not hold the
// exit, since the journal keeps every write for the next server.
const closeLockWait = 2 * time.Second

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
	err := s.Compact(s.bgCtx)
	if s.bgCtx.Err() != nil {
		return // Close stopped it, and compacts itself
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.compactOutage.fail(s.opts.Logf, "compacting %s: %v (the writes are safe in the journal %s; said once, until compacting succeeds)", s.path, err, s.journalPath())
		return
	}
	if s.compactOutage.told {
		s.opts.Logf("compacting %s works again", s.path)
	}
	s.compactOutage.ok()
}

// Compact folds the journal into the memory file, under the lock, if there
// is a journal: afterwards the memory file alone is the whole memory, in
// the reference's format. Writes wait for it as for any other write.
func (s *Store) Compact(ctx context.Context) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if j, err := s.statJournal(); err != nil || !j.exists() {
		return err
	}
	return s.underLock(ctx, func(lock *Lock) error {
		if !s.journal.exists() {
			return nil
		}
		if err := s.compactFreshLocked(lock); err != nil {
			s.g = nil
			return s.explain(err)
		}
		return nil
	})
}

// ErrJournalLeft is what Close returns when it could not take the lock in
// time to compact: the journal stays, with every write, for the next
// server (or command) to fold in.
var ErrJournalLeft = errors.New("the memory file's lock is busy: the journal was left for the next server to fold in")

// Close stops background compaction and, when this Store journals its
// writes and a journal is there, compacts, so that after a clean exit the
// memory file is the whole memory. It waits at most closeLockWait for the
// lock (then returns an error wrapping ErrJournalLeft); any other error
// is a compaction that failed.
func (s *Store) Close() error {
	s.bgMu.Lock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.bgMu.Unlock()
	s.stopBg()
	s.running.Wait()
	if !s.opts.Journal {
		return nil
	}
	// Nothing to fold in: no lock to wait for. (A path under a file has
	// no journal either: statJournal counts it as absent.)
	if j, err := s.statJournal(); err != nil || !j.exists() {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeLockWait)
	defer cancel()
	err := s.Compact(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (%s waited %v for %s.lock; the journal %s holds the writes)", ErrJournalLeft, s.path, closeLockWait, s.path, s.journalPath())
	}
	return err
}
