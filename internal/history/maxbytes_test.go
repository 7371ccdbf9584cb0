package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// TestReadFileMaxBytes: a record bigger than Filter.MaxBytes comes by its
// header, chosen by DeletesEntity all the same; the others whole; with an
// Entity every record is decoded.
func TestReadFileMaxBytes(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	big := graph.Record{ID: graph.NewID(t0, ""), Time: t0, Tool: "delete_entities", Client: "Cursor", Changes: []graph.Change{
		{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "Big", EntityType: "thing", Observations: []string{strings.Repeat("x", 5000)}}}}}
	small := graph.Record{ID: graph.NewID(t0.Add(time.Second), big.ID), Time: t0.Add(time.Second), Tool: "delete_entities", Changes: []graph.Change{
		{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "Small", EntityType: "thing"}}}}
	path := filepath.Join(t.TempDir(), "memory.jsonl.history")
	if err := os.WriteFile(path, graph.AppendRecord(graph.AppendRecord(nil, &big), &small), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, _, err := ReadFile(path, Filter{DeletesEntity: true, MaxBytes: 1000})
	if err != nil || len(recs) != 2 {
		t.Fatalf("%v, %v: want both records", recs, err)
	}
	if r := recs[0]; r.ID != big.ID || r.Client != "Cursor" || len(r.Changes) != 0 {
		t.Errorf("the big record: %+v, want its header only", r)
	}
	if r := recs[1]; r.ID != small.ID || len(r.Changes) != 1 {
		t.Errorf("the small record: %+v, want it whole", r)
	}
	recs, _, err = ReadFile(path, Filter{Entity: "Big", MaxBytes: 1000})
	if err != nil || len(recs) != 1 || len(recs[0].Changes) != 1 {
		t.Errorf("with an entity: %+v, %v, want the big record whole", recs, err)
	}
}
