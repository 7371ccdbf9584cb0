package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// A history that cannot be written never fails or blocks a write: the
// write commits, and the log says so once.
func TestHistoryFailureKeepsTheWrite(t *testing.T) {
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	var mu sync.Mutex
	var logged []string
	s := pgtest.Open(t, url, name, pgstore.Options{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, a...))
	}})
	if _, err := s.Update(ctx, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "first"}})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Refuse every new history row of the test's tool.
	if _, err := admin(t).Exec(ctx, "ALTER TABLE memory_history ADD CONSTRAINT refuse_test CHECK (tool <> 'refused') NOT VALID"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin(t).Exec(context.Background(), "ALTER TABLE memory_history DROP CONSTRAINT refuse_test") })
	refused := history.WithAuthor(ctx, history.Author{Tool: "refused"})
	for _, n := range []string{"second", "third"} {
		if _, err := s.Update(refused, func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: n}})
			return nil
		}); err != nil {
			t.Fatalf("write %s: %v", n, err)
		}
	}
	if d := dump(t, pgtest.Open(t, url, name, pgstore.Options{})); !strings.Contains(d, "second") || !strings.Contains(d, "third") {
		t.Errorf("the writes did not land: %s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !strings.Contains(logged[0], "could not be written (the write was saved") {
		t.Errorf("logged %q, want one line about the history", logged)
	}
	if recs, _ := s.History(history.Filter{}); len(recs) != 1 {
		t.Errorf("%d records, want the first write's only", len(recs))
	}
}
