package history

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Summary says what a write did in one line: an entity deletion with the
// relations that went with it, and past four parts how many more.
func TestSummary(t *testing.T) {
	changes := []graph.Change{
		{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "A", EntityType: "p", Observations: []string{"x"}}},
		{Kind: graph.RelationDeleted, Relation: graph.Relation{From: "A", To: "B", RelationType: "r"}},
		{Kind: graph.RelationDeleted, Relation: graph.Relation{From: "C", To: "A", RelationType: "r"}},
		{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "B", EntityType: "p"}},
		{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: "B", Observations: []string{"y", "z"}}},
		{Kind: graph.ObservationsDeleted, Entity: graph.Entity{Name: "B", Observations: []string{"y"}}},
		{Kind: graph.RelationCreated, Relation: graph.Relation{From: "B", To: "C", RelationType: "s"}},
	}
	want := "− entity A (p), 1 observation, 2 relations; + entity B (p), 0 observations; + 2 observations on B; − 1 observation on B; and 1 more"
	if got := Summary(changes); got != want {
		t.Errorf("Summary\n%s\nwant\n%s", got, want)
	}
	if got := Summary(changes[6:]); got != "+ relation B s C" {
		t.Errorf("Summary %q", got)
	}
}

type fileReader string

func (p fileReader) History(f Filter) ([]graph.Record, error) {
	recs, _, err := ReadFile(string(p), f)
	return Newest(recs), err
}

// RecentWrites counts the writes of each of the last days.
func TestRecentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var recs []graph.Record
	last := ""
	for _, ago := range []time.Duration{72 * time.Hour, 25 * time.Hour, time.Hour, time.Minute} {
		r := record(now.Add(-ago), "w")
		r.ID = graph.NewID(now.Add(-ago), last)
		last = r.ID
		recs = append(recs, r)
	}
	if err := AppendFile(path, recs, 0o600); err != nil {
		t.Fatal(err)
	}
	pd, err := RecentWrites(fileReader(path), graph.TimeOf(now), 3)
	if err != nil || len(pd.Counts) != 3 || pd.Counts[0] != 0 || pd.Counts[1] != 1 || pd.Counts[2] != 2 {
		t.Errorf("per day %v, %v; want [0 1 2]", pd.Counts, err)
	}
}
