package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A trim by size drops the oldest records first and never the newest: a
// newest record bigger than the bound is kept, and Trim says the bound is
// exceeded.
func TestTrimKeepsTheNewestRecordOverTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	now := time.Now().UTC().Truncate(time.Second)
	small := []graph.Record{record(now.Add(-3*time.Second), "a"), record(now.Add(-2*time.Second), "b")}
	big := record(now.Add(-time.Second), "big")
	big.Changes[0].Entity.Observations = []string{strings.Repeat("x", 10000)}
	big.ID = graph.NewID(now, small[1].ID)
	if err := AppendFile(path, append(small, big), 0o600); err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxAge: time.Hour, MaxBytes: 4000}
	trimmed, err := Trim(path, lim, now)
	var over *OverBoundError
	if !trimmed || !errors.As(err, &over) || over.Bound != 4000 || over.Size < 10000 {
		t.Fatalf("trim: %v %v", trimmed, err)
	}
	if !strings.Contains(err.Error(), "over its bound") {
		t.Errorf("message %q", err)
	}
	got, _, _ := ReadFile(path, Filter{})
	if tools(got) != "big" {
		t.Errorf("after the trim: %q, want the newest record alone", tools(got))
	}
	// Again: nothing to drop, the file is left alone, still over.
	if trimmed, err := Trim(path, lim, now); trimmed || !errors.As(err, &over) {
		t.Errorf("second trim: %v %v", trimmed, err)
	}
	// By age the newest goes too: the bound of time is kept.
	if _, err := Trim(path, lim, now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ReadFile(path, Filter{}); len(got) != 0 {
		t.Errorf("after a trim by age: %q", tools(got))
	}
}

// A garbled line (a journal's dead line) is never appended; the history
// takes the memory file's current mode each time it is written; a trim
// leaves no temporary file and removes those a killed trim left.
func TestAppendLinesValidatesAndFollowsTheMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl"+Suffix)
	a := record(time.Now(), "a")
	good := graph.AppendRecord(nil, &a)
	garbled := []byte(`{"id":"01a2345678ab12cd34","time":"2026-12-01T00:00:00Z","changes":[{"op":"creat` + "\n")
	if err := AppendLines(path, [][]byte{garbled, good}, 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != string(good) {
		t.Errorf("history holds %q, want the good line alone", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	// The owner narrows the memory file: the next write narrows the history.
	if err := AppendLines(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after the memory went 0600", fi.Mode().Perm())
	}
	old := filepath.Join(dir, "m.jsonl"+Suffix+".4242.tmp")
	os.WriteFile(old, []byte("left"), 0o600)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	b := record(time.Now().Add(time.Second), "b")
	AppendFile(path, []graph.Record{b}, 0o600)
	if trimmed, err := Trim(path, Limits{MaxAge: time.Hour, MaxBytes: int64(len(good))}, time.Now()); !trimmed || err != nil {
		t.Fatalf("trim: %v %v", trimmed, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left beside the history: %v", entries)
	}
}

// A forged id far past its record's time (the largest id) neither
// breaks the ids that follow nor stays at the top of newest first.
func TestForgedMaximumID(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	forged := graph.Record{ID: "ffffffffffffffffff", Time: now.Add(-time.Hour), Tool: "forged",
		Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "F", EntityType: "t"}}}}
	id := graph.NewID(now, forged.ID)
	if len(id) != graph.IDLen || id[:12] > "ffffffffffff" {
		t.Fatalf("id after a forged one: %q", id)
	}
	later := graph.Record{ID: id, Time: now, Tool: "later"}
	older := record(now.Add(-time.Minute), "older")
	if got := tools(Newest([]graph.Record{forged, later, older})); got != "later older forged" {
		t.Errorf("newest first: %q", got)
	}
}

// PurgeFile removes every change naming the entity, and the records left
// empty, and keeps every other byte.
func TestPurgeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	now := time.Now().UTC().Truncate(time.Second)
	both := graph.Record{ID: graph.NewID(now, ""), Time: now, Tool: "create_entities", Changes: []graph.Change{
		{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "Alice", EntityType: "p", Observations: []string{"secret"}}},
		{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "Bob", EntityType: "p"}},
	}}
	rel := graph.Record{ID: graph.NewID(now, both.ID), Time: now, Tool: "create_relations", Changes: []graph.Change{
		{Kind: graph.RelationCreated, Relation: graph.Relation{From: "Bob", To: "Alice", RelationType: "knows"}}}}
	other := record(now, "other")
	other.ID = graph.NewID(now, rel.ID)
	if err := AppendFile(path, []graph.Record{both, rel, other}, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(readFile(t, path), []byte("{garbled Alice\n")...), 0o644)
	n, err := PurgeFile(path, "Alice", 0o600)
	if err != nil || n != 3 {
		t.Fatalf("purged %d, %v; want 3", n, err)
	}
	data := readFile(t, path)
	if strings.Contains(string(data), "Alice") || strings.Contains(string(data), "secret") {
		t.Errorf("the history still names Alice:\n%s", data)
	}
	got, _, _ := ReadFile(path, Filter{})
	if tools(got) != "create_entities other" || len(got[0].Changes) != 1 || got[0].Changes[0].Entity.Name != "Bob" {
		t.Errorf("after the purge: %q %+v", tools(got), got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if n, err := PurgeFile(path, "Alice", 0o600); n != 0 || err != nil {
		t.Errorf("second purge: %d %v", n, err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
