// Package history is the record of every write to a memory: what was added
// or removed, when, by which tool or command and by which client
// (docs/history.md). The file store keeps it in <memory file>.history, fed
// by its journal (a journal record is the write's history record, moved to
// the history when the journal is compacted); the PostgreSQL store in a
// table. This package holds what both share: the record and its line
// format, the step that turns a write into its record (Apply), filters, the inverse
// of a write (undo) and the bounds.
package history

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Record is one write, as the history keeps it.
type Record struct {
	// ID is unique and sorts by time: 12 hex digits of Unix milliseconds,
	// then 6 random ones.
	ID      string
	Time    time.Time // UTC, to the second
	Tool    string
	Client  string
	Changes []graph.Change
}

// NewID returns a new record id for a write at t that sorts after the id
// after (the last one written to this memory, or ""), so that the writes
// of one millisecond, or of a clock set back, keep their order.
func NewID(t time.Time, after string) string {
	var b [4]byte
	rand.Read(b[:])
	now, rnd := uint64(t.UnixMilli()), uint64(binary.BigEndian.Uint32(b[:])&0xffffff)
	id := fmt.Sprintf("%012x%06x", now, rnd)
	if id > after || len(after) != len(id) {
		return id
	}
	ms, err1 := strconv.ParseUint(after[:12], 16, 64)
	rnd, err2 := strconv.ParseUint(after[12:], 16, 64)
	if err1 != nil || err2 != nil || ms > now+uint64(maxIDSkew.Milliseconds()) {
		// Not an id of ours, or one far in the future (forged, or a
		// clock that ran wild): following it would leave the range.
		return id
	}
	if rnd++; rnd > 0xffffff {
		ms, rnd = ms+1, 0
	}
	return fmt.Sprintf("%012x%06x", ms, rnd)
}

// maxIDSkew is how far past its record's time an id may run: the clock
// set back by that much still keeps the writes in order. An id further
// ahead (or behind its time) is not taken for the record's place in time.
const maxIDSkew = 24 * time.Hour

// plausibleID reports whether id sorts where its record's time t says:
// within maxIDSkew after the start of t's second, never before it.
func plausibleID(id string, t time.Time) bool {
	if len(id) != idLen {
		return false
	}
	ms, err := strconv.ParseInt(id[:12], 16, 64)
	if err != nil {
		return false
	}
	at := t.Truncate(time.Second).UnixMilli()
	return ms >= at && ms <= at+maxIDSkew.Milliseconds()
}

// sortKey is what orders a record among the others: its id, or for an id
// that is not plausible (forged), its time in the id's form.
func (r *Record) sortKey() string {
	if plausibleID(r.ID, r.Time) {
		return r.ID
	}
	return fmt.Sprintf("%012x", max(r.Time.UnixMilli(), 0)) + r.ID
}

// Short is the id as the history command shows it: its last 6 digits (the
// random ones). Undo takes it, or any longer end of the id.
func (r *Record) Short() string {
	if len(r.ID) <= 6 {
		return r.ID
	}
	return r.ID[len(r.ID)-6:]
}

