package graph

import (
	"bytes"
	"strconv"
	"time"
)

// The memory file's line format, as this server writes it: one entity's or
// one relation's line (AppendEntity, AppendRelation), and the line of a
// write's Record (AppendRecord), the line of the file store's journal and
// of a history file. Reading them is package jsonl's.
//
// An entity's or a relation's line holds exactly the bytes the reference
// Node server (@modelcontextprotocol/server-memory) writes for it,
// JSON.stringify's escaping included (AppendString), then the times this
// server records and the reference ignores (see package jsonl's doc for
// the members), then the members the line had that this server does not
// know (Extra):
//
//	{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"10d95ea4"}
//	{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at","createdAt":"2026-11-30T09:15:00Z"}
//
// A record's line:
//
//	{"id":"01a2310c01784f3e1b","time":"2026-12-01T10:00:00Z","tool":"add_observations","client":"Claude Desktop",
//	 "changes":[{"op":"addObservations","entityName":"Alice","observations":["Likes tea"],"updatedAt":"2026-12-01T10:00:00Z"}]}
//
// (one line). The entities and relations a change holds whole are in the
// memory file's own line format, so a record carries members this server
// does not know too.

// The fixed pieces of the lines AppendEntity and AppendRelation write, which
// a reader looks for to tell a line that needs no encoding.
const (
	LineEntityName   = `{"type":"entity","name":`
	LineEntityType   = `,"entityType":`
	LineObservations = `,"observations":[`
	LineRelationFrom = `{"type":"relation","from":`
	LineRelationTo   = `,"to":`
	LineRelationType = `,"relationType":`
	createdAt        = `,"createdAt":`
	updatedAt        = `,"updatedAt":`
	observationTimes = `,"observationTimes":[`
	observationsHash = `,"observationsHash":"`
)

// AppendEntity appends e's line of the memory file, without the line end:
// the known members in the reference's order, then the times (see the
// top of this file), then e.Extra.
func AppendEntity(buf []byte, e *Entity) []byte {
	buf = append(buf, LineEntityName...)
	buf = AppendString(buf, e.Name)
	buf = append(buf, LineEntityType...)
	buf = AppendString(buf, e.EntityType)
	buf = append(buf, LineObservations...)
	for i, o := range e.Observations {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = AppendString(buf, o)
	}
	buf = append(buf, ']')
	buf = AppendEntityTimes(buf, e)
	buf = append(buf, e.Extra...)
	return append(buf, '}')
}

// AppendRelation appends r's line of the memory file, without the line end:
// the known members in the reference's order, then "createdAt" when
// known, then r.Extra.
func AppendRelation(buf []byte, r *Relation) []byte {
	buf = append(buf, LineRelationFrom...)
	buf = AppendString(buf, r.From)
	buf = append(buf, LineRelationTo...)
	buf = AppendString(buf, r.To)
	buf = append(buf, LineRelationType...)
	buf = AppendString(buf, r.RelationType)
	buf = AppendRelationTimes(buf, r)
	buf = append(buf, r.Extra...)
	return append(buf, '}')
}

// AppendEntityTimes appends the time members of e's line, as AppendEntity
// writes them: nothing when no time is known.
func AppendEntityTimes(buf []byte, e *Entity) []byte {
	if e.Created != 0 && !hasExtraKey(e.Extra, createdAt) {
		buf = append(buf, createdAt...)
		buf = appendTime(buf, e.Created)
	}
	if e.Updated != e.Created && !hasExtraKey(e.Extra, updatedAt) {
		buf = append(buf, updatedAt...)
		buf = appendTime(buf, e.Updated)
	}
	if e.HasObservationTimes() && len(e.ObservedAt) == len(e.Observations) &&
		!hasExtraKey(e.Extra, observationTimes[:len(observationTimes)-1]) && !hasExtraKey(e.Extra, observationsHash[:len(observationsHash)-1]) {
		if !allAt(e.ObservedAt, e.Created) {
			// Runs: a time (or null) and how many observations in a row
			// were written then.
			buf = append(buf, observationTimes...)
			for i := 0; i < len(e.ObservedAt); {
				j := i + 1
				for j < len(e.ObservedAt) && e.ObservedAt[j] == e.ObservedAt[i] {
					j++
				}
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendTime(buf, e.ObservedAt[i])
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(j-i), 10)
				i = j
			}
			buf = append(buf, ']')
		}
		buf = append(buf, observationsHash...)
		buf = AppendObservationsHash(buf, e.Observations)
		buf = append(buf, '"')
	}
	return buf
}

// AppendRelationTimes appends the time member of r's line, as
// AppendRelation writes it: "createdAt" when known.
func AppendRelationTimes(buf []byte, r *Relation) []byte {
	if r.Created != 0 && !hasExtraKey(r.Extra, createdAt) {
		buf = append(buf, createdAt...)
		buf = appendTime(buf, r.Created)
	}
	return buf
}

