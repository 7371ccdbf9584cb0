//go:build !windows

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// pageCall is one request to the page's API and its answer.
func pageCall(t *testing.T, method, target, body string, header ...string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", req.URL.Scheme+"://"+req.URL.Host) // as the page's own fetch
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s: bad JSON %q", method, target, b)
		}
	}
	return resp.StatusCode, v, resp.Header
}

// TestPageAndMCPHearEachOther: under --http the MCP server and the web page
// share the memory, so each hears the other's writes: an assistant's write
// appears on the open page, and an edit on the page reaches the MCP
// clients' subscriptions: the store's Watch reports every write.
func TestPageAndMCPHearEachOther(t *testing.T) {
	const token = "page-token-0123456789abcdef"
	cmd := exec.Command(binary, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"), "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")
	stderr := startChild(t, cmd).stderr
	base := waitLog(t, stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]
	pageAndMCPHearEachOther(t, base, base+"/mcp", token, "heard")
}

// openPageEvents opens the live-update stream of the page at base, until
// ctx ends.
func openPageEvents(ctx context.Context, t *testing.T, base, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/events: %d", resp.StatusCode)
	}
	return resp
}

// pageAndMCPHearEachOther checks, of the page at base and the MCP endpoint
// at mcpURL of one memory, that a write through MCP (creating the entity
// name) reaches the page's event stream and that an edit on the page
// reaches an MCP subscriber.
func pageAndMCPHearEachOther(t *testing.T, base, mcpURL, token, name string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The page's event stream, as the open page listens.
	resp := openPageEvents(ctx, t, base, token)
	pageEvents := make(chan struct{}, 100)
	connected := make(chan struct{})
	go func() {
		for lines := bufio.NewScanner(resp.Body); lines.Scan(); {
			switch lines.Text() {
			case ": connected":
				close(connected)
			case "event: change":
				pageEvents <- struct{}{}
			}
		}
	}()
	<-connected

	// An MCP client subscribed to the memory.
	updates := make(chan struct{}, 100)
	client := mcp.NewClient(&mcp.Implementation{Name: "page", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updates <- struct{}{} },
	})
	transport := &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "memory://knowledge-graph"}); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not arrive", what)
		}
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
		"entities": []any{map[string]any{"name": name, "entityType": "test", "observations": []string{}}}}})
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %v", err, res)
	}
	wait("the MCP write, on the page's event stream,", pageEvents)
	wait("the subscriber's notice of its own write", updates)

	status, answer, _ := pageCall(t, "POST", base+"/api/edit", `{"op":"addObservation","entity":"`+name+`","observation":"edited on the page"}`, "Authorization", "Bearer "+token)
	if status != http.StatusOK {
		t.Fatalf("editing on the page: %d %v", status, answer)
	}
	wait("the page's edit, at the MCP subscriber,", updates)
}

// TestPageRestoresUnderHTTP: under --http the page reads the memory's
// history through the store it shares with the MCP server: the writes per
// day, an assistant's deletion among the recently deleted, and a restore
// of it that the history records as the page's.
func TestPageRestoresUnderHTTP(t *testing.T) {
	const token = "page-token-0123456789abcdef"
	cmd := exec.Command(binary, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"), "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")
	stderr := startChild(t, cmd).stderr
	base := waitLog(t, stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]
	auth := []string{"Authorization", "Bearer " + token}

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testserver.BearerClient(token), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, call := range []*mcp.CallToolParams{
		{Name: "create_entities", Arguments: map[string]any{"entities": []any{
			map[string]any{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}},
			map[string]any{"name": "Charles", "entityType": "person", "observations": []string{}}}}},
		{Name: "create_relations", Arguments: map[string]any{"relations": []any{map[string]any{"from": "Ada", "to": "Charles", "relationType": "worked with"}}}},
		{Name: "delete_entities", Arguments: map[string]any{"entityNames": []string{"Ada"}}},
	} {
		if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
			t.Fatalf("%s: %v %v", call.Name, err, res)
		}
	}

	status, answer, _ := pageCall(t, "GET", base+"/api/learned", "", auth...)
	if status != http.StatusOK {
		t.Fatalf("GET /api/learned: %d %v", status, answer)
	}
	days := answer["writes"].([]any)
	if today := days[len(days)-1].(map[string]any); today["count"] != 3.0 {
		t.Errorf("today's writes: %v, want 3", today)
	}
	deleted := answer["deleted"].(map[string]any)["records"].([]any)
	if len(deleted) != 1 {
		t.Fatalf("recently deleted: %v", deleted)
	}
	d := deleted[0].(map[string]any)
	if d["tool"] != "delete_entities" || d["client"] != "assistant" || d["restorable"] != true || d["back"] != false {
		t.Errorf("the deletion as the page lists it: %v", d)
	}

	status, answer, _ = pageCall(t, "POST", base+"/api/edit", `{"op":"restore","record":"`+d["id"].(string)+`"}`, auth...)
	if status != http.StatusOK || answer["changed"] != true {
		t.Fatalf("restoring: %d %v", status, answer)
	}
	status, answer, _ = pageCall(t, "GET", base+"/api/entity?name=Ada", "", auth...)
	if status != http.StatusOK || len(answer["out"].([]any)) != 1 {
		t.Fatalf("Ada after the restore: %d %v", status, answer)
	}
	status, answer, _ = pageCall(t, "GET", base+"/api/history?name=Ada", "", auth...)
	if status != http.StatusOK {
		t.Fatalf("GET /api/history: %d %v", status, answer)
	}
	recs := answer["records"].([]any)
	if newest := recs[0].(map[string]any); len(recs) != 4 || newest["tool"] != "page" || recs[1].(map[string]any)["back"] != true {
		t.Errorf("Ada's history after the restore: %v", recs)
	}
}
