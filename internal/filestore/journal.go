package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"strconv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// The journal is <file>.journal, one JSON object per line (docs/design.md
// §5, "The journal"):
//
//	{"journal":1,"base":{"size":1234,"sha256":"…"}}
//	{"time":"2026-12-01T22:40:00Z","tool":"add_observations","changes":[{"op":"addObservations","entityName":"A","observations":["x"]}]}
//	{"compacting":{"size":1301,"sha256":"…"},"time":"2026-12-01T22:40:02Z"}
//
// The header names the memory file the records apply to; each record is one
// acknowledged write; a compacting line names the file a compaction is about
// to rename into place.
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

// journalLine is any line of the journal, as decoded.
type journalLine struct {
	Journal    int             `json:"journal"`
	Base       *fileSum        `json:"base"`
	Compacting *fileSum        `json:"compacting"`
	Time       string          `json:"time"`
	Tool       string          `json:"tool"`
	Changes    []journalChange `json:"changes"`
}

type journalChange struct {
	Op           string          `json:"op"`
	Entity       json.RawMessage `json:"entity"`
	EntityName   string          `json:"entityName"`
	Observations []string        `json:"observations"`
	// UpdatedAt is when observations were added or deleted (the time the
	// write recorded), absent when unknown.
	UpdatedAt string          `json:"updatedAt"`
	Relation  json.RawMessage `json:"relation"`
}

var opNames = map[graph.ChangeKind]string{
	graph.EntityCreated:       "createEntity",
	graph.EntityDeleted:       "deleteEntity",
	graph.ObservationsAdded:   "addObservations",
	graph.ObservationsDeleted: "deleteObservations",
	graph.RelationCreated:     "createRelation",
	graph.RelationDeleted:     "deleteRelation",
}

var opKinds = func() map[string]graph.ChangeKind {
	m := make(map[string]graph.ChangeKind, len(opNames))
	for k, v := range opNames {
		m[v] = k
	}
	return m
}()

// toolOf names the tool that made changes, when one tool's kind of change
// is all there is: deleting entities also deletes their relations.
func toolOf(changes []graph.Change) string {
	kinds := map[graph.ChangeKind]bool{}
	for _, c := range changes {
		kinds[c.Kind] = true
	}
	if kinds[graph.EntityDeleted] {
		delete(kinds, graph.RelationDeleted)
	}
	if len(kinds) != 1 {
		return ""
	}
	for k := range kinds {
		return map[graph.ChangeKind]string{
			graph.EntityCreated:       "create_entities",
			graph.EntityDeleted:       "delete_entities",
			graph.ObservationsAdded:   "add_observations",
			graph.ObservationsDeleted: "delete_observations",
			graph.RelationCreated:     "create_relations",
			graph.RelationDeleted:     "delete_relations",
		}[k]
	}
	return ""
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

// appendRecord appends one write's record: whole entities and relations in
// the memory file's own line format, so a record carries unknown members
// too.
func appendRecord(b []byte, changes []graph.Change, now time.Time) []byte {
	b = append(b, `{"time":"`...)
	b = now.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, '"')
	if tool := toolOf(changes); tool != "" {
		b = append(b, `,"tool":"`...)
		b = append(b, tool...)
		b = append(b, '"')
	}
	b = append(b, `,"changes":[`...)
	for i, c := range changes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":"`...)
		b = append(b, opNames[c.Kind]...)
		b = append(b, '"')
		switch c.Kind {
		case graph.EntityCreated, graph.EntityDeleted:
			b = append(b, `,"entity":`...)
			b = jsonl.AppendEntity(b, &c.Entity)
		case graph.ObservationsAdded, graph.ObservationsDeleted:
			b = append(b, `,"entityName":`...)
			b = jsonl.AppendString(b, c.Entity.Name)
			b = append(b, `,"observations":[`...)
			for j, o := range c.Entity.Observations {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsonl.AppendString(b, o)
			}
			b = append(b, ']')
			if c.Entity.Updated != 0 {
				b = append(b, `,"updatedAt":"`...)
				b = c.Entity.Updated.UTC().AppendFormat(b, time.RFC3339)
				b = append(b, '"')
			}
		case graph.RelationCreated, graph.RelationDeleted:
			b = append(b, `,"relation":`...)
			b = jsonl.AppendRelation(b, &c.Relation)
		}
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

// journalRecord is a parsed line that is not the header.
type journalRecord struct {
	intent  *fileSum       // a compacting line
	changes []graph.Change // a write
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
			changes, err := decodeChanges(l.Changes)
			if err != nil {
				logf("%s: skipping an unreadable journal record at byte %d: %v", name, lineStart, err)
				continue
			}
			p.records = append(p.records, journalRecord{changes: changes})
		}
	}
}

func decodeChanges(in []journalChange) ([]graph.Change, error) {
	out := make([]graph.Change, 0, len(in))
	for _, c := range in {
		kind, ok := opKinds[c.Op]
		if !ok {
			return nil, fmt.Errorf("unknown op %q", c.Op)
		}
		ch := graph.Change{Kind: kind}
		switch kind {
		case graph.EntityCreated, graph.EntityDeleted:
			f := jsonl.Decode(c.Entity)
			ents := f.Graph.Entities()
			if len(ents) != 1 {
				return nil, fmt.Errorf("%s without an entity", c.Op)
			}
			e := ents[0]
			ch.Entity = graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: e.Observations, Extra: e.Extra,
				Created: e.Created, Updated: e.Updated, ObservedAt: e.ObservedAt}
		case graph.ObservationsAdded, graph.ObservationsDeleted:
			ch.Entity = graph.Entity{Name: c.EntityName, Observations: c.Observations}
			if t, err := time.Parse(time.RFC3339, c.UpdatedAt); err == nil {
				ch.Entity.Updated = graph.TimeOf(t)
			}
		case graph.RelationCreated, graph.RelationDeleted:
			f := jsonl.Decode(c.Relation)
			rels := f.Graph.Relations()
			if len(rels) != 1 {
				return nil, fmt.Errorf("%s without a relation", c.Op)
			}
			r := rels[0]
			ch.Relation = graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created}
		}
		out = append(out, ch)
	}
	return out, nil
}
