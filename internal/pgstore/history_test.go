package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// Each write is recorded in the history table in its own transaction, with
// the tool and client its context carries; the history reads back newest
// first, filtered; undo is a recorded write like any other.
func TestHistoryTable(t *testing.T) {
	s := openMemory(t)(t)
	write := func(tool, client string, fn func(g *graph.Graph)) {
		t.Helper()
		c := history.WithAuthor(ctx, history.Author{Tool: tool, Client: client})
		if _, err := s.Update(c, func(g *graph.Graph) error { fn(g); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	write("create_entities", "Claude", func(g *graph.Graph) {
		g.CreateEntities([]graph.Entity{{Name: "Alice", EntityType: "person", Observations: []string{"tea"}}, {Name: "Bob", EntityType: "person"}})
	})
	write("create_relations", "Claude", func(g *graph.Graph) {
		g.CreateRelations([]graph.Relation{{From: "Alice", To: "Bob", RelationType: "knows"}})
	})
	write("delete_entities", "Cursor", func(g *graph.Graph) { g.DeleteEntities([]string{"Alice"}) })
	if changed, err := s.Update(ctx, func(g *graph.Graph) error { return nil }); changed || err != nil {
		t.Fatal(changed, err)
	}
	recs, err := s.History(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Tool+"/"+r.Client+": "+history.Summary(r.Changes))
	}
	want := []string{
		"delete_entities/Cursor: − entity Alice (person), 1 observation, 1 relation",
		"create_relations/Claude: + relation Alice knows Bob",
		"create_entities/Claude: + entity Alice (person), 1 observation; + entity Bob (person), 0 observations",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history\n%q\nwant\n%q", got, want)
	}
	if byClient, _ := s.History(history.Filter{Client: "Cursor"}); len(byClient) != 1 {
		t.Errorf("by client: %d records", len(byClient))
	}
	write("undo", "", func(g *graph.Graph) { history.Undo(g, recs[:1]) })
	if d := dump(t, s); !strings.Contains(d, "Alice") || !strings.Contains(d, "knows") {
		t.Errorf("after the undo: %s", d)
	}
	if recs, _ := s.History(history.Filter{Entity: "Alice"}); len(recs) != 4 || recs[0].Tool != "undo" {
		t.Errorf("Alice's history: %d records, newest %q", len(recs), recs[0].Tool)
	}
}

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