// allAt reports whether every time in ts is t.
func allAt(ts []Time, t Time) bool {
	for _, x := range ts {
		if x != t {
			return false
		}
	}
	return true
}

// appendTime appends t as a JSON string, or null when unknown.
func appendTime(buf []byte, t Time) []byte {
	if t == 0 {
		return append(buf, "null"...)
	}
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339)
	return append(buf, '"')
}

// ObservationsHash is the hash "observationsHash" holds for an observations
// list: FNV-1a, 32 bits, over each observation followed by the byte 0xFF
// (which UTF-8 never holds).
func ObservationsHash(obs []string) uint32 {
	const prime = 16777619
	h := uint32(2166136261)
	for _, o := range obs {
		for i := 0; i < len(o); i++ {
			h ^= uint32(o[i])
			h *= prime
		}
		h ^= 0xFF
		h *= prime
	}
	return h
}

// AppendObservationsHash appends ObservationsHash(obs) as the eight
// lowercase hex digits "observationsHash" holds.
func AppendObservationsHash(buf []byte, obs []string) []byte {
	h := ObservationsHash(obs)
	for shift := 28; shift >= 0; shift -= 4 {
		buf = append(buf, hexDigits[(h>>shift)&0xF])
	}
	return buf
}

// hasExtraKey reports whether extra (members as Entity.Extra holds them)
// may hold a member named key: a time member this server did not write,
// kept as it is. The writer then leaves that time out rather than write
// the key twice. (A nested member of that name counts too: the time is
// then unknown, never wrong.)
func hasExtraKey(extra []byte, key string) bool {
	return len(extra) > 0 && bytes.Contains(extra, []byte(key))
}

var opNames = map[ChangeKind]string{
	EntityCreated:       "createEntity",
	EntityDeleted:       "deleteEntity",
	ObservationsAdded:   "addObservations",
	ObservationsDeleted: "deleteObservations",
	RelationCreated:     "createRelation",
	RelationDeleted:     "deleteRelation",
}

var opKinds = func() map[string]ChangeKind {
	m := make(map[string]ChangeKind, len(opNames))
	for k, v := range opNames {
		m[v] = k
	}
	return m
}()

// Op is the name a record line gives the change kind ("createEntity",
// ...), "" for none.
func (k ChangeKind) Op() string { return opNames[k] }

// ChangeKindOf returns the change kind a record line names op, false for
// a name no record holds.
func ChangeKindOf(op string) (ChangeKind, bool) {
	k, ok := opKinds[op]
	return k, ok
}

// AppendRecord appends r's line, newline included: whole entities and
// relations in the memory file's own line format, so a record carries
// members this server does not know too.
func AppendRecord(b []byte, r *Record) []byte {
	b = append(b, `{"id":`...)
	b = AppendString(b, r.ID)
	b = append(b, `,"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, '"')
	if r.Tool != "" {
		b = append(b, `,"tool":`...)
		b = AppendString(b, r.Tool)
	}
	if r.Client != "" {
		b = append(b, `,"client":`...)
		b = AppendString(b, r.Client)
	}
	b = append(b, `,"changes":`...)
	b = AppendChanges(b, r.Changes)
	return append(b, "}\n"...)
}

// AppendChanges appends changes as the JSON array a record line holds.
func AppendChanges(b []byte, changes []Change) []byte {
	b = append(b, '[')
	for i, c := range changes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"op":"`...)
		b = append(b, opNames[c.Kind]...)
		b = append(b, '"')
		switch c.Kind {
		case EntityCreated, EntityDeleted:
			b = append(b, `,"entity":`...)
			b = AppendEntity(b, &c.Entity)
		case ObservationsAdded, ObservationsDeleted:
			b = append(b, `,"entityName":`...)
			b = AppendString(b, c.Entity.Name)
			b = append(b, `,"observations":[`...)
			for j, o := range c.Entity.Observations {
				if j > 0 {
					b = append(b, ',')
				}
				b = AppendString(b, o)
			}
			b = append(b, ']')
			if c.Entity.Updated != 0 {
				b = append(b, `,"updatedAt":"`...)
				b = c.Entity.Updated.UTC().AppendFormat(b, time.RFC3339)
				b = append(b, '"')
			}
			b = appendObservedAt(b, &c.Entity)
		case RelationCreated, RelationDeleted:
			b = append(b, `,"relation":`...)
			b = AppendRelation(b, &c.Relation)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendObservedAt appends the "observedAt" member of an observations
// change: when each observation had been written, when any is known.
func appendObservedAt(b []byte, e *Entity) []byte {
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
