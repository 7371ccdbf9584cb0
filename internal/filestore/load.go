package filestore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kgmemory/mcp-server-memory/internal/heapgoal"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

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

// readChangesLocked is refreshLocked without the count. It goes one of
// three ways: g is current; only the journal grew (read what was
// appended); or the memory is read again. A file another process
// compacted from what g holds is adopted without a read.
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
	if s.g != nil && s.stamp != st && (s.journal.state == overBase || s.journal.retired()) {
		if j, err = s.adoptCompactedLocked(st, j); err != nil || s.current(st, j) {
			return err
		}
	}
	if s.g != nil && s.stamp == st {
		if done, err := s.journalChangedLocked(j); done || err != nil {
			return err
		}
	}
	return s.loadLocked()
}

// journalChangedLocked brings g up to date when only the journal changed
// (now j), and reports false when the memory must be read again.
func (s *Store) journalChangedLocked(j journalStamp) (bool, error) {
	switch {
	case !j.exists() && s.journal.retired():
		// The compaction we adopted removed its journal: nothing
		// changed.
		s.journal = journalStamp{}
		return true, nil
	case j.exists() && s.journal.state.appends() && (!s.journal.exists() || j.id == s.journal.id && j.size >= s.journal.end):
		// Only the journal grew, or appeared: apply what was appended
		// since.
		return s.catchUpLocked()
	}
	return false, nil
}

// adoptCompactedLocked takes the memory file at stamp st as the one g was
// read from when it holds exactly what g would be saved as: another
// process compacted the journal that g already holds (and may have begun
// a new one since). Comparing costs a pass over the file, where reading it
// again would cost a parse and a new graph. It returns the journal as it
// is now: the compaction may have retired it since it was looked at.
func (s *Store) adoptCompactedLocked(st stamp, j journalStamp) (journalStamp, error) {
	data, got, err := readMemoryFile(s.path)
	if err != nil || got != st {
		return j, err
	}
	cmp := &comparingWriter{want: data}
	sw := newSummingWriter(cmp)
	if err := jsonl.Write(sw, s.g, s.unreadable); err != nil || !cmp.equal() {
		return j, nil
	}
	sum := sw.sum()
	s.stamp, s.sum = st, &sum
	s.journal = journalStamp{}
	return s.statJournal()
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
	fresh := !s.journal.exists()
	data, fi, err := s.readJournalFrom(s.journal.end)
	if fi == nil || err != nil {
		return false, err
	}
	if fresh {
		s.journal = journalStamp{state: overBase, id: fileID(fi)}
	}
	if fileID(fi) != s.journal.id || fi.Size() < s.journal.end {
		return false, nil
	}
	p := parseJournal(data, s.journal.end, s.opts.Logf, s.journalPath())
	if fresh && retiredInto(p, s.fileSum()) {
		s.journal = journalStamp{state: compacted, id: fileID(fi), size: fi.Size(), end: p.end}
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
			s.journal.records++
		}
	}
	s.journal.size, s.journal.end = fi.Size(), p.end
	return true, nil
}

// readJournalFrom reads the journal from byte end on, and returns it
// with the journal's FileInfo: nil when there is no journal, or it is
// shorter than end.
func (s *Store) readJournalFrom(end int64) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, s.journalError("reading", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, s.journalError("reading", err)
	}
	if fi.Size() < end {
		return nil, nil, nil
	}
	data := make([]byte, fi.Size()-end)
	if _, err := f.ReadAt(data, end); err != nil && err != io.EOF {
		return nil, nil, s.journalError("reading", err)
	}
	return data, fi, nil
}

// retiredInto reports whether the journal p was compacted into the file
// of sum: its last line is the intent naming that file.
func retiredInto(p parsedJournal, sum fileSum) bool {
	n := len(p.records)
	return n > 0 && p.records[n-1].intent != nil && p.records[n-1].intent.target == sum
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
	// The file is decoded and summed while it is read (jsonl.Read).
	file, sum, st, err := decodeMemoryFile(s.path)
	if err != nil {
		return false, err
	}
	jdata, j, err := readJournal(s.journalPath())
	if err != nil {
		return false, s.journalError("reading", err)
	}
	var p parsedJournal
	from := 0
	if j.exists() {
		p = parseJournal(jdata, 0, s.opts.Logf, s.journalPath())
		// What the journal means depends on whether its compactions'
		// temporary files are still there: look before the file is
		// looked at again, so that a rename in between starts over.
		j.state, from = s.meaning(p, sum)
	}
	if now, err := s.statFile(); err != nil {
		return false, err
	} else if now != st && !last {
		return false, nil
	}
	for _, p := range file.Problems {
		s.opts.Logf("%s: line %d: %s", s.path, p.Line, p.Reason)
	}
	s.g, s.unreadable, s.stamp = file.Graph, file.Unreadable, st
	s.sum = &sum
	j.end = p.end
	s.journal = j
	s.applyLoadedLocked(p, from)
	return true, nil
}

