package jsonl

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A save per small write, thousands of times, must leave the heap as big
// as the graph it holds, not a little bigger per save.
// (internal/filestore's TestManyWritesKeepTheHeapFlat does the same through
// whole saves to disk.)
func TestManyWritesKeepTheHeapFlat(t *testing.T) {
	g := graph.New()
	const writes = 3000
	base := liveHeap()
	for i := range writes {
		if i%2 == 0 {
			g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("entity %d", i), EntityType: "thing", Observations: []string{"first"}}})
		} else if _, err := g.AddObservations([]graph.ObservationAddition{{EntityName: fmt.Sprintf("entity %d", i-1), Contents: []string{fmt.Sprintf("observation %d", i)}}}); err != nil {
			t.Fatal(err)
		}
		if err := Write(io.Discard, g, nil); err != nil {
			t.Fatal(err)
		}
		if i%500 == 499 {
			if grown := liveHeap() - base; grown > 64<<20 {
				t.Fatalf("after %d writes the heap grew by %d MiB (%d KiB a write)", i+1, grown>>20, grown/int64(i+1)>>10)
			}
		}
	}
	grown := liveHeap() - base

	// The same graph, loaded fresh from its file.
	data := encode(nil, g, nil)
	before := liveHeap()
	fresh := Decode(data)
	freshLoad := liveHeap() - before
	runtime.KeepAlive(fresh)
	runtime.KeepAlive(g)

	t.Logf("%d writes: heap %d KiB; the same graph decoded from its file: %d KiB (file %d KiB)", writes, grown>>10, freshLoad>>10, len(data)>>10)
	if limit := 2*freshLoad + 1<<20; grown > limit {
		t.Errorf("after %d writes the graph holds %d KiB, decoded fresh %d KiB: want at most %d KiB", writes, grown>>10, freshLoad>>10, limit>>10)
	}
}
