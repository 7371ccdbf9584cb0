package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// entity returns the entity of the line b and whether b is exactly what
// AppendEntity writes for it, or why the line is not an entity.
func (d *decoder) entity(b []byte) (e graph.Entity, canonical bool, reason string) {
	if reason := d.require(b, "entity", keyName, keyEntityType, keyObservations); reason != "" {
		return graph.Entity{}, false, reason
	}
	times := d.readTimes(b, true)
	extra, err := d.extra(b, entityKeys|times.ours)
	if err != nil {
		return graph.Entity{}, false, err.Error()
	}
	name, typ := d.members[d.last[keyName]].str, d.members[d.last[keyEntityType]].str
	obs := &d.members[d.last[keyObservations]]
	elems := d.elems[obs.elemsStart:obs.elemsEnd]
	k := d.newStrings(2 + len(elems))
	canonical = d.str(b, name, k)
	canonical = d.str(b, typ, k+1) && canonical
	for i, s := range elems {
		canonical = d.str(b, s, k+2+i) && canonical
	}
	d.cutStrings()
	e = graph.Entity{Name: d.strs[k], EntityType: d.strs[k+1], Observations: d.strs[k+2 : len(d.strs) : len(d.strs)], Extra: extra}
	d.setEntityTimes(&times, &e)
	if canonical = canonical && extra == nil; canonical {
		d.tail = append(graph.AppendEntityTimes(d.tail[:0], &e), '}')
		canonical = compactEntity(b, name, typ, elems, d.tail)
	}
	return e, canonical, ""
}

// value returns the value of the line's last member with key k, or nil.
func (d *decoder) value(b []byte, k keyID) []byte {
	if j := d.last[k]; j >= 0 {
		return b[d.members[j].start:d.members[j].end]
	}
	return nil
}

// lineTimes is what a line's time members hold.
type lineTimes struct {
	ours             uint16 // the time members that hold what this server writes (keys as bits)
	created, updated graph.Time
	hasUpdated       bool
	runs             []run  // "observationTimes"; nil: all at createdAt
	hash             []byte // the value of "observationsHash", quotes included
}

// readTimes reads the line's time members (see the package doc); those
// that do not hold what this server writes are left out of ours, and so
// kept as Extra. entity: the line is an entity's, which has all four; a
// relation's has "createdAt" only.
func (d *decoder) readTimes(b []byte, entity bool) lineTimes {
	var lt lineTimes
	if v := d.value(b, keyCreatedAt); v != nil {
		if t, ok := parseTime(v); ok {
			lt.ours |= 1 << keyCreatedAt
			lt.created = t
		}
	}
	if !entity {
		return lt
	}
	if v := d.value(b, keyUpdatedAt); v != nil {
		if t, ok := parseTime(v); ok {
			lt.ours |= 1 << keyUpdatedAt
			lt.updated, lt.hasUpdated = t, true
		}
	}
	v, h := d.value(b, keyObservationTimes), d.value(b, keyObservationsHash)
	if h == nil || !isHash(h) {
		return lt
	}
	if v == nil {
		lt.ours |= 1 << keyObservationsHash
		lt.hash = h
	} else if runs, ok := parseRuns(v); ok {
		lt.ours |= 1<<keyObservationTimes | 1<<keyObservationsHash
		lt.runs, lt.hash = runs, h
	}
	return lt
}

// setEntityTimes sets e's times from the line's: "updatedAt" absent is
// "createdAt", and the observation times count only while the hash is the
// observations list's.
func (d *decoder) setEntityTimes(lt *lineTimes, e *graph.Entity) {
	if lt.ours == 0 {
		return
	}
	e.Created, e.Updated = lt.created, lt.created
	if lt.hasUpdated {
		e.Updated = lt.updated
	}
	if lt.hash == nil || len(e.Observations) == 0 {
		return
	}
	d.text = append(graph.AppendObservationsHash(append(d.text[:0], '"'), e.Observations), '"')
	if !bytes.Equal(lt.hash, d.text) {
		return
	}
	if lt.runs == nil {
		// No runs: every observation was written when the entity was.
		lt.runs = []run{{e.Created, len(e.Observations)}}
	}
	if ts, ok := expandRuns(lt.runs, len(e.Observations)); ok {
		for _, t := range ts {
			if t != 0 {
				e.ObservedAt = ts
				break
			}
		}
	}
}

