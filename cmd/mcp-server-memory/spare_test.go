package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
)

// heldSpares reports how many callers hold a spare processor now.
func heldSpares() int {
	spare.Lock()
	defer spare.Unlock()
	return spare.n
}

// TestSpareProcessor checks that the process runs with one processor more
// while any caller holds it, and as before once every caller restored.
func TestSpareProcessor(t *testing.T) {
	if heldSpares() > 0 {
		t.Skip("a server of another test holds a spare processor")
	}
	before := runtime.GOMAXPROCS(0)
	first := spareProcessor()
	second := spareProcessor()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("GOMAXPROCS %d while held, want %d", got, before+1)
	}
	first()
	first() // twice is once
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Fatalf("GOMAXPROCS %d while one caller still holds it, want %d", got, before+1)
	}
	second()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS %d after, want %d", got, before)
	}
}

// TestSpareProcessorLeavesTheUsersChoice: GOMAXPROCS in the environment
// is the user's.
func TestSpareProcessorLeavesTheUsersChoice(t *testing.T) {
	t.Setenv("GOMAXPROCS", "1")
	before := runtime.GOMAXPROCS(0)
	restore := spareProcessor()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d with the variable set, want %d", got, before)
	}
	restore()
}

// TestBuildIndexesPutsBackTheRuntime runs the background build the server
// runs (buildIndexes) on a memory file and checks that, once stopped, the
// process's processors and collector goal are what they were: the spare
// processor and the heap goal last only while it runs.
func TestBuildIndexesPutsBackTheRuntime(t *testing.T) {
	if heldSpares() > 0 {
		t.Skip("a server of another test holds a spare processor")
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	line := `{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filestore.Open(path, filestore.Options{})
	defer store.Close()
	procs := runtime.GOMAXPROCS(0)
	goal := debug.SetGCPercent(150) // not the heap goal's choice for a small heap (100)
	defer debug.SetGCPercent(goal)
	stop := buildIndexes(context.Background(), store, t.Logf)
	for deadline := time.Now().Add(10 * time.Second); gogc() != 100; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("GOGC %d while the build runs, want the heap goal's 100", gogc())
		}
	}
	stop()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after the build, want %d", got, procs)
	}
	if got := gogc(); got != 150 {
		t.Errorf("GOGC %d after the build, want the 150 it found", got)
	}
	if n := heldSpares(); n != 0 {
		t.Errorf("%d spare processors still held", n)
	}
}

// gogc reads the collector's goal (GOGC) without changing it.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}
