package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// bigDeletion writes a memory whose history holds one deletion of n
// entities (about 470 bytes each, so 90,000 make a 42 MB record) among
// a few small writes, and returns the memory file's path.
func bigDeletion(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"entity","name":"Kept","entityType":"thing","observations":["still here"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	changes := make([]graph.Change, 0, n)
	filler := strings.Repeat("a fact that takes some room ", 14)
	for i := range n {
		changes = append(changes, graph.Change{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: fmt.Sprint("entity ", i), EntityType: "thing",
			Observations: []string{fmt.Sprint("observation ", i, " ", filler)}}})
	}
	var b []byte
	id := ""
	for i, r := range []history.Record{
		{Tool: "create_entities", Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "Kept", EntityType: "thing", Observations: []string{"still here"}}}}},
		{Tool: "delete_entities", Client: "Claude Desktop", Changes: changes},
		{Tool: "delete_entities", Client: "Cursor", Changes: []graph.Change{{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "Small", EntityType: "thing", Observations: []string{"one"}}}}},
		{Tool: "add_observations", Changes: []graph.Change{{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: "Kept", Observations: []string{"more"}}}}},
	} {
		r.Time = now.Add(time.Duration(i-4) * time.Minute)
		r.ID = history.NewID(r.Time, id)
		id = r.ID
		b = history.AppendLine(b, &r)
	}
	if err := os.WriteFile(path+".history", b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkHomeOnBigDeletion times the home view's data when the history
// keeps a 42 MB deletion record.
func BenchmarkHomeOnBigDeletion(b *testing.B) {
	path := bigDeletion(b, 90_000)
	fi, _ := os.Stat(path + ".history")
	b.Logf("history: %d bytes", fi.Size())
	store := filestore.Open(path, filestore.Options{Logf: b.Logf})
	defer store.Close()
	h := NewHandler(store, path, Options{Secret: secret, Logf: b.Logf})
	for b.Loop() {
		if a := call(b, h, "GET", "/"+secret+"/api/learned", ""); a.status != 200 {
			b.Fatalf("status %d", a.status)
		}
	}
}
