package meaning

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// TestBackfillReportsProgressAndStops: Backfill says how far it has come
// before the first batch and after each; an error from progress stops it
// there with the batches done kept, and a second Backfill finishes. Count
// reads what the file holds without an Index.
func TestBackfillReportsProgressAndStops(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	path := filepath.Join(t.TempDir(), "memory.jsonl.vectors")
	if have, want, err := Count(FileStorage(path), "m", store.View); have != 0 || want != 5 || err != nil {
		t.Fatalf("Count before: %d of %d, %v; want 0 of 5", have, want, err)
	}
	stop := errors.New("stop")
	var seen [][2]int
	err := open(t, path, stub, "m").Backfill(context.Background(), store, func(have, want int) error {
		seen = append(seen, [2]int{have, want})
		if len(seen) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Backfill stopped by progress: %v", err)
	}
	if len(seen) != 2 || seen[0] != [2]int{0, 5} || seen[1] != [2]int{2, 5} {
		t.Errorf("progress %v, want [[0 5] [2 5]] (batches of 2)", seen)
	}
	if have, _, err := Count(FileStorage(path), "m", store.View); have != 2 || err != nil {
		t.Errorf("Count after the stop: %d, %v; want the 2 of the batch done", have, err)
	}
	seen = nil
	if err := open(t, path, stub, "m").Backfill(context.Background(), store, func(have, want int) error {
		seen = append(seen, [2]int{have, want})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if last := seen[len(seen)-1]; last != [2]int{5, 5} {
		t.Errorf("the second Backfill ended at %v, want [5 5]", last)
	}
	if n := len(stub.Texts("m")); n != 5 {
		t.Errorf("the stub embedded %d texts, want each of the 5 once", n)
	}
	if have, want, err := Count(FileStorage(path), "m", store.View); have != 5 || want != 5 || err != nil {
		t.Errorf("Count after: %d of %d, %v", have, want, err)
	}
}

// TestEndpointHidesTheCredentials: the endpoint a note names carries no
// user or password the configured URL holds.
func TestEndpointHidesTheCredentials(t *testing.T) {
	c := NewClient("http://user:secret@example.test/v1", "m", "")
	if got := c.Endpoint(); got != "http://example.test/v1" {
		t.Errorf("Endpoint = %q, want http://example.test/v1", got)
	}
	ix := OpenStorage(FileStorage(filepath.Join(t.TempDir(), "v")), c, Options{})
	if got := ix.Endpoint(); got != "http://example.test/v1" {
		t.Errorf("Index.Endpoint = %q", got)
	}
	if down, why := ix.Down(); down || why != "" {
		t.Errorf("a new Index is down: %q", why)
	}
}
