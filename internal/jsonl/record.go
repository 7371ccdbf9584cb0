package jsonl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// The line of a write's record (graph.Record), one line of the file
// store's journal and of a history file, and what the PostgreSQL store
// keeps of its changes (AppendChanges):
//
//	{"id":"01a2310c01784f3e1b","time":"2026-12-01T10:00:00Z","tool":"add_observations","client":"Claude Desktop",
//	 "changes":[{"op":"addObservations","entityName":"Alice","observations":["Likes tea"],"updatedAt":"2026-12-01T10:00:00Z"}]}
//
// (one line). The entities and relations a change holds whole are in the
// memory file's own line format (AppendEntity, AppendRelation), so a record
// carries members this server does not know too.

// RecordLine is a record line as decoded. The journal's own line type embeds it,
// so one decoding reads either kind of line.
type RecordLine struct {
	ID      string       `json:"id"`
	Time    string       `json:"time"`
	Tool    string       `json:"tool"`
	Client  string       `json:"client"`
	Changes []lineChange `json:"changes"`
}

type lineChange struct {
	Op           string          `json:"op"`
	Entity       json.RawMessage `json:"entity"`
	EntityName   string          `json:"entityName"`
	Observations []string        `json:"observations"`
	// UpdatedAt is when observations were added or deleted (the time the
	// write recorded), absent when unknown.
	UpdatedAt string `json:"updatedAt"`
	// ObservedAt is when each observation had been written (null:
	// unknown), index for index; absent when none is known.
	ObservedAt []*string       `json:"observedAt"`
	Relation   json.RawMessage `json:"relation"`
}

// parseObservedAt reads "observedAt"; a time that does not parse is
// unknown.
func parseObservedAt(in []*string) []graph.Time {
	out := make([]graph.Time, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339, *s); err == nil {
			out[i] = graph.TimeOf(t)
		}
	}
	if !slices.ContainsFunc(out, func(t graph.Time) bool { return t != 0 }) {
		return nil
	}
	return out
}

// DecodeRecord reads one record line.
func DecodeRecord(line []byte) (graph.Record, error) {
	var l RecordLine
	if err := json.Unmarshal(line, &l); err != nil {
		return graph.Record{}, err
	}
	return l.Record(line)
}

// DecodeChanges reads the JSON array AppendChanges writes.
func DecodeChanges(data []byte) ([]graph.Change, error) {
	var in []lineChange
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	return decodeChanges(in)
}

// Record returns the record the line says; raw is the line itself. A line
// without an id (a journal written before records had one) gets one
// derived from its time and content, the same each time it is read.
func (l *RecordLine) Record(raw []byte) (graph.Record, error) {
	changes, err := decodeChanges(l.Changes)
	if err != nil {
		return graph.Record{}, err
	}
	t, err := time.Parse(time.RFC3339, l.Time)
	if err != nil {
		return graph.Record{}, fmt.Errorf("time: %w", err)
	}
	r := graph.Record{ID: l.ID, Time: t.UTC(), Tool: l.Tool, Client: l.Client, Changes: changes}
	if r.ID == "" {
		sum := sha256.Sum256(raw)
		r.ID = fmt.Sprintf("%012x", t.UnixMilli()) + hex.EncodeToString(sum[:3])
	}
	return r, nil
}

func decodeChanges(in []lineChange) ([]graph.Change, error) {
	out := make([]graph.Change, 0, len(in))
	for _, c := range in {
		kind, ok := graph.ChangeKindOf(c.Op)
		if !ok {
			return nil, fmt.Errorf("unknown op %q", c.Op)
		}
		ch := graph.Change{Kind: kind}
		switch kind {
		case graph.EntityCreated, graph.EntityDeleted:
			e, ok := decodeOne(c.Entity, (*graph.Graph).Entities)
			if !ok {
				return nil, fmt.Errorf("%s without an entity", c.Op)
			}
			ch.Entity = graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: e.Observations, Extra: e.Extra,
				Created: e.Created, Updated: e.Updated, ObservedAt: e.ObservedAt}
		case graph.ObservationsAdded, graph.ObservationsDeleted:
			ch.Entity = graph.Entity{Name: c.EntityName, Observations: c.Observations}
			if t, err := time.Parse(time.RFC3339, c.UpdatedAt); err == nil {
				ch.Entity.Updated = graph.TimeOf(t)
			}
			if len(c.ObservedAt) == len(c.Observations) {
				ch.Entity.ObservedAt = parseObservedAt(c.ObservedAt)
			}
		case graph.RelationCreated, graph.RelationDeleted:
			r, ok := decodeOne(c.Relation, (*graph.Graph).Relations)
			if !ok {
				return nil, fmt.Errorf("%s without a relation", c.Op)
			}
			ch.Relation = graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created}
		}
		out = append(out, ch)
	}
	return out, nil
}

// decodeOne reads line, a memory file's line, as the one entity or
// relation (of) it must hold.
func decodeOne[T any](line []byte, of func(*graph.Graph) []*T) (*T, bool) {
	all := of(Decode(line).Graph)
	if len(all) != 1 {
		return nil, false
	}
	return all[0], true
}

// RecordLineOf returns raw, a journal line that is a record, as the history
// file's line: as it is when it starts with its id (the line of a record
// written by AppendRecord, newline included), else decoded and written
// again with the id Record derives. ok is false for a line that is no
// record.
func RecordLineOf(raw []byte) (line []byte, ok bool) {
	if RecordID(raw) != "" && len(raw) > 0 && raw[len(raw)-1] == '\n' {
		return raw, true
	}
	r, err := DecodeRecord(raw)
	if err != nil {
		return nil, false
	}
	return graph.AppendRecord(nil, &r), true
}

// RecordID returns the id a record line starts with ({"id":"…"), or "".
func RecordID(line []byte) string {
	const prefix = `{"id":"`
	if len(line) < len(prefix) || string(line[:len(prefix)]) != prefix {
		return ""
	}
	rest := line[len(prefix):]
	for i, c := range rest {
		if c == '"' {
			return string(rest[:i])
		}
	}
	return ""
}
