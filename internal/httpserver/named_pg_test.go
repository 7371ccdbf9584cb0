//go:build !windows

package httpserver_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

func init() { runTests = pgtest.Main }

// TestNamedMemoriesInPostgreSQL: named memories kept in one database, as
// with MEMORY_DATABASE_URL. Two memories stay apart, a read token changes
// nothing, and a refused name gets no row.
func TestNamedMemoriesInPostgreSQL(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := pgstore.Connect(ctx, url, pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	a, b, refused := pgtest.MemoryName(t), pgtest.MemoryName(t), pgtest.MemoryName(t)
	tokens := tokTwo + " " + a + "," + b + " write\n" + tokRead + " " + a + "," + b + " read\n" + tokAlpha + " " + refused + "x write\n"
	ns := startNamedWith(t, tokens, func(ctx context.Context, name string) (httpserver.Memory, error) {
		store, err := db.Memory(ctx, name)
		if err != nil {
			return httpserver.Memory{}, err
		}
		m := memoryOf(store, name, t.Logf)
		m.Exists = store.Exists
		return m, nil
	})
	readGraph := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("read_graph: %v %v", err, res)
		}
		return text(res.Content)
	}
	for _, version := range generations {
		if err := createEntity(ctx, connect(t, ns.url(a), version, tokTwo, nil), "in-a-"+version); err != nil {
			t.Fatal(err)
		}
		reader := connect(t, ns.url(a), version, tokRead, nil)
		if g := readGraph(reader); !strings.Contains(g, "in-a-"+version) {
			t.Errorf("%s: a's reader does not see the write: %s", version, g)
		}
		if err := createEntity(ctx, reader, "by-reader"); err == nil || !strings.Contains(err.Error(), "this token may only read memory "+a) {
			t.Errorf("%s: the reader's write: %v", version, err)
		}
		if g := readGraph(connect(t, ns.url(b), version, tokRead, nil)); strings.Contains(g, "in-a-") {
			t.Errorf("%s: b holds a's entity: %s", version, g)
		}
	}
	if g := readGraph(connect(t, ns.url(a), modern, tokRead, nil)); strings.Contains(g, "by-reader") {
		t.Errorf("a read token wrote: %s", g)
	}
	for _, token := range []string{tokTwo, tokRead, tokAlpha} {
		if code, _ := rawStatus(t, ns.addr, "/mcp/"+refused, "Bearer "+token); code != http.StatusForbidden {
			t.Errorf("an ungranted memory: %d, want 403", code)
		}
	}
	names, err := db.Memories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, refused) {
		t.Errorf("a refused memory got a row: %v", names)
	}
	// b was only read: a memory nobody wrote gets no row.
	if !slices.Contains(names, a) || slices.Contains(names, b) {
		t.Errorf("memories %v, want %s and not %s among them", names, a, b)
	}
}

// TestNamedPageInPostgreSQL: a memory's page on the database hears another
// replica's write (LISTEN/NOTIFY) and the writes of the memory's MCP
// clients; a read token's edit on the page changes nothing.
func TestNamedPageInPostgreSQL(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	connectDB := func() *pgstore.DB {
		db, err := pgstore.Connect(ctx, url, pgstore.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		return db
	}
	db, replica := connectDB(), connectDB()
	a := pgtest.MemoryName(t)
	ns := startNamedWith(t, tokTwo+" "+a+" write\n"+tokRead+" "+a+" read\n", func(ctx context.Context, name string) (httpserver.Memory, error) {
		store, err := db.Memory(ctx, name)
		if err != nil {
			return httpserver.Memory{}, err
		}
		return memoryOf(store, name, t.Logf), nil
	})
	changes := pageEvents(t, ns, a, tokRead)
	heard := func(what string) {
		t.Helper()
		select {
		case <-changes:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not reach the page", what)
		}
	}
	if err := createEntity(ctx, connect(t, ns.url(a), modern, tokTwo, nil), "by-mcp"); err != nil {
		t.Fatal(err)
	}
	heard("an MCP client's write")
	other, err := replica.Memory(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "by-replica", EntityType: "t", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	heard("another replica's write")
	resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath(a, "api/search?q=by-"), "", "Authorization", "Bearer "+tokRead)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"by-replica"`) || !strings.Contains(body, `"by-mcp"`) {
		t.Errorf("the page's search: %d %s", resp.StatusCode, body)
	}
	if resp, body := pageEdit(t, ns, a, "by-reader", "Authorization", "Bearer "+tokRead); resp.StatusCode != http.StatusForbidden || apiError(t, body) != "this token may only read memory "+a {
		t.Errorf("the reader's edit: %d %s", resp.StatusCode, body)
	}
	var names []string
	if err := other.View(context.Background(), func(g *graph.Graph) error {
		for _, e := range g.Entities() {
			names = append(names, e.Name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names, "by-reader") {
		t.Errorf("the reader's refused edit is in the memory: %v", names)
	}
	// A page nobody was granted opens no memory: no row.
	ungranted := pgtest.MemoryName(t)
	for _, token := range []string{tokTwo, tokRead} {
		if resp, _ := rawRequest(t, ns.addr, http.MethodGet, pagePath(ungranted, "?token="+token), ""); resp.StatusCode != http.StatusForbidden {
			t.Errorf("an ungranted memory's page: %d, want 403", resp.StatusCode)
		}
	}
	memories, err := db.Memories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(memories, ungranted) || !slices.Contains(memories, a) {
		t.Errorf("memories %v: want %s, and not the ungranted %s", memories, a, ungranted)
	}
}
