package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "first"}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	// Refuse every new history row of the test's tool.
	if _, err := admin(t).Exec(ctx, "ALTER TABLE memory_history ADD CONSTRAINT refuse_test CHECK (tool <> 'refused') NOT VALID"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin(t).Exec(context.Background(), "ALTER TABLE memory_history DROP CONSTRAINT refuse_test") })
	refused := ctx
	for _, n := range []string{"second", "third"} {
		if _, err := s.Update(refused, graph.Write{Tool: "refused", Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: n}})
			return nil
		}}); err != nil {
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

// The history table is trimmed every 100 writes: past MaxBytes the oldest
// rows go until 90 % of it is left, the newest stay; with no history kept
// no row is written and the old ones go.
func TestHistoryTrim(t *testing.T) {
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	lim := history.Limits{MaxAge: time.Hour, MaxBytes: 4000}
	s := pgtest.Open(t, url, name, pgstore.Options{History: &lim})
	for i := range 150 {
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: fmt.Sprint("e", i), EntityType: "t", Observations: []string{strings.Repeat("x", 40)}}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	var rows, size int
	if err := admin(t).QueryRow(ctx, "SELECT count(*), coalesce(sum(size), 0) FROM memory_history h JOIN memories m ON m.id = h.memory_id WHERE m.name = $1", name).Scan(&rows, &size); err != nil {
		t.Fatal(err)
	}
	// Trimmed at the 100th write to 90 %, then 50 more rows.
	if rows == 0 || rows >= 150 {
		t.Errorf("%d rows (%d bytes) after 150 writes with a bound of %d bytes", rows, size, lim.MaxBytes)
	}
	recs, err := s.History(history.Filter{})
	if err != nil || len(recs) != rows || recs[0].Changes[0].Entity.Name != "e149" {
		t.Errorf("history after the trim: %d records, %v; want the newest first", len(recs), err)
	}
	off := pgtest.Open(t, url, name, pgstore.Options{History: &history.Limits{}})
	for i := range 50 {
		if _, err := off.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: fmt.Sprint("f", i), EntityType: "t"}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if recs, err := off.History(history.Filter{}); err != nil || len(recs) != 0 {
		t.Errorf("with no history kept: %d records, %v", len(recs), err)
	}
}

// A record bigger than the bound, written when the table is trimmed, is
// kept (the older rows go), and the log says the bound is exceeded.
func TestHistoryTrimKeepsTheNewest(t *testing.T) {
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	lim := history.Limits{MaxAge: time.Hour, MaxBytes: 4000}
	var mu sync.Mutex
	var logged []string
	s := pgtest.Open(t, url, name, pgstore.Options{History: &lim, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, a...))
	}})
	var names []string
	for i := range 100 {
		obs := "x"
		if i == 99 {
			// The 100th write, when the table is trimmed: a deletion of
			// more than the bound.
			if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { g.DeleteEntities(names); return nil }}); err != nil {
				t.Fatal(err)
			}
			break
		}
		name := fmt.Sprint("e", i, strings.Repeat("y", 60))
		names = append(names, name)
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{obs}}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(history.Filter{})
	if err != nil || len(recs) == 0 || recs[0].Tool != "" || len(recs[0].Changes) != 99 {
		t.Fatalf("history after the trim: %d records, %v; want the mass deletion first", len(recs), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(logged, "\n"), "over its bound of") {
		t.Errorf("logged %q", logged)
	}
}

// A row bigger than Filter.MaxBytes comes by its header, chosen by
// DeletesEntity all the same; the others whole.
func TestHistoryMaxBytes(t *testing.T) {
	s := pgtest.Open(t, pgtest.URL(t), pgtest.MemoryName(t), pgstore.Options{})
	for _, e := range []graph.Entity{{Name: "Big", Observations: []string{strings.Repeat("x", 5000)}}, {Name: "Small"}} {
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{e})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.DeleteEntities([]string{e.Name})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(history.Filter{DeletesEntity: true, MaxBytes: 1000})
	if err != nil || len(recs) != 2 {
		t.Fatalf("%v, %v: want both deletions", recs, err)
	}
	if len(recs[0].Changes) != 1 || recs[0].Changes[0].Entity.Name != "Small" || len(recs[1].Changes) != 0 {
		t.Errorf("newest first: %+v, want Small's whole and Big's by its header", recs)
	}
}
