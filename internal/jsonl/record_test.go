package jsonl

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A record's line reads back as the record, members this server does not
// know and times included.
func TestRecordRoundTrip(t *testing.T) {
	r := graph.Record{ID: graph.NewID(time.Now(), ""), Time: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Tool: "delete_entities", Client: "Claude \"Desktop\"",
		Changes: []graph.Change{
			{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "A", EntityType: "p", Observations: []string{"x", "y"}, Extra: []byte(`,"mood":"ok"`), Created: 100, Updated: 200, ObservedAt: []graph.Time{100, 150}}},
			{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: "B", Observations: []string{"z"}, Updated: 300}},
			{Kind: graph.ObservationsDeleted, Entity: graph.Entity{Name: "B", Observations: []string{"u", "v"}, Updated: 400, ObservedAt: []graph.Time{0, 350}}},
			{Kind: graph.RelationDeleted, Relation: graph.Relation{From: "A", To: "B", RelationType: "r", Created: 120}},
		}}
	line := graph.AppendRecord(nil, &r)
	got, err := DecodeRecord(line)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("read back\n%+v\nwant\n%+v\nfrom %s", got, r, line)
	}
}

// RecordLineOf keeps a record line with its id as it is, gives a line without
// one the id Record derives, and refuses a line that is no record.
func TestRecordLineOf(t *testing.T) {
	r := graph.Record{ID: graph.NewID(time.Now(), ""), Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Tool: "a", Client: "c",
		Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "a", EntityType: "t", Observations: []string{"o"}}}}}
	line := graph.AppendRecord(nil, &r)
	if got, ok := RecordLineOf(line); !ok || string(got) != string(line) {
		t.Errorf("RecordLineOf(a record line) = %q, %v", got, ok)
	}
	old := []byte(`{"time":"2026-12-01T00:00:00Z","tool":"t","changes":[]}`)
	got, ok := RecordLineOf(old)
	if !ok || RecordID(got) == "" || !strings.HasSuffix(string(got), "\n") {
		t.Errorf("RecordLineOf(a line without id) = %q, %v", got, ok)
	}
	if again, _ := RecordLineOf(old); string(again) != string(got) {
		t.Errorf("a derived id changes: %q then %q", got, again)
	}
	if _, ok := RecordLineOf([]byte(`{"changes":[{"op":"nope"}]}`)); ok {
		t.Error("RecordLineOf took a line with an unknown op")
	}
	if _, err := DecodeChanges([]byte(`[{"op":"createEntity"}]`)); err == nil {
		t.Error("DecodeChanges took a createEntity without an entity")
	}
}

// fileReader is the history file as a Reader.
