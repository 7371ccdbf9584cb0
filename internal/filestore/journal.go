package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// The journal is <file>.journal, one JSON object per line (docs/design.md
// §5, "The journal"):
//
//	{"journal":1,"base":{"size":1234,"sha256":"…"}}
//	{"id":"018f3a2b4c5d9e8f7a","time":"2026-12-01T22:40:00Z","tool":"add_observations","client":"Claude Desktop","changes":[{"op":"addObservations","entityName":"A","observations":["x"]}]}
//	{"compacting":{"size":1301,"sha256":"…"},"file":"memory.jsonl.5f0c….tmp","time":"2026-12-01T22:40:02Z"}
//
// The header names the memory file the records apply to; each record is one
// acknowledged write, in the history's record format (internal/history),
// and moves to the history file when a compaction retires the journal; a
// compacting line names the file a compaction is about to rename into
// place: its content, and the temporary file it is until the rename.
const journalSuffix = ".journal"

// journalVersion is the header's "journal" member.
const journalVersion = 1

// fileSum identifies a memory file's content.
type fileSum struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func sumOf(data []byte) fileSum {
	h := sha256.Sum256(data)
	return fileSum{Size: int64(len(data)), SHA256: hex.EncodeToString(h[:])}
}

// summingWriter passes writes through and sums them.
type summingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func newSummingWriter(w io.Writer) *summingWriter { return &summingWriter{w: w, h: sha256.New()} }

func (s *summingWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

func (s *summingWriter) sum() fileSum {
	return fileSum{Size: s.n, SHA256: hex.EncodeToString(s.h.Sum(nil))}
}

// journalLine is any line of the journal, as decoded: the header, a
// compacting line, or a write's record, whose line is a history record's.
type journalLine struct {
	Journal    int      `json:"journal"`
	Base       *fileSum `json:"base"`
	Compacting *fileSum `json:"compacting"`
	File       string   `json:"file"`
	jsonl.RecordLine
}

func appendSum(b []byte, s fileSum) []byte {
	b = append(b, `{"size":`...)
	b = strconv.AppendInt(b, s.Size, 10)
	b = append(b, `,"sha256":"`...)
	b = append(b, s.SHA256...)
	return append(b, `"}`...)
}

func appendHeader(b []byte, base fileSum) []byte {
	b = append(b, `{"journal":`...)
	b = strconv.AppendInt(b, journalVersion, 10)
	b = append(b, `,"base":`...)
	b = appendSum(b, base)
	return append(b, "}\n"...)
}

func appendIntent(b []byte, in intent, now time.Time) []byte {
	b = append(b, `{"compacting":`...)
	b = appendSum(b, in.target)
	b = append(b, `,"file":`...)
	name, _ := json.Marshal(in.file)
	b = append(b, name...)
	b = append(b, `,"time":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339)
	return append(b, "\"}\n"...)
}

// intent is what a compacting line says: the content of the file a
// compaction wrote, and the base name of the temporary file it is until
// its rename ("" in the lines of servers before 2026-12).
type intent struct {
	target fileSum
	file   string
}

// journalRecord is a parsed line that is not the header.
type journalRecord struct {
	intent *intent       // a compacting line
	record *graph.Record // a write
}

// parsedJournal is what a journal's complete lines say.
type parsedJournal struct {
	base    *fileSum
	records []journalRecord
	end     int64 // bytes up to the end of the last complete line
}

// parseJournal reads the complete lines of data (a torn last line, from a
// writer killed mid-append or still appending, is left out of end). A line
// that does not parse is reported to logf and skipped.
func parseJournal(data []byte, start int64, logf func(string, ...any), name string) parsedJournal {
	p := parsedJournal{end: start}
	base := strings.TrimSuffix(filepath.Base(name), journalSuffix)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return p
		}
		line := data[:i]
		data = data[i+1:]
		lineStart := p.end
		p.end += int64(i + 1)
		var l journalLine
		if err := json.Unmarshal(line, &l); err != nil {
			logf("%s: skipping an unreadable journal line at byte %d: %v", name, lineStart, err)
			continue
		}
		switch {
		case l.Journal != 0:
			if lineStart == 0 {
				p.base = l.Base
			}
		case l.Compacting != nil:
			file := l.File
			if filepath.Base(file) != file || !durable.IsTemp(file, base) {
				file = "" // not a temporary file of this memory file: tells nothing
			}
			p.records = append(p.records, journalRecord{intent: &intent{target: *l.Compacting, file: file}})
		default:
			rec, err := l.Record(line)
			if err != nil {
				logf("%s: skipping an unreadable journal record at byte %d: %v", name, lineStart, err)
				continue
			}
			p.records = append(p.records, journalRecord{record: &rec})
		}
	}
}

// appendLocked acknowledges a write: it appends the write's record to the
// journal (with the header first when the journal is new) and syncs it.
func (s *Store) appendLocked(lock *Lock, rec *graph.Record) error {
	if err := lock.Check(); err != nil {
		return err
	}
	var buf []byte
	if s.journal.end == 0 {
		buf = appendHeader(buf, s.fileSum())
	}
	buf = graph.AppendRecord(buf, rec)
	s.lastID = rec.ID
	id, err := s.writeJournalLocked(buf)
	if err != nil {
		return s.journalError("appending to", err)
	}
	end := s.journal.end + int64(len(buf))
	state := s.journal.state
	if state == noJournal {
		state = overBase
	}
	s.journal = journalStamp{state: state, id: id, size: end, end: end, records: s.journal.records + 1}
	s.saved = watchStamp{file: s.stamp, jexists: true, jid: id, jsize: end}
	return nil
}

// takeBackLocked cuts the journal back to what it was (prev) before a
// write whose save then failed appended its record, so that the record of
// a write reported as failed is never applied.
func (s *Store) takeBackLocked(prev journalStamp) {
	var err error
	if prev.exists() {
		err = s.cutJournal(prev.end)
	} else {
		err = os.Remove(s.journalPath())
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logf("taking back the record of a failed write from the journal %s: %v", s.journalPath(), err)
	}
}

// cutJournal cuts the journal back to its first end bytes, durably.
func (s *Store) cutJournal(end int64) error {
	f, err := os.OpenFile(s.journalPath(), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(end); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// writeJournalLocked writes buf at the end of the journal's complete lines,
// cutting off a torn line a killed writer left, and syncs it; the journal
// takes the memory file's mode. It returns the journal's file id.
func (s *Store) writeJournalLocked(buf []byte) (id uint64, err error) {
	if !s.journal.exists() {
		// A new journal follows a compaction: clear what killed savers
		// left, as a save does.
		durable.RemoveStaleTemps(s.path)
	}
	fi, err := durable.AppendAt(s.journalPath(), s.journal.end, buf, durable.Mode(s.path))
	if err != nil {
		return 0, err
	}
	return fileID(fi), nil
}

// journalError says what failed on the journal, and, when the journal is
// not this user's to write (another user's server made it, root's for
// one), whose it is and how to fix it.
func (s *Store) journalError(doing string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		if owner := ownerOf(s.journalPath()); owner != "" {
			return fmt.Errorf("%s the journal %s: %w: it belongs to %s; run the server once as %s to fold the journal into the memory file, or make it yours: sudo chown %s %s",
				doing, s.journalPath(), err, owner, owner, currentUser(), s.journalPath())
		}
	}
	return fmt.Errorf("%s the journal %s: %w", doing, s.journalPath(), err)
}
