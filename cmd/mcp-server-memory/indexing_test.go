package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// indexedMessage is what the server logs when its background index build
// ends (buildIndexes).
const indexedMessage = "search indexes built in the background"

// TestSearchWaitsForTheIndexBuildAlone sends a search while the server
// still builds its indexes in the background, then a write and a lookup:
// the search waits for the build outside the store's lock, so the write
// and the lookup are answered while the search still waits and the build
// goes on, and the search, when it ends, finds what it looks for.
func TestSearchWaitsForTheIndexBuildAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a memory of 30,000 entities")
	}
	file := writeGeneratedMemory(t, 30_000)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	srv := startServer(t, file, sharingVersion, nil)
	srv.mustCall(ctx, t, "open_nodes", map[string]any{"names": []string{"nobody"}}) // the memory is loaded
	found := make(chan string, 1)
	go func() {
		res := srv.call(ctx, t, "search_nodes", map[string]any{"query": testgraph.DefaultQueries.Rare})
		found <- toolText(res)
	}()
	time.Sleep(50 * time.Millisecond) // the search is on its way first
	srv.mustCall(ctx, t, "create_entities", map[string]any{"entities": []map[string]any{{"name": "written during the build", "entityType": "test", "observations": []string{"o"}}}})
	opened := toolText(srv.call(ctx, t, "open_nodes", map[string]any{"names": []string{"written during the build"}}))
	select {
	case <-found:
		t.Fatal("the search was answered before the write and the lookup sent after it")
	default:
	}
	if strings.Contains(srv.stderr.String(), indexedMessage) {
		t.Fatalf("the index build ended before the write and the lookup were answered: they waited for it\nstderr:\n%s", srv.stderr)
	}
	if !strings.Contains(opened, `"written during the build"`) {
		t.Errorf("open_nodes after the write does not show it: %s", opened)
	}
	if text := <-found; !strings.Contains(text, testgraph.DefaultQueries.Rare) {
		t.Errorf("the search that waited for the build does not find the rare word: %s", text)
	}
}

// writeGeneratedMemory writes a generated memory of n entities to a new
// file and returns its path.
func writeGeneratedMemory(t *testing.T, n int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	g, _ := testgraph.Generate(n, 1)
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.WriteJSONL(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSIGKILLWhileIndexing kills a server in a stream of writes while it
// still builds its search indexes in the background, on a memory big enough
// that the build outlasts the writes: the file stays valid, and a new
// server, itself building its indexes, finds every acknowledged write with
// search_nodes at once, opens them all, and ends its build.
func TestSIGKILLWhileIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a memory of 20,000 entities")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	file := writeGeneratedMemory(t, 20_000)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE=2ms")
	acked := writeUntilKilled(ctx, t, srv, rng, 0, 10+rng.IntN(20))
	if strings.Contains(srv.stderr.String(), indexedMessage) {
		t.Fatalf("the killed server had finished its index build: the kill did not fall in it\nstderr:\n%s", srv.stderr)
	}
	decodeMemoryFile(t, file)

	fresh := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_STALE_AFTER=2s", "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s")
	defer fresh.close()
	for _, name := range acked {
		res := fresh.call(ctx, t, "search_nodes", map[string]any{"query": name})
		if res == nil || res.IsError || !strings.Contains(toolText(res), `"`+name+`"`) {
			t.Errorf("search_nodes %q after the restart does not find it: %v", name, res)
		}
	}
	for _, name := range acked {
		res := fresh.call(ctx, t, "open_nodes", map[string]any{"names": []string{name}})
		if res == nil || !strings.Contains(toolText(res), `"`+name+`"`) {
			t.Errorf("open_nodes after the restart misses acknowledged write %s", name)
		}
	}
	// The restarted server's own build ends, with the writes in it.
	for !strings.Contains(fresh.stderr.String(), indexedMessage) {
		if ctx.Err() != nil {
			t.Fatalf("the restarted server never finished its index build\nstderr:\n%s", fresh.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
