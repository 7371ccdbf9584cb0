package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// heapInUse returns the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A server runs for days inside a desktop client, one small write after
// another: what it holds after many writes must be what a fresh load of
// the same file holds, plus a small constant, not a little more per write.
// Each save here is a real one (fsync included), so the count stays in the
// hundreds; internal/jsonl's test of the same name makes thousands.
func TestManyWritesKeepTheHeapFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of saves")
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := quietStore(path)
	ctx := context.Background()
	base := heapInUse()

	// Past this the heap grows by far more than the file ever could: stop
	// early rather than let a leak eat the machine.
	const runaway = 64 << 20
	const writes = 600
	for i := range writes {
		_, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			if i%2 == 0 {
				g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("entity %d", i), EntityType: "thing", Observations: []string{"first"}}})
				return nil
			}
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: fmt.Sprintf("entity %d", i-1), Contents: []string{fmt.Sprintf("observation %d", i)}}})
			return err
		}})
		if err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			if grown := heapInUse() - base; grown > runaway {
				t.Fatalf("after %d writes the heap grew by %d MiB (%d KiB a write)", i+1, grown>>20, grown/int64(i+1)>>10)
			}
		}
	}
	afterWrites := heapInUse() - base

	// A fresh Store loading the same file: what the graph itself costs.
	before := heapInUse()
	fresh := quietStore(path)
	if err := fresh.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
		t.Fatal(err)
	}
	freshLoad := heapInUse() - before
	runtime.KeepAlive(fresh)
	runtime.KeepAlive(s)

	t.Logf("%d writes: heap %d KiB; a fresh load of the same file: %d KiB", writes, afterWrites>>10, freshLoad>>10)
	if limit := 2*freshLoad + 1<<20; afterWrites > limit {
		t.Errorf("after %d writes the store holds %d KiB, a fresh load of the same file %d KiB: want at most %d KiB", writes, afterWrites>>10, freshLoad>>10, limit>>10)
	}
}

// gcCycles counts the collections the runtime has finished.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Reading a big memory makes almost no garbage, so collections while it
// is read would only mark the graph read so far again and again: a file
// of tens of megabytes is read with the collector off, and the
// collector is on again after the first collection.
func TestABigFileIsReadWithoutCollections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	var b bytes.Buffer
	obs := strings.Repeat("a long observation that says much ", 30)
	for i := 0; b.Len() < 20<<20; i++ {
		fmt.Fprintf(&b, `{"type":"entity","name":"entity %d","entityType":"thing","observations":["%s %d"]}`+"\n", i, obs, i)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Buffer{}
	s := quietStore(path)
	runtime.GC()
	before := gcCycles()
	if err := s.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := gcCycles() - before; n > 0 {
		t.Errorf("%d collections while a 20 MB file was read, want none", n)
	}
	// The first collection after the read turns the collector on again.
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(time.Millisecond)
		percent := debug.SetGCPercent(100)
		debug.SetGCPercent(percent)
		if percent >= 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the read and a collection the collector is off (GOGC %d)", percent)
		}
	}
}