// meaning says what the journal p means for the memory file of sum
// (docs/design.md §5, "Crashes"), and from which record on it applies.
// The last compacting line that tells decides: one naming this file (the
// records before it are in it); one whose temporary file is gone, so its
// file was renamed into place and this file replaced it (the records
// before it were in the file replaced). One whose temporary file is still
// there tells nothing: its rename never happened.
func (s *Store) meaning(p parsedJournal, sum fileSum) (journalState, int) {
	dir := filepath.Dir(s.path)
	state := overBase
	for i := len(p.records) - 1; i >= 0; i-- {
		in := p.records[i].intent
		switch {
		case in == nil:
			continue
		case in.target == sum:
			return compacted, i + 1
		case in.file != "" && !present(filepath.Join(dir, in.file)):
			return foreignFile, i + 1
		}
		state = compacting
	}
	if p.base == nil || *p.base != sum {
		return foreignFile, 0
	}
	return state, 0
}

func present(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// applyLoadedLocked applies the records of the journal p from index from
// on to the graph just read, and arms the compaction they need.
func (s *Store) applyLoadedLocked(p parsedJournal, from int) {
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
	s.journal.records = applied
	switch {
	case s.journal.state == foreignFile && from > 0:
		s.opts.Logf("%s was replaced by another program after a compaction that did not finish: the journal %s is in the file it replaced, so the new file is kept as it is (%d later writes applied again, %d could not apply)",
			s.path, s.journalPath(), applied, skipped)
	case s.journal.state == foreignFile && applied > 0:
		s.opts.Logf("%s was replaced by another program while the journal %s held %d writes not yet in it: applying them again (%d could not apply)",
			s.path, s.journalPath(), applied, skipped)
	}
	if s.journal.exists() && s.opts.Journal && (applied > 0 || !s.journal.state.appends()) {
		// Left by a process that ended without compacting, or still
		// another's: fold it in when idle, and at exit.
		s.armCompaction(false)
	}
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

// decodeMemoryFile reads and decodes the memory file, and returns the
// File, the sum of the file's content and the stamp of the file read (an
// empty memory, the empty content's sum and no stamp when there is none).
func decodeMemoryFile(path string) (*jsonl.File, fileSum, stamp, error) {
	f, fi, err := openFile(path)
	if f == nil {
		return jsonl.Decode(nil), sumOf(nil), stamp{}, wrapRead("the memory file", err)
	}
	defer f.Close()
	sw := newSummingWriter(io.Discard)
	defer heapgoal.Loading(fi.Size())()
	file, err := jsonl.Read(f, fi.Size(), sw)
	if err != nil {
		return nil, fileSum{}, stamp{}, wrapRead("the memory file", err)
	}
	return file, sw.sum(), stampOf(fi), nil
}

func readJournal(path string) ([]byte, journalStamp, error) {
	data, fi, err := readWhole(path, "")
	if fi == nil {
		return nil, journalStamp{}, err
	}
	return data, journalStamp{state: overBase, id: fileID(fi), size: int64(len(data))}, nil
}

// readWhole reads the file at path, what it is named in errors (none:
// the error is the file system's), and returns its content and the
// FileInfo of the file read: nil, with no error, when there is none. The
// FileInfo is the open file's, not the name's: a save by another process
// may rename a new file over the name while we read.
func readWhole(path, what string) ([]byte, fs.FileInfo, error) {
	f, fi, err := openFile(path)
	if f == nil {
		return nil, nil, wrapRead(what, err)
	}
	defer f.Close()
	data, err := readAll(f, fi.Size())
	if err != nil {
		return nil, nil, wrapRead(what, err)
	}
	return data, fi, nil
}

// openFile opens the file at path and returns it with its FileInfo, or no
// file: with no error when there is none.
func openFile(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(path)
	if absent(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// wrapRead names what was read in a read's error (none: the error is the
// file system's); it returns nil for no error.
func wrapRead(what string, err error) error {
	if err == nil || what == "" {
		return err
	}
	return fmt.Errorf("reading %s: %w", what, err)
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
