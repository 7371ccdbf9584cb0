package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"strconv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// The journal is <file>.journal, one JSON object per line (docs/design.md
// §5, "The journal"):
//
//	{"journal":1,"base":{"size":1234,"sha256":"…"}}
//	{"id":"018f3a2b4c5d9e8f7a","time":"2026-12-01T22:40:00Z","tool":"add_observations","client":"Claude Desktop","changes":[{"op":"addObservations","entityName":"A","observations":["x"]}]}
//	{"compacting":{"size":1301,"sha256":"…"},"time":"2026-12-01T22:40:02Z"}
//
// The header names the memory file the records apply to; each record is one
// acknowledged write, in the history's record format (internal/history),
// and moves to the history file when a compaction retires the journal; a
// compacting line names the file a compaction is about to rename into
// place.
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
	history.Line
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

func appendIntent(b []byte, target fileSum, now time.Time) []byte {
	b = append(b, `{"compacting":`...)
	b = appendSum(b, target)
	b = append(b, `,"time":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339)
	return append(b, "\"}\n"...)
}

// journalRecord is a parsed line that is not the header.
type journalRecord struct {
	intent *fileSum        // a compacting line
	record *history.Record // a write
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
			p.records = append(p.records, journalRecord{intent: l.Compacting})
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
