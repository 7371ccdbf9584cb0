//go:build !windows

package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

func init() { runTests = pgtest.Main }

// databaseURL returns the test database's URL and a password it carries
// that no output may show ("" when the database is the caller's, whose URL
// the test leaves alone).
func databaseURL(t *testing.T) (url, password string) {
	t.Helper()
	return pgtest.URLWithPassword(t, "page-password-not-for-output")
}

// openDatabaseMemory opens memory name in the database, as another replica.
func openDatabaseMemory(t *testing.T, url, name string) *pgstore.Store {
	t.Helper()
	return pgtest.Open(t, url, name, pgstore.Options{})
}

// TestPageOnDatabaseBinary: with MEMORY_DATABASE_URL, --http serves the
// memory's page at / behind the HTTP token, and its edits land in the
// memory "default" in the database; nothing names the password.
func TestPageOnDatabaseBinary(t *testing.T) {
	url, password := databaseURL(t)
	const token = "page-token-0123456789abcdef"
	unused := filepath.Join(t.TempDir(), "unused.jsonl")
	cmd := exec.Command(binary, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+url, "MEMORY_HTTP_TOKEN="+token, "MEMORY_FILE_PATH="+unused)
	stderr := startChild(t, cmd).stderr
	base := waitLog(t, stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory "default" in PostgreSQL database`))[1]

	// Without the token: nothing.
	for _, target := range []string{"/", "/app.js", "/api/stats", "/?token=wrong"} {
		if status, _, _ := pageCall(t, "GET", base+target, ""); status != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", target, status)
		}
	}
	if status, _, _ := pageCall(t, "POST", base+"/api/edit", `{"op":"deleteEntity","entity":"x"}`); status != http.StatusUnauthorized {
		t.Errorf("POST /api/edit without the token: %d, want 401", status)
	}
	// A first visit with ?token= sets the cookie, which opens the page.
	status, _, hdr := pageCall(t, "GET", base+"/?token="+token, "")
	cookie := strings.Split(hdr.Get("Set-Cookie"), ";")[0]
	if status != http.StatusSeeOther || cookie == "" {
		t.Fatalf("first visit with the token: %d, cookie %q", status, cookie)
	}
	if status, _, hdr := pageCall(t, "GET", base+"/", "", "Cookie", cookie); status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Errorf("GET / with the cookie: %d %s", status, hdr.Get("Content-Type"))
	}
	_, key, _ := strings.Cut(hdr.Get("Location"), "#key=")
	status, stats, _ := pageCall(t, "GET", base+"/api/stats", "", "Cookie", cookie, "X-Memory-Page-Key", key)
	where, _ := stats["where"].(string)
	if status != http.StatusOK || !strings.HasPrefix(where, `memory "default" in PostgreSQL database`) || password != "" && strings.Contains(where, password) {
		t.Errorf("GET /api/stats: %d, where %q", status, where)
	}

	// An edit with the bearer token lands in the database. The memory
	// "default" may be shared with other tests: a name of its own.
	name, heard := "page-"+pgtest.MemoryName(t), "page-"+pgtest.MemoryName(t)
	db := openDatabaseMemory(t, url, "default")
	t.Cleanup(func() {
		db.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error { g.DeleteEntities([]string{name, heard}); return nil }})
	})
	status, answer, _ := pageCall(t, "POST", base+"/api/edit", `{"op":"createEntity","entity":"`+name+`","entityType":"test"}`, "Authorization", "Bearer "+token)
	if status != http.StatusOK {
		t.Fatalf("creating an entity through the page: %d %v", status, answer)
	}
	db.View(context.Background(), func(g *graph.Graph) error {
		if g.Entity(name) == nil {
			t.Errorf("the entity created through the page is not in the database")
		}
		return nil
	})
	pageAndMCPHearEachOther(t, base, base+"/mcp", token, heard)
	if _, err := os.Stat(unused); err == nil {
		t.Errorf("the server wrote %s, though the memory is in the database", unused)
	}
	if password != "" && strings.Contains(stderr.String(), password) {
		t.Errorf("the log shows the password")
	}
}

// TestUICommandOnDatabase: `mcp-server-memory ui --memory NAME` with
// MEMORY_DATABASE_URL serves the page of that memory: it says where the
// memory is, searches it, and its edits land in the database. Ctrl-C
// stops it.
func TestUICommandOnDatabase(t *testing.T) {
	url, password := databaseURL(t)
	name := pgtest.MemoryName(t)
	db := openDatabaseMemory(t, url, name)
	const memory = `{"type":"entity","name":"東京","entityType":"都市","observations":["日本の首都"]}
{"type":"entity","name":"Москва","entityType":"город","observations":["Столица России"]}
`
	if err := db.Import(context.Background(), jsonl.Decode([]byte(memory)).Graph, nil, false); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(binary, "ui", "--no-open", "--memory", name)
	cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+url, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "unused.jsonl"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ui := startChild(t, cmd)
	var printed strings.Builder
	pageURL := ""
	for lines := bufio.NewScanner(out); pageURL == "" && lines.Scan(); {
		printed.WriteString(lines.Text() + "\n")
		if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "http://"); ok {
			pageURL = "http://" + u
		}
	}
	if pageURL == "" {
		t.Fatalf("no address printed:\n%s", printed.String())
	}
	if want := `Your memory (memory "` + name + `" in PostgreSQL database `; !strings.HasPrefix(printed.String(), want) || password != "" && strings.Contains(printed.String(), password) {
		t.Errorf("ui printed %q, want it to start %q (and no password)", printed.String(), want)
	}

	status, found, _ := pageCall(t, "GET", pageURL+"api/search?q="+neturl.QueryEscape("首都"), "")
	hits, _ := found["hits"].([]any)
	if status != http.StatusOK || len(hits) != 1 || hits[0].(map[string]any)["name"] != "東京" {
		t.Errorf("search 首都: %d %v", status, found)
	}
	status, answer, _ := pageCall(t, "POST", pageURL+"api/edit", `{"op":"addObservation","entity":"Москва","observation":"Основана в 1147 году"}`)
	if status != http.StatusOK {
		t.Fatalf("adding an observation: %d %v", status, answer)
	}
	db.View(context.Background(), func(g *graph.Graph) error {
		if e := g.Entity("Москва"); e == nil || !slices.Contains(e.Observations, "Основана в 1147 году") {
			t.Errorf("the observation added through the page is not in the database: %v", e)
		}
		return nil
	})

	ui.stop(t, syscall.SIGINT)
}

// TestServeDatabaseMemoryByName: --memory NAME serves that memory of the
// database over stdio, and leaves the others alone.
func TestServeDatabaseMemoryByName(t *testing.T) {
	url, password := databaseURL(t)
	name := pgtest.MemoryName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "--memory", name)
	cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+url, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "unused.jsonl"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
		"entities": []any{map[string]any{"name": "Named", "entityType": "test", "observations": []string{"in " + name}}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing the server: %v", err)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("serving MCP on stdio; memory %q in PostgreSQL database", name)) {
		t.Errorf("the server does not say which memory it serves:\n%s", stderr.String())
	}
	if password != "" && strings.Contains(stderr.String(), password) {
		t.Errorf("the log shows the password:\n%s", stderr.String())
	}
	var found bool
	if err := openDatabaseMemory(t, url, name).View(context.Background(), func(g *graph.Graph) error { found = g.Entity("Named") != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Errorf("memory %s does not hold what the server wrote", name)
	}
	if err := openDatabaseMemory(t, url, "default").View(context.Background(), func(g *graph.Graph) error { found = g.Entity("Named") != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if found {
		t.Error("the memory default holds what was written to another memory")
	}
}
