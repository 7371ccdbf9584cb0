package ui

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
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
	for i, r := range []graph.Record{
		{Tool: "create_entities", Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "Kept", EntityType: "thing", Observations: []string{"still here"}}}}},
		{Tool: "delete_entities", Client: "Claude Desktop", Changes: changes},
		{Tool: "delete_entities", Client: "Cursor", Changes: []graph.Change{{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: "Small", EntityType: "thing", Observations: []string{"one"}}}}},
		{Tool: "add_observations", Changes: []graph.Change{{Kind: graph.ObservationsAdded, Entity: graph.Entity{Name: "Kept", Observations: []string{"more"}}}}},
	} {
		r.Time = now.Add(time.Duration(i-4) * time.Minute)
		r.ID = graph.NewID(r.Time, id)
		id = r.ID
		b = graph.AppendRecord(b, &r)
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

// deletedOnHome returns the home view's recently deleted writes, newest
// first.
func deletedOnHome(t testing.TB, h http.Handler) []map[string]any {
	t.Helper()
	a := call(t, h, "GET", "/"+secret+"/api/learned", "")
	d, _ := a.body["deleted"].(map[string]any)
	recs, _ := d["records"].([]any)
	if a.status != http.StatusOK || d == nil {
		t.Fatalf("the home view: %d %v", a.status, a.body)
	}
	out := make([]map[string]any, len(recs))
	for i, r := range recs {
		out[i] = r.(map[string]any)
	}
	return out
}

// TestHomeListsABigDeletionByItsHeader: the home view reads a deletion
// bigger than shownRecordBytes by its header only, lists it as a large
// change the undo command restores, and reads the small ones whole.
func TestHomeListsABigDeletionByItsHeader(t *testing.T) {
	path := bigDeletion(t, 3000) // 1.4 MB
	store := filestore.Open(path, filestore.Options{Logf: t.Logf})
	defer store.Close()
	h := NewHandler(store, path, Options{Secret: secret, Logf: t.Logf})
	recs := deletedOnHome(t, h)
	if len(recs) != 2 {
		t.Fatalf("%d deletions listed, want 2: %v", len(recs), recs)
	}
	if small := recs[0]; small["headline"] != "deleted Small (thing)" || small["restorable"] != true || small["client"] != "Cursor" {
		t.Errorf("the small deletion: %v", small)
	}
	big := recs[1]
	if big["large"] != true || big["headline"] != "a large change" || big["restorable"] != false || big["client"] != "Claude Desktop" ||
		!strings.HasPrefix(big["undo"].(string), "mcp-server-memory undo ") || !strings.Contains(big["summary"].(string), "too large to show here") {
		t.Errorf("the big deletion: %v", big)
	}
}

// TestHomeOffersOnlyWhatCanComeBack: a deletion whose every fact that can
// come back is back is not offered for restoring (a relation to an entity
// deleted since cannot come back), and of two deletions of one entity only
// the newer is.
func TestHomeOffersOnlyWhatCanComeBack(t *testing.T) {
	h, _ := newHandler(t, "", time.Second)
	edit := func(body string) {
		t.Helper()
		if a := call(t, h, "POST", "/"+secret+"/api/edit", body); a.status != http.StatusOK {
			t.Fatalf("%s: %v", body, a)
		}
	}
	edit(`{"op":"createEntity","entity":"Ada","entityType":"person"}`)
	edit(`{"op":"createEntity","entity":"Bob","entityType":"person"}`)
	edit(`{"op":"addRelation","from":"Bob","to":"Ada","relationType":"knows"}`)
	edit(`{"op":"deleteEntity","entity":"Bob"}`)
	edit(`{"op":"deleteEntity","entity":"Ada"}`)
	recs := deletedOnHome(t, h)
	if len(recs) != 2 || recs[1]["headline"] != "deleted Bob (person)" || recs[1]["restorable"] != true || recs[1]["back"] != false {
		t.Fatalf("Bob's deletion before its restore: %v", recs)
	}
	edit(`{"op":"restore","record":"` + recs[1]["id"].(string) + `"}`)
	recs = deletedOnHome(t, h)
	if bob := recs[1]; bob["back"] != true {
		t.Errorf("Bob restored (his relation to Ada, who is gone, cannot come back): %v, want it back", bob)
	}
	edit(`{"op":"deleteEntity","entity":"Bob"}`)
	recs = deletedOnHome(t, h)
	if len(recs) != 3 || recs[0]["restorable"] != true || recs[2]["restorable"] != false || recs[2]["later"] != true || recs[2]["back"] == true {
		t.Errorf("Bob deleted again: the newer deletion is the one to restore, got %v", recs)
	}
}

// BenchmarkHomeOnBigDeletion20 is BenchmarkHomeOnBigDeletion with 20
// requests at once.
func BenchmarkHomeOnBigDeletion20(b *testing.B) {
	path := bigDeletion(b, 90_000)
	store := filestore.Open(path, filestore.Options{Logf: b.Logf})
	defer store.Close()
	h := NewHandler(store, path, Options{Secret: secret, Logf: b.Logf})
	for b.Loop() {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if a := call(b, h, "GET", "/"+secret+"/api/learned", ""); a.status != 200 {
					b.Errorf("status %d", a.status)
				}
			})
		}
		wg.Wait()
	}
}
