package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// entity returns the entity of the line b, or why the line is not an
// entity.
func (d *decoder) entity(b []byte) (e graph.Entity, reason string) {
	if reason := d.require(b, "entity", keyName, keyEntityType, keyObservations); reason != "" {
		return graph.Entity{}, reason
	}
	times := d.readTimes(b, true)
	extra, err := d.extra(b, entityKeys|times.ours)
	if err != nil {
		return graph.Entity{}, err.Error()
	}
	name, typ := d.members[d.last[keyName]].str, d.members[d.last[keyEntityType]].str
	obs := &d.members[d.last[keyObservations]]
	elems := d.elems[obs.elemsStart:obs.elemsEnd]
	k := d.newStrings(2 + len(elems))
	d.strs[k] = d.text.place(d.decoded(b, name))
	d.strs[k+1] = d.kind(d.decoded(b, typ))
	for i, s := range elems {
		d.strs[k+2+i] = d.text.place(d.decoded(b, s))
	}
	e = graph.Entity{Name: d.strs[k], EntityType: d.strs[k+1], Observations: d.strs[k+2 : len(d.strs) : len(d.strs)], Extra: extra}
	d.setEntityTimes(&times, &e)
	return e, ""
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
	d.scratch = append(graph.AppendObservationsHash(append(d.scratch[:0], '"'), e.Observations), '"')
	if !bytes.Equal(lt.hash, d.scratch) {
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

// relation returns the relation of the line b, or why the line is not a
// relation. Its ends are copied apart from the text the graph keeps: the
// graph names each end by its entity's name once the load ends
// (graph.EndLoad), and these copies are garbage then.
func (d *decoder) relation(b []byte) (r graph.Relation, reason string) {
	if reason := d.require(b, "relation", keyFrom, keyTo, keyRelationType); reason != "" {
		return graph.Relation{}, reason
	}
	times := d.readTimes(b, false)
	extra, err := d.extra(b, relationKeys|times.ours)
	if err != nil {
		return graph.Relation{}, err.Error()
	}
	from, to, typ := d.members[d.last[keyFrom]].str, d.members[d.last[keyTo]].str, d.members[d.last[keyRelationType]].str
	k := d.newStrings(3)
	d.strs[k] = d.ends.place(d.decoded(b, from))
	d.strs[k+1] = d.ends.place(d.decoded(b, to))
	d.strs[k+2] = d.kind(d.decoded(b, typ))
	r = graph.Relation{From: d.strs[k], To: d.strs[k+1], RelationType: d.strs[k+2], Extra: extra, Created: times.created}
	return r, ""
}

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
