//go:build !windows

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgcluster"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

const (
	boundsWriter = "bounds-writer-0123456789abcdef"
	boundsReader = "bounds-reader-0123456789abcdef"
)

// startNamedOnDatabase runs the binary serving named memories from the
// database at url, with the extra environment env, and returns its base
// URL.
func startNamedOnDatabase(t *testing.T, url string, env ...string) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(boundsWriter+" alpha write\n"+boundsReader+" * read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens)
	cmd.Env = append(os.Environ(), append([]string{"MEMORY_DATABASE_URL=" + url, "MEMORY_HTTP_TOKEN=", "MEMORY_FILE_PATH="}, env...)...)
	stderr := startChild(t, cmd).stderr
	return "http://" + waitLog(t, stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
}

// mcpSession connects to memory at base with token, at version.
func mcpSession(t *testing.T, base, memory, version, token string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp/" + memory, HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bounds", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("%s: %v", memory, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool with a deadline and returns its text, and whether
// it is a tool error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return toolText(res), res.IsError
}

func entityArgs(name string) map[string]any {
	return map[string]any{"entities": []any{map[string]any{"name": name, "entityType": "test", "observations": []string{}}}}
}

// TestNamedReadsCreateNoRowsBinary: a read token reading many memory
// names nobody wrote gets empty memories and creates no row; the first
// write to a memory creates its row.
func TestNamedReadsCreateNoRowsBinary(t *testing.T) {
	url := pgtest.URL(t)
	base := startNamedOnDatabase(t, url)
	prefix := pgtest.MemoryName(t)
	for i := range 40 {
		cs := mcpSession(t, base, fmt.Sprintf("%s-%d", prefix, i), []string{"2025-11-25", "2026-07-28"}[i%2], boundsReader)
		if text, isErr := callTool(t, cs, "read_graph", map[string]any{}); isErr || strings.Contains(text, `"name"`) {
			t.Fatalf("reading a memory nobody wrote: %v %s", isErr, text)
		}
		cs.Close()
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM memories WHERE name LIKE $1", prefix+"-%").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("reads created %d memory rows", rows)
	}
}

// clusterProcesses returns the pids of a cluster's postmaster and of its
// children (the backends, the background workers).
func clusterProcesses(t *testing.T, c *pgcluster.Cluster) []int {
	t.Helper()
	pidFiles, _ := filepath.Glob(filepath.Join(c.Dir, "*", "postmaster.pid"))
	if len(pidFiles) != 1 {
		t.Fatalf("postmaster.pid files: %v", pidFiles)
	}
	data, err := os.ReadFile(pidFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	postmaster, err := strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{postmaster}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, not ")".
		_, rest, ok := strings.Cut(string(b), ") ")
		fields := strings.Fields(rest)
		if !ok || len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == postmaster {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(stat)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestNamedMemoriesSurviveAHungDatabaseBinary: with PostgreSQL stopped
// (SIGSTOP), requests for memories not open yet hang only themselves: the
// page of a memory already open is served meanwhile. A write fails by its
// deadline, saying nothing was written (or that whether it was is
// unknown), and a read fails by its own; once the database runs again,
// both work, and the failed write is not there.
func TestNamedMemoriesSurviveAHungDatabaseBinary(t *testing.T) {
	pgtest.URL(t) // skips where there is no PostgreSQL
	c, err := pgcluster.Start(context.Background(), pgcluster.Options{Fast: true})
	if err != nil {
		t.Fatalf("a private cluster: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	base := startNamedOnDatabase(t, c.URL, "MCP_SERVER_MEMORY_DB_WRITE_TIMEOUT=2s", "MCP_SERVER_MEMORY_DB_READ_TIMEOUT=4s")

	writer := mcpSession(t, base, "alpha", "2026-07-28", boundsWriter)
	if text, isErr := callTool(t, writer, "create_entities", entityArgs("before")); isErr {
		t.Fatal(text)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	get := func(path, token string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	if code, _, err := get("/page/alpha/app.js", boundsWriter); err != nil || code != http.StatusOK {
		t.Fatalf("alpha's page before: %d %v", code, err)
	}

	pids := clusterProcesses(t, c)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGCONT)
			}
		}
	}
	t.Cleanup(resume)

	// Four memories nobody opened yet: each hangs on the database.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			code, body, err := get(fmt.Sprintf("/page/new-%d/", i), boundsReader)
			if err == nil && code == http.StatusOK {
				t.Errorf("memory new-%d opened on a stopped database: %s", i, body)
			}
		})
	}
	// Meanwhile alpha, open already, serves its page.
	if code, body, err := get("/page/alpha/app.js", boundsWriter); err != nil || code != http.StatusOK {
		t.Errorf("alpha's page while other memories hang: %d %v %.100s", code, err, body)
	}
	text, isErr := callTool(t, writer, "create_entities", entityArgs("during"))
	if !isErr || !strings.Contains(text, "did not answer in time") || !strings.Contains(text, "nothing was written") && !strings.Contains(text, "unknown") {
		t.Errorf("a write to a stopped database: %v %q, want a tool error saying it timed out and whether it was saved", isErr, text)
	}
	nothingWritten := strings.Contains(text, "nothing was written")
	text, isErr = callTool(t, writer, "read_graph", map[string]any{})
	if !isErr || !strings.Contains(text, "did not answer in time") {
		t.Errorf("a read of a stopped database: %v %q, want a tool error saying it timed out", isErr, text)
	}
	wg.Wait()

	resume()
	if text, isErr := callTool(t, writer, "create_entities", entityArgs("after")); isErr {
		t.Errorf("a write once the database runs again: %s", text)
	}
	text, isErr = callTool(t, writer, "read_graph", map[string]any{})
	if isErr || !strings.Contains(text, `"before"`) || !strings.Contains(text, `"after"`) {
		t.Errorf("alpha once the database runs again: %v %s", isErr, text)
	}
	if nothingWritten && strings.Contains(text, `"during"`) {
		t.Errorf("a write that said nothing was written landed: %s", text)
	}
}