// relation returns the relation of the line b and whether b is exactly what
// AppendRelation writes for it, or why the line is not a relation.
func (d *decoder) relation(b []byte) (r graph.Relation, canonical bool, reason string) {
	if reason := d.require(b, "relation", keyFrom, keyTo, keyRelationType); reason != "" {
		return graph.Relation{}, false, reason
	}
	times := d.readTimes(b, false)
	extra, err := d.extra(b, relationKeys|times.ours)
	if err != nil {
		return graph.Relation{}, false, err.Error()
	}
	from, to, typ := d.members[d.last[keyFrom]].str, d.members[d.last[keyTo]].str, d.members[d.last[keyRelationType]].str
	k := d.newStrings(3)
	canonical = d.str(b, from, k)
	canonical = d.str(b, to, k+1) && canonical
	canonical = d.str(b, typ, k+2) && canonical
	d.cutStrings()
	r = graph.Relation{From: d.strs[k], To: d.strs[k+1], RelationType: d.strs[k+2], Extra: extra}
	tail := "}"
	if r.Created = times.created; r.Created != 0 {
		d.tail = append(graph.AppendRelationTimes(d.tail[:0], &r), '}')
		tail = string(d.tail)
	}
	return r, canonical && extra == nil && compactRelation(b, from, to, typ, tail), ""
}

// compactEntity reports whether the entity line b is laid out as
// AppendEntity lays out the strings found in it: the four known members
// only, in its order, the type a plain "entity", no white space, then tail
// (the time members as AppendEntity writes them, and "}"). The pieces it
// checks cover the whole line, so a line with another member, or with a key
// twice, fails.
func compactEntity(b []byte, name, typ span, obs []span, tail []byte) bool {
	l := layout{b: b, ok: true}
	l.text(graph.LineEntityName)
	l.str(name)
	l.text(graph.LineEntityType)
	l.str(typ)
	l.text(graph.LineObservations)
	for i, s := range obs {
		if i > 0 {
			l.text(",")
		}
		l.str(s)
	}
	l.text("]")
	l.bytes(tail)
	return l.done()
}

// compactRelation is compactEntity for a relation line, tail its end.
func compactRelation(b []byte, from, to, typ span, tail string) bool {
	l := layout{b: b, ok: true}
	l.text(graph.LineRelationFrom)
	l.str(from)
	l.text(graph.LineRelationTo)
	l.str(to)
	l.text(graph.LineRelationType)
	l.str(typ)
	l.text(tail)
	return l.done()
}

// layout follows a line from its start, checking it piece by piece.
type layout struct {
	b  []byte
	i  int // where the next piece must start
	ok bool
}

// text checks that the line goes on with s.
func (l *layout) text(s string) {
	if l.ok = l.ok && len(l.b)-l.i >= len(s) && string(l.b[l.i:l.i+len(s)]) == s; l.ok {
		l.i += len(s)
	}
}

// bytes checks that the line goes on with t.
func (l *layout) bytes(t []byte) {
	if l.ok = l.ok && len(l.b)-l.i >= len(t) && bytes.Equal(l.b[l.i:l.i+len(t)], t); l.ok {
		l.i += len(t)
	}
}

// str checks that the line goes on with the string whose content is s.
func (l *layout) str(s span) {
	if l.ok = l.ok && s.start == l.i+1; l.ok {
		l.i = s.end + 1
	}
}

// done reports whether every piece was there and the line ends after them.
func (l *layout) done() bool { return l.ok && l.i == len(l.b) }

// extra returns the members of the line whose keys are not in known, as
// Entity.Extra holds them: `,"key":value` each, compact, in line order, a
// repeated key once at its first place with its last value. It is nil when
// there are none.
func (d *decoder) extra(b []byte, known uint16) ([]byte, error) {
	type kept struct {
		key   string
		value []byte
	}
	var members []kept
	var index map[string]int
	for _, m := range d.members {
		if known&(1<<m.key) != 0 {
			continue
		}
		key := string(appendUnquoted(nil, b[m.keySpan.start:m.keySpan.end], m.keySpan.flags))
		var value bytes.Buffer
		if err := json.Compact(&value, b[m.start:m.end]); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err) // the scanner let through what encoding/json refuses
		}
		if j, ok := index[key]; ok {
			members[j].value = value.Bytes()
			continue
		}
		if index == nil {
			index = make(map[string]int)
		}
		index[key] = len(members)
		members = append(members, kept{key, value.Bytes()})
	}
	if members == nil {
		return nil, nil
	}
	var out []byte
	for _, m := range members {
		out = append(out, ',')
		out = graph.AppendString(out, m.key)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return out, nil
}
