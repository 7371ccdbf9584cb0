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
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	g, _ := testgraph.Generate(20_000, 1)
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
