package sharedstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/sharedstore"
)

const interval = 20 * time.Millisecond

func create(t *testing.T, s graph.Store, name string) {
	t.Helper()
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t"}})
		return nil
	}})
	if err != nil || !changed {
		t.Fatalf("creating %s: changed %v, %v", name, changed, err)
	}
}

// watch runs w.Watch until the test ends and returns its onChange calls.
func watch(t *testing.T, w graph.Store) (<-chan struct{}, func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Watch(ctx, interval, func() { calls <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Watch did not return after its context ended")
		}
	})
	return calls, func() int { return len(calls) }
}

func heard(t *testing.T, what string, calls <-chan struct{}) {
	t.Helper()
	select {
	case <-calls:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not reported", what)
	}
}

// TestPartsHearEachOther: a part hears the other parts' writes and other
// processes' writes, never its own, nor a write that changed nothing.
func TestPartsHearEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	shared := sharedstore.New(filestore.Open(path, filestore.Options{}))
	server, page := shared.Part(), shared.Part()
	serverCalls, serverPending := watch(t, server)
	pageCalls, pagePending := watch(t, page)
	time.Sleep(3 * interval) // the Watches are running

	create(t, server, "by the server")
	heard(t, "the server's write, on the page", pageCalls)
	create(t, page, "on the page")
	heard(t, "the page's write, by the server", serverCalls)
	if changed, err := page.Update(context.Background(), graph.Write{Apply: func(*graph.Graph) error { return nil }}); changed || err != nil {
		t.Fatalf("an update that changes nothing: %v %v", changed, err)
	}
	// Another server (which journals its writes: a save, as a command
	// makes, shows two states, its record and then the file, and may be
	// reported twice).
	create(t, filestore.Open(path, filestore.Options{Journal: true, CompactIdle: time.Hour}), "by another process")
	heard(t, "another process's write, by the server", serverCalls)
	heard(t, "another process's write, on the page", pageCalls)

	time.Sleep(5 * interval) // time for a wrong report to arrive
	if n, m := serverPending(), pagePending(); n != 0 || m != 0 {
		t.Errorf("%d more reports to the server and %d to the page: a part heard its own write or a write that changed nothing", n, m)
	}
	var names []string
	page.View(context.Background(), func(g *graph.Graph) error {
		for _, e := range g.Entities() {
			names = append(names, e.Name)
		}
		return nil
	})
	if len(names) != 3 {
		t.Errorf("the memory holds %q", names)
	}
}

// A part reads the shared store's history: the page under --http reads
// what the MCP server's part wrote.
func TestPartsReadTheHistory(t *testing.T) {
	shared := sharedstore.New(filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{}))
	server, page := shared.Part(), shared.Part()
	ctx := context.Background()
	if _, err := server.Update(ctx, graph.Write{Tool: "create_entities", Client: "c", Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "t"}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	recs, err := page.(history.Reader).History(history.Filter{Entity: "A"})
	if err != nil || len(recs) != 1 || recs[0].Tool != "create_entities" || recs[0].Client != "c" {
		t.Errorf("the page's part read %+v, %v", recs, err)
	}
}
