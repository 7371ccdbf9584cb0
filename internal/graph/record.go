package graph

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"
)

// Record is one write as both stores keep it, in their journal and
// history: when it was made, by which tool or command and client, and the
// changes it made (TakeChanges). Its line format is jsonl's (AppendRecord);
// the history file and what is read from it, the history package's.
type Record struct {
	// ID is unique and sorts by time: 12 hex digits of Unix milliseconds,
	// then 6 random ones (NewID).
	ID      string
	Time    time.Time // UTC, to the second
	Tool    string
	Client  string
	Changes []Change
}

// Write runs the write w on g at now, as both stores do under the memory's
// lock: the facts w adds are stamped with now (to the second), and the
// changes it makes become its record, stamped with the same instant and
// w's author, with an id that sorts after lastID() (called only when
// something changed). The store reads the clock; g only takes the instant.
// changed reports whether g changed; complete whether rec's changes hold
// the whole write (TakeChanges: a Rewrite is not described). When w.Apply
// fails its error is returned, changed is false, and g may hold part of
// the write.
func (g *Graph) Write(w Write, now time.Time, lastID func() string) (rec Record, changed, complete bool, err error) {
	before := g.Version()
	g.TrackChanges()
	g.SetNow(TimeOf(now))
	err = w.Apply(g)
	g.SetNow(0)
	changes, complete := g.TakeChanges()
	if err != nil || g.Version() == before {
		return Record{}, false, complete, err
	}
	rec = Record{Time: now.UTC().Truncate(time.Second), Tool: w.Tool, Client: w.Client, Changes: changes}
	if len(changes) > 0 {
		rec.ID = NewID(now, lastID())
	}
	return rec, true, complete, nil
}

// IDLen is the length of a record id: 12 hex digits of Unix milliseconds
// and 6 random ones.
const IDLen = 18

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

// PlausibleID reports whether id sorts where its record's time t says:
// within a day (maxIDSkew) after the start of t's second, never before it.
func PlausibleID(id string, t time.Time) bool {
	if len(id) != IDLen {
		return false
	}
	ms, err := strconv.ParseInt(id[:12], 16, 64)
	if err != nil {
		return false
	}
	at := t.Truncate(time.Second).UnixMilli()
	return ms >= at && ms <= at+maxIDSkew.Milliseconds()
}

// SortKey is what orders a record among the others: its id, or for an id
// that is not plausible (forged), its time in the id's form.
func (r *Record) SortKey() string {
	if PlausibleID(r.ID, r.Time) {
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
