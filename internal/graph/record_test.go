package graph

import (
	"errors"
	"testing"
	"time"
)

// Ids sort by time, and after the last one even when the clock gives the
// same millisecond or goes back.
func TestIDsSortAfterTheLast(t *testing.T) {
	now := time.Now()
	last := NewID(now, "")
	for i := range 1000 {
		id := NewID(now.Add(-time.Duration(i%3)*time.Millisecond), last)
		if id <= last {
			t.Fatalf("id %s after %s", id, last)
		}
		last = id
	}
	if later := NewID(now.Add(time.Hour), last); later <= last {
		t.Errorf("an hour later: %s after %s", later, last)
	}
}

// Short is the id's last 6 digits, the random ones.
func TestRecordShort(t *testing.T) {
	r := Record{ID: NewID(time.Now(), "")}
	if r.Short() != r.ID[12:] || len(r.ID) != IDLen {
		t.Errorf("Short %q of %q", r.Short(), r.ID)
	}
}

// Write stamps the facts and the record with the instant it is handed, names
// the write's author, and makes no record of a write that changed nothing
// or failed.
func TestWriteMakesTheRecord(t *testing.T) {
	g := New()
	now := time.Date(2026, 12, 1, 10, 0, 0, 700e6, time.UTC)
	asked := 0
	last := func() string { asked++; return "" }
	create := Write{Tool: "create_entities", Client: "c", Apply: func(g *Graph) error {
		g.CreateEntities([]Entity{{Name: "A", EntityType: "t"}})
		return nil
	}}
	rec, changed, complete, err := g.Write(create, now, last)
	if err != nil || !changed || !complete || asked != 1 {
		t.Fatalf("Write: changed %v, complete %v, err %v, lastID asked %d times", changed, complete, err, asked)
	}
	if rec.Tool != "create_entities" || rec.Client != "c" || !rec.Time.Equal(now.Truncate(time.Second)) || len(rec.ID) != IDLen || len(rec.Changes) != 1 {
		t.Errorf("record %+v", rec)
	}
	if got := g.Entities()[0].Created; got != TimeOf(now) || g.Now() != 0 {
		t.Errorf("created at %v, the graph's time left at %v", got, g.Now())
	}
	if _, changed, _, err := g.Write(create, now, last); changed || err != nil || asked != 1 {
		t.Errorf("the same write again: changed %v, err %v, lastID asked %d times", changed, err, asked)
	}
	failing := Write{Apply: func(*Graph) error { return errors.New("no") }}
	if rec, changed, _, err := g.Write(failing, now, last); err == nil || changed || rec.ID != "" {
		t.Errorf("a failing write: %+v, changed %v, err %v", rec, changed, err)
	}
}