// Line is a record line as decoded. The journal's own line type embeds it,
// so one decoding reads either kind of line.
type Line struct {
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

// AppendLine appends r's line, newline included: whole entities and
// relations in the memory file's own line format, so a record carries
// members this server does not know too.
func AppendLine(b []byte, r *Record) []byte {
	b = append(b, `{"id":`...)
	b = jsonl.AppendString(b, r.ID)
	b = append(b, `,"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, '"')
	if r.Tool != "" {
		b = append(b, `,"tool":`...)
		b = jsonl.AppendString(b, r.Tool)
	}
	if r.Client != "" {
		b = append(b, `,"client":`...)
		b = jsonl.AppendString(b, r.Client)
	}
	b = append(b, `,"changes":`...)
	b = AppendChanges(b, r.Changes)
	return append(b, "}\n"...)
}

// AppendChanges appends changes as the JSON array a record line holds.
func AppendChanges(b []byte, changes []graph.Change) []byte {
	b = append(b, '[')
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
			b = appendObservedAt(b, &c.Entity)
		case graph.RelationCreated, graph.RelationDeleted:
			b = append(b, `,"relation":`...)
			b = jsonl.AppendRelation(b, &c.Relation)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendObservedAt appends the "observedAt" member of an observations
// change: when each observation had been written, when any is known.
func appendObservedAt(b []byte, e *graph.Entity) []byte {
	if !e.HasObservationTimes() || len(e.ObservedAt) != len(e.Observations) {
		return b
	}
	b = append(b, `,"observedAt":[`...)
	for i, t := range e.ObservedAt {
		if i > 0 {
			b = append(b, ',')
		}
		if t == 0 {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '"')
		b = t.UTC().AppendFormat(b, time.RFC3339)
		b = append(b, '"')
	}
	return append(b, ']')
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

// Decode reads one record line.
func Decode(line []byte) (Record, error) {
	var l Line
	if err := json.Unmarshal(line, &l); err != nil {
		return Record{}, err
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
func (l *Line) Record(raw []byte) (Record, error) {
	changes, err := decodeChanges(l.Changes)
	if err != nil {
		return Record{}, err
	}
	t, err := time.Parse(time.RFC3339, l.Time)
	if err != nil {
		return Record{}, fmt.Errorf("time: %w", err)
	}
	r := Record{ID: l.ID, Time: t.UTC(), Tool: l.Tool, Client: l.Client, Changes: changes}
	if r.ID == "" {
		sum := sha256.Sum256(raw)
		r.ID = fmt.Sprintf("%012x", t.UnixMilli()) + hex.EncodeToString(sum[:3])
	}
	return r, nil
}

func decodeChanges(in []lineChange) ([]graph.Change, error) {
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
			if len(c.ObservedAt) == len(c.Observations) {
				ch.Entity.ObservedAt = parseObservedAt(c.ObservedAt)
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

// LineOf returns raw, a journal line that is a record, as the history
// file's line: as it is when it starts with its id (the line of a record
// written by AppendLine, newline included), else decoded and written
// again with the id Record derives. ok is false for a line that is no
// record.
func LineOf(raw []byte) (line []byte, ok bool) {
	if lineID(raw) != "" && len(raw) > 0 && raw[len(raw)-1] == '\n' {
		return raw, true
	}
	r, err := Decode(raw)
	if err != nil {
		return nil, false
	}
	return AppendLine(nil, &r), true
}

// lineID returns the id a record line starts with ({"id":"…"), or "".
func lineID(line []byte) string {
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

// lineTime returns the time of a record line, or the zero time.
func lineTime(line []byte) time.Time {
	var l struct {
		Time string `json:"time"`
	}
	if json.Unmarshal(line, &l) != nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339, l.Time)
	return t
}

// Filter chooses records; its zero value chooses every one.
type Filter struct {
	Since  time.Time // at or after; zero: from the start
	Client string    // exactly this client; "": any
	Entity string    // changes naming this entity (or a relation of it); "": any
	ID     string    // the record with this id; "": any
	// DeletesEntity chooses the records that delete an entity.
	DeletesEntity bool
	// Limit, when above 0, keeps the newest Limit records chosen: a
	// reader stops there (Match does not look at it).
	Limit int
	// Headers: the records come without their Changes, which a reader
	// then need not decode (to count writes); only with no Entity and no
	// DeletesEntity. A line whose header reads but whose changes do not
	// is then kept.
	Headers bool
	// MaxBytes, when above 0, bounds what a reader decodes: a record whose
	// changes take more than MaxBytes comes with its header only (Changes
	// nil), chosen by DeletesEntity when its changes name the entity
	// deletion op, undecoded. With an Entity, every record is decoded.
	MaxBytes int
}

// headerOnly reports whether a record whose line (or changes) take size
// bytes is read as its header only.
func (f Filter) headerOnly(size int) bool {
	return f.Entity == "" && (f.Headers && !f.DeletesEntity || f.MaxBytes > 0 && size > f.MaxBytes)
}

// Match reports whether r passes f.
func (f Filter) Match(r *Record) bool {
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if f.Client != "" && r.Client != f.Client {
		return false
	}
	if f.ID != "" && r.ID != f.ID {
		return false
	}
	if f.DeletesEntity && !slices.ContainsFunc(r.Changes, func(c graph.Change) bool { return c.Kind == graph.EntityDeleted }) {
		return false
	}
	if f.Entity == "" {
		return true
	}
	for _, c := range r.Changes {
		if c.Entity.Name == f.Entity || c.Relation.From == f.Entity || c.Relation.To == f.Entity {
			return true
		}
	}
	return false
}

// Reader is a memory whose history can be read: both stores.
type Reader interface {
	// History returns the records f chooses, newest first, at most
	// f.Limit of them when it is above 0.
	History(f Filter) ([]Record, error)
}
