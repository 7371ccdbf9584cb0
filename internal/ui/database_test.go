//go:build !windows

package ui

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// The page on a memory in PostgreSQL (docs/design.md §11), as --http and
// `mcp-server-memory ui` serve it with MEMORY_DATABASE_URL set. These tests
// skip when no PostgreSQL can be had, except in CI, where they fail (see
// pgtest).

func init() { runTests = pgtest.Main }

// databaseMemory returns an opener of a new memory in the test database
// holding memory; each call connects anew, as another replica would.
func databaseMemory(t *testing.T, memory string, lockTimeout time.Duration) func() *pgstore.Store {
	t.Helper()
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	open := func() *pgstore.Store {
		t.Helper()
		return pgtest.Open(t, url, name, pgstore.Options{LockTimeout: lockTimeout})
	}
	if err := open().Import(context.Background(), jsonl.Decode([]byte(memory)).Graph, nil, false); err != nil {
		t.Fatal(err)
	}
	return open
}

// where names a database memory as the commands and the server do.
func where(t *testing.T, s *pgstore.Store) string {
	t.Helper()
	d, err := pgstore.Describe(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("memory %q in %s", s.Name(), d)
}

// observations returns entity's observations as another replica reads them.
func observations(t *testing.T, s *pgstore.Store, entity string) []string {
	t.Helper()
	var obs []string
	if err := s.View(func(g *graph.Graph) {
		if e := g.Entity(entity); e != nil {
			obs = slices.Clone(e.Observations)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestPageOnDatabaseInChromium: search, edit and live updates on a memory
// in PostgreSQL, the edits landing in the database and another replica's
// writes appearing without a reload.
func TestPageOnDatabaseInChromium(t *testing.T) {
	open := databaseMemory(t, seedMemory, 2*time.Second)
	ctx := browser(t)
	page, replica := open(), open()
	srv := serveStore(t, page, where(t, page))

	do(t, ctx, "open the page", chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the list of entities", textHas("#count", "5 entities"))
	waitFor(t, ctx, "where the memory is", textHas("#stats", fmt.Sprintf("in memory %q in PostgreSQL database", page.Name())))

	// Search as you type, in Japanese and in Russian, as on a file.
	do(t, ctx, "search in Japanese", typeInto("#q", "首都")...)
	waitFor(t, ctx, "the Japanese match", `document.querySelectorAll("#hits li").length === 1 && `+textHas("#hits", "東京"))
	do(t, ctx, "search in Russian", typeInto("#q", "столица")...)
	waitFor(t, ctx, "the Russian match", `document.querySelectorAll("#hits li").length === 1 && `+textHas("#hits", "Москва"))
	do(t, ctx, "open Москва", click("#hits a"))
	waitFor(t, ctx, "the entity page", `document.querySelector("#ename").textContent === "Москва"`)
	waitFor(t, ctx, "its relations both ways", textHas("#rels", "← visited Alice")+" && "+textHas("#rels", "← has_office_in Acme"))

	// An edit lands in the database: another replica reads it.
	added := "Основана в 1147 году — 1147年に創設"
	do(t, ctx, "add an observation", append(typeInto("#addObs input", added), click("#addObs button"))...)
	waitFor(t, ctx, "the new observation", textHas("#obs", added))
	if obs := observations(t, replica, "Москва"); !slices.Contains(obs, added) {
		t.Errorf("another replica reads Москва's observations as %q, without the added one", obs)
	}

	// A write through another replica appears without a reload.
	if _, err := replica.Update(context.Background(), func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Москва", Contents: []string{"Добавлено другой репликой"}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the other replica's observation", textHas("#obs", "Добавлено другой репликой"))

	// Rename: relations follow, in the database too.
	do(t, ctx, "rename", click("#renameBtn"))
	do(t, ctx, "type the new name", append(typeInto("#renameForm input", "Москва (столица)"), click("#renameForm button"))...)
	waitFor(t, ctx, "the new name", `document.querySelector("#ename").textContent === "Москва (столица)"`)
	var visited bool
	replica.View(func(g *graph.Graph) {
		out, _ := g.RelationsOf("Alice")
		for _, r := range out {
			visited = visited || r.To == "Москва (столица)" && r.RelationType == "visited"
		}
	})
	if !visited {
		t.Errorf("the relation did not follow the rename in the database")
	}
	do(t, ctx, "laptop", chromedp.EmulateViewport(1280, 800))
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "database.png"), 1280, 800)

	// A database memory keeps the history of its writes in its table: the
	// home view plots the writes per day, today's among them, and lists
	// the rename, which removed the entity under its old name.
	do(t, ctx, "home", chromedp.Navigate(srv.URL+"#"))
	waitFor(t, ctx, "the writes per day", textHas("#learnedTitle", "Writes per day")+
		` && +document.querySelector("#perDay g.day:last-of-type")?.dataset.count >= 1`)
	waitFor(t, ctx, "the rename", textHas("#deletedList", "page · renamed Москва to Москва (столица)")+
		` && document.querySelector("#deletedList li").title.startsWith("− entity Москва (город)")`)
}

// TestDatabaseEditWaitsForTheLock: an edit while another replica holds the
// memory's lock past the lock timeout is answered as on a file (503,
// nothing changed), and changes nothing.
func TestDatabaseEditWaitsForTheLock(t *testing.T) {
	open := databaseMemory(t, seedMemory, 300*time.Millisecond)
	page, replica := open(), open()
	h := NewHandler(page, where(t, page), Options{Secret: secret, Logf: t.Logf})

	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := replica.Update(context.Background(), func(*graph.Graph) error {
			close(holding)
			<-release
			return nil
		})
		done <- err
	}()
	<-holding
	a := call(t, h, "POST", "/"+secret+"/api/edit", `{"op":"deleteEntity","entity":"Alice"}`)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msg, _ := a.body["error"].(string)
	if a.status != http.StatusServiceUnavailable || !strings.HasPrefix(msg, "Nothing was changed: timed out waiting for the memory's lock in PostgreSQL") {
		t.Errorf("edit under a held lock: %d %q", a.status, msg)
	}
	if obs := observations(t, replica, "Alice"); len(obs) != 3 {
		t.Errorf("Alice after a refused delete: %q", obs)
	}
	// Once the lock is free, the same edit goes through.
	if a := call(t, h, "POST", "/"+secret+"/api/edit", `{"op":"deleteEntity","entity":"Alice"}`); a.status != http.StatusOK {
		t.Errorf("edit after the lock was released: %d %v", a.status, a.body)
	}
	if obs := observations(t, replica, "Alice"); obs != nil {
		t.Errorf("Alice is still in the database: %q", obs)
	}
}
