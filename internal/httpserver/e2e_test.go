package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/testlog"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

const (
	legacy     = "2025-11-25"
	modern     = "2026-07-28"
	resource   = "memory://knowledge-graph"
	testToken  = "test-token-0123456789abcdef"
	watchEvery = 50 * time.Millisecond
)

var generations = []string{legacy, modern}

// testServer is an httpserver.Server serving in this process.
type testServer struct {
	url  string // http://127.0.0.1:PORT/mcp
	base string // http://127.0.0.1:PORT
	file string // the memory file
	logs *testlog.Buffer
	stop func() error // shuts down and returns what Serve returned
}

// startServer serves a fresh memory file (or cfg's file, when given) over
// HTTP on a free loopback port until the test ends: a server of one
// memory, behind cfg's grants (none: everyone's, as without a token).
func startServer(t *testing.T, cfg httpserver.Config, file string) *testServer {
	t.Helper()
	return startPaged(t, cfg, nil, file)
}

// startPaged serves the memory as startServer does, with its web page.
func startPaged(t *testing.T, cfg httpserver.Config, page httpserver.Page, file string) *testServer {
	t.Helper()
	if file == "" {
		file = filepath.Join(t.TempDir(), "memory.jsonl")
	}
	logs := testlog.OnFailure(t, "server log")
	return startServerOn(t, cfg, page, filestore.Open(file, filestore.Options{Logf: logs.Printf}), file, logs)
}

// startServerOn serves store, the memory file file, as startPaged does.
func startServerOn(t *testing.T, cfg httpserver.Config, page httpserver.Page, store graph.Store, file string, logs *testlog.Buffer) *testServer {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Grants == nil {
		cfg.Grants = tokenGrants(t, "")
	}
	cfg.Logf = logs.Printf
	mem := server.New(store, server.Options{Version: "test", WatchInterval: watchEvery, Logf: logs.Printf, HidePaths: []string{file}})
	cfg.Memories = httpserver.One(httpserver.Memory{Server: mem, Page: page})
	hs, err := httpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := testserver.Serve(t, hs)
	base := "http://" + addr
	return &testServer{url: base + "/mcp", base: base, file: file, logs: logs, stop: stop}
}

// tokenGrants are the grants of a server of one memory with token ("":
// none).
func tokenGrants(t *testing.T, token string) access.Source {
	t.Helper()
	g, err := httpserver.SingleGrants(token)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// connect opens a client session at the given protocol version: 2026-07-28
// stateless, 2025-11-25 with an HTTP session.
func connect(t *testing.T, url, version, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: testserver.BearerClient(token),
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "httpserver-test", Version: "1"}, opts).
		Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// createEntity writes one entity through the create_entities tool.
func createEntity(ctx context.Context, cs *mcp.ClientSession, name string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
		"entities": []any{map[string]any{"name": name, "entityType": "test", "observations": []string{"written over HTTP"}}},
	}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("create_entities %s: %s", name, text(res.Content))
	}
	return nil
}

func text(content []mcp.Content) string {
	var b strings.Builder
	for _, c := range content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// entityNames reads the memory file as any client of it would.
func entityNames(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var v struct{ Type, Name string }
		if len(line) > 0 && json.Unmarshal(line, &v) == nil && v.Type == "entity" {
			names[v.Name] = true
		}
	}
	return names
}

func TestToolsAndResource(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			cs := connect(t, ts.url, version, "", nil)
			if hasSession := cs.ID() != ""; hasSession != (version == legacy) {
				t.Errorf("Mcp-Session-Id %q: 2025 clients get a session, 2026 clients none", cs.ID())
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 9 {
				t.Errorf("%d tools, want the nine", len(tools.Tools))
			}
			name := "Alice-" + version
			if err := createEntity(ctx, cs, name); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_nodes", Arguments: map[string]any{"names": []string{name}}})
			if err != nil || res.IsError {
				t.Fatalf("open_nodes: %v %v", err, res)
			}
			if !strings.Contains(text(res.Content), `"name": "`+name+`"`) {
				t.Errorf("open_nodes returned %s, want %s", text(res.Content), name)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resource})
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" || !strings.Contains(read.Contents[0].Text, name) {
				t.Errorf("resource contents %+v, want the graph with %s", read.Contents, name)
			}
			if !entityNames(t, ts.file)[name] {
				t.Errorf("%s is not in the memory file", name)
			}
		})
	}
}

// notifications counts resources/updated notifications for the graph.
type notifications chan struct{}

func (n notifications) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params.URI == resource {
			select {
			case n <- struct{}{}:
			default:
			}
		}
	}}
}

// await reports whether a notification arrives within d.
func (n notifications) await(d time.Duration) bool {
	select {
	case <-n:
		return true
	case <-time.After(d):
		return false
	}
}

// subscribe subscribes cs to the graph. A 2026 subscription is a
// subscriptions/listen stream that lasts until the session closes, so it
// runs in the background.
func subscribe(t *testing.T, cs *mcp.ClientSession, version string) {
	t.Helper()
	if version == legacy {
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: resource}); err != nil {
			t.Fatal(err)
		}
		return
	}
	go cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: resource})
}

// expectNotified runs write until the subscriber hears of it. A 2026 listen
// stream is opened in the background; writes before it is acknowledged go
// unheard, so write is retried for a while.
func expectNotified(t *testing.T, n notifications, what string, write func(i int)) {
	t.Helper()
	for i := range 40 {
		write(i)
		if n.await(250 * time.Millisecond) {
			return
		}
	}
	t.Fatalf("no notifications/resources/updated after %s", what)
}

func TestSubscriptions(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	writer := connect(t, ts.url, modern, "", nil)
	// Another process writing the same file: its own store, no MCP at all.
	other := filestore.Open(ts.file, filestore.Options{Logf: ts.logs.Printf})
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			n := make(notifications, 1)
			cs := connect(t, ts.url, version, "", n.options())
			subscribe(t, cs, version)
			expectNotified(t, n, "another client's write", func(i int) {
				if err := createEntity(context.Background(), writer, fmt.Sprintf("via-http-%s-%d", version, i)); err != nil {
					t.Fatal(err)
				}
			})
			expectNotified(t, n, "another process's write", func(i int) {
				_, err := other.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
					g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("via-file-%s-%d", version, i), EntityType: "test", Observations: []string{}}})
					return nil
				}})
				if err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// post sends a raw JSON-RPC POST to /mcp.
func post(t *testing.T, url string, body []byte, edit func(*http.Request)) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var initialize = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)

func TestAuthentication(t *testing.T) {
	ts := startServer(t, httpserver.Config{Grants: tokenGrants(t, testToken)}, "")
	for _, tc := range []struct {
		name, header string
		wantStatus   int
		wantError    bool // WWW-Authenticate says invalid_token
	}{
		{"no token", "", http.StatusUnauthorized, false},
		{"wrong token", "Bearer " + strings.Repeat("x", len(testToken)), http.StatusUnauthorized, true},
		{"token as prefix", "Bearer " + testToken + "x", http.StatusUnauthorized, true},
		{"other scheme", "Basic " + testToken, http.StatusUnauthorized, false},
		{"right token", "Bearer " + testToken, http.StatusOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.url, initialize, func(r *http.Request) {
				if tc.header != "" {
					r.Header.Set("Authorization", tc.header)
				}
			})
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			challenge := resp.Header.Get("WWW-Authenticate")
			if tc.wantStatus == http.StatusUnauthorized {
				if !strings.HasPrefix(challenge, "Bearer ") || strings.Contains(challenge, "invalid_token") != tc.wantError {
					t.Errorf("WWW-Authenticate %q", challenge)
				}
			}
		})
	}
	// Both generations work with the token.
	for _, version := range generations {
		cs := connect(t, ts.url, version, testToken, nil)
		if err := createEntity(context.Background(), cs, "authorized-"+version); err != nil {
			t.Errorf("%s with the token: %v", version, err)
		}
	}
	// Health checks need no token and learn nothing.
	resp, err := http.Get(ts.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Errorf("GET /healthz: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(ts.logs.String(), testToken) {
		t.Error("the token appears in the log")
	}
}

func TestRefusesUnsafeConfigurations(t *testing.T) {
	mem := server.New(filestore.Open(filepath.Join(t.TempDir(), "m.jsonl"), filestore.Options{}), server.Options{})
	for _, tc := range []struct {
		addr, token string
		errText     string // "" means accepted
	}{
		{"0.0.0.0:0", "", "without a token"},
		{"192.0.2.1:8080", "", "without a token"},
		{"0.0.0.0:0", "short", "at least 16"},
		{"127.0.0.1:0", "short", "at least 16"},
		{"0.0.0.0:0", testToken, ""},
		{"8080", "", ""},
	} {
		grants, err := httpserver.SingleGrants(tc.token)
		if err == nil {
			_, err = httpserver.New(httpserver.Config{Addr: tc.addr, Grants: grants, Memories: httpserver.One(httpserver.Memory{Server: mem})})
		}
		switch {
		case tc.errText == "" && err != nil:
			t.Errorf("New(%s, token %q): %v", tc.addr, tc.token, err)
		case tc.errText != "" && (err == nil || !strings.Contains(err.Error(), tc.errText)):
			t.Errorf("New(%s, token %q) error = %v, want one saying %q", tc.addr, tc.token, err, tc.errText)
		}
	}
}

func TestRebindingProtection(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	for _, tc := range []struct {
		name         string
		host, origin string
		want         int
	}{
		{"foreign Host", "evil.example.com", "", http.StatusForbidden},
		{"foreign Host and Origin", "evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"foreign Origin", "", "http://evil.example.com", http.StatusForbidden},
		{"opaque Origin", "", "null", http.StatusForbidden},
		{"localhost Host", "localhost", "", http.StatusOK},
		{"same-host Origin", "", "SAME", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.url, initialize, func(r *http.Request) {
				if tc.host != "" {
					r.Host = tc.host
				}
				switch tc.origin {
				case "":
				case "SAME":
					r.Header.Set("Origin", ts.base)
				default:
					r.Header.Set("Origin", tc.origin)
				}
			})
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, body, tc.want)
			}
			if resp.StatusCode == http.StatusForbidden && strings.Contains(string(body), "evil") {
				t.Errorf("the 403 body echoes request data: %s", body)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	ts := startServer(t, httpserver.Config{Limits: httpserver.Limits{MaxBodyBytes: 64 << 10}}, "")
	big := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 64<<10) + `"}}`)
	for _, chunked := range []bool{false, true} {
		resp := post(t, ts.url, big, func(r *http.Request) {
			if chunked {
				r.ContentLength = -1 // the limit must hold while reading, not only on Content-Length
				r.Body = io.NopCloser(bytes.NewReader(big))
			}
		})
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked=%v: status %d, want 413", chunked, resp.StatusCode)
		}
		checkRPCError(t, resp, jsonrpc.CodeInvalidRequest, "Invalid Request: the body is larger than 65536 bytes")
	}
	if resp := post(t, ts.url, initialize, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a small body: status %d, want 200", resp.StatusCode)
	}
}

// TestBodyNotJSON: a body that is not JSON is refused, in either
// generation and before any session check, with 400 and a JSON-RPC parse
// error (the go-sdk answered it in plain text, or as a missing session).
func TestBodyNotJSON(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	for _, version := range []string{"", "2025-06-18", "2026-07-28"} {
		for _, body := range []string{"not json", `{"jsonrpc":"2.0","id":1,"method":`, ""} {
			resp := post(t, ts.url, []byte(body), func(r *http.Request) {
				if version != "" {
					r.Header.Set("Mcp-Protocol-Version", version)
				}
			})
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s %q: status %d, want 400", version, body, resp.StatusCode)
			}
			checkRPCError(t, resp, jsonrpc.CodeParseError, "Parse error: the body is not JSON: ")
		}
	}
}

// checkRPCError checks that resp's body is a JSON-RPC error with id null,
// code and a message that begins with message.
func checkRPCError(t *testing.T, resp *http.Response, code int64, message string) {
	t.Helper()
	var got struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &got); err != nil || got.JSONRPC != "2.0" || string(got.ID) != "null" ||
		got.Error.Code != code || !strings.HasPrefix(got.Error.Message, message) {
		t.Errorf("body %s (%v), want a JSON-RPC error %d %q", body, err, code, message)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

// TestSessionKeepsItsGeneration: a 2025 session (Mcp-Session-Id) is not
// served a 2026-07-28 request; the answer says the session is pinned to the
// version it negotiated (the go-sdk alone said that version was not
// supported while listing it as supported).
func TestSessionKeepsItsGeneration(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	cs := connect(t, ts.url, legacy, "", nil)
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	resp := post(t, ts.url, body, func(r *http.Request) {
		r.Header.Set("Mcp-Session-Id", cs.ID())
		r.Header.Set("Mcp-Protocol-Version", modern)
		r.Header.Set("Mcp-Method", "tools/list")
	})
	var msg struct {
		ID    int `json:"id"`
		Error *struct {
			Code    int
			Message string
		} `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error == nil || msg.Error.Code != -32600 || msg.ID != 7 ||
		!strings.Contains(msg.Error.Message, "pinned to protocol "+legacy) {
		t.Errorf("2026 request in a 2025 session: %d %s, want error -32600 saying the session is pinned to %s", resp.StatusCode, data, legacy)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("the session stopped working: %v", err)
	}
}

// TestRequestWithoutSession: a 2025 request outside a session is refused
// with 400 and a JSON-RPC error with a real code, not served in a throwaway
// session.
func TestRequestWithoutSession(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	resp := post(t, ts.url, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), func(r *http.Request) {
		r.Header.Set("Mcp-Protocol-Version", legacy)
	})
	var msg struct {
		Error *struct{ Code int } `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(data, &msg) != nil || msg.Error == nil || msg.Error.Code != -32600 {
		t.Errorf("tools/list without a session: %d %s, want 400 with error -32600", resp.StatusCode, data)
	}
}

// TestErrorsHideFilePaths: failures that name the memory file reach the
// client without the server's directories.
func TestErrorsHideFilePaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	if err := os.Mkdir(file, 0o700); err != nil { // unreadable as a file
		t.Fatal(err)
	}
	ts := startServer(t, httpserver.Config{}, file)
	for _, version := range generations {
		cs := connect(t, ts.url, version, "", nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
		if err != nil || !res.IsError {
			t.Fatalf("%s read_graph on a directory: %v %+v, want a tool error", version, err, res)
		}
		if msg := text(res.Content); strings.Contains(msg, dir) || !strings.Contains(msg, "memory.jsonl") {
			t.Errorf("%s tool error %q: want the file's name without its directory", version, msg)
		}
		_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: resource})
		if err == nil || strings.Contains(err.Error(), dir) {
			t.Errorf("%s resources/read error %v: want one without the directory", version, err)
		}
	}
}

// TestShutdownEndsStreams: open event streams (a 2025 GET stream, a 2026
// subscriptions/listen) do not hold up a graceful shutdown.
func TestShutdownEndsStreams(t *testing.T) {
	ts := startServer(t, httpserver.Config{Limits: httpserver.Limits{ShutdownTimeout: 30 * time.Second}}, "")
	for _, version := range generations {
		n := make(notifications, 1)
		cs := connect(t, ts.url, version, "", n.options())
		subscribe(t, cs, version)
		// The stream is open once a write is heard on it.
		expectNotified(t, n, "a write", func(i int) {
			if err := createEntity(context.Background(), cs, fmt.Sprintf("%s-%d", version, i)); err != nil {
				t.Fatal(err)
			}
		})
	}
	start := time.Now()
	if err := ts.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with streams open", d)
	}
}

// The binary, built once for the tests that run it as a separate process.
var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	binDir    string
)

// runTests runs the tests; named_pg_test.go makes it pgtest.Main where
// PostgreSQL can run, for the named memories kept in a database.
var runTests = (*testing.M).Run

func TestMain(m *testing.M) {
	code := runTests(m)

	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "httpserver-test")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(binDir, "mcp-server-memory")
		if runtime.GOOS == "windows" {
			binary += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binary, "../../cmd/mcp-server-memory").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building the server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// TestConcurrentWriters: 20 HTTP clients of both generations and a stdio
// server process write one file at once; no write is lost.
func TestConcurrentWriters(t *testing.T) {
	const clients, writes = 20, 50
	ts := startServer(t, httpserver.Config{}, "")
	bin := serverBinary(t)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, clients+1)
	var want []string
	for c := range clients {
		cs := connect(t, ts.url, generations[c%2], "", nil)
		for w := range writes {
			want = append(want, fmt.Sprintf("http-%d-%d", c, w))
		}
		wg.Go(func() {
			for w := range writes {
				if err := createEntity(ctx, cs, fmt.Sprintf("http-%d-%d", c, w)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+ts.file)
	cmd.Stderr = ts.logs
	stdio, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stdio.Close()
	for w := range writes {
		want = append(want, fmt.Sprintf("stdio-%d", w))
	}
	wg.Go(func() {
		for w := range writes {
			if err := createEntity(ctx, stdio, fmt.Sprintf("stdio-%d", w)); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The stdio server's last writes may still be in its journal; at its
	// clean exit it folds them into the file, which is then the whole
	// memory for any reader.
	if err := stdio.Close(); err != nil {
		t.Errorf("the stdio server did not exit cleanly: %v", err)
	}
	got := entityNames(t, ts.file)
	for _, name := range want {
		if !got[name] {
			t.Errorf("write %s is lost", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d entities in the file, want %d", len(got), len(want))
	}
}

// TestGracefulShutdownDuringWrites sends SIGTERM to the server while
// clients of both generations write: every write a client saw acknowledged
// is in the file, the process exits cleanly and leaves no lock behind.
func TestGracefulShutdownDuringWrites(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	bin := serverBinary(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cmd := exec.Command(bin, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := testlog.OnFailure(t, "server log")
	urls := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
		for sc.Scan() {
			fmt.Fprintln(logs, sc.Text())
			if u := re.FindString(sc.Text()); u != "" {
				select {
				case urls <- u:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server did not report its address")
	}

	const clients = 8
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	sessions := make([]*mcp.ClientSession, clients)
	for c := range clients {
		sessions[c] = connect(t, url, generations[c%2], "", nil)
	}
	for c, cs := range sessions {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for w := 0; ; w++ {
				name := fmt.Sprintf("c%d-w%d", c, w)
				if createEntity(ctx, cs, name) != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		})
	}
	// Let writes flow, then ask the server to stop in the middle of them.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 100 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { <-copied; exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the server exited with %v, want 0", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server did not stop within 20 s of SIGTERM")
	}
	wg.Wait()

	got := entityNames(t, file)
	mu.Lock()
	defer mu.Unlock()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged")
	}
	for _, name := range acked {
		if !got[name] {
			t.Errorf("acknowledged write %s is not in the file", name)
		}
	}
	if _, err := os.Stat(file + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file is left behind (stat: %v)", err)
	}
	t.Logf("%d writes acknowledged before and during shutdown, %d in the file", len(acked), len(got))
}

// TestMkdirErrorsHidePaths: a memory file whose directory cannot be created
// fails with a tool error that names no directory above it either.
func TestMkdirErrorsHidePaths(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "secret-subdir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil { // a file where a directory should be
		t.Fatal(err)
	}
	ts := startServer(t, httpserver.Config{}, filepath.Join(blocker, "deeper", "memory.jsonl"))
	for _, version := range generations {
		cs := connect(t, ts.url, version, "", nil)
		err := createEntity(context.Background(), cs, "A")
		if err == nil || strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "secret-subdir") {
			t.Errorf("%s: %v, want a tool error that names no directory", version, err)
		}
	}
}

// TestCacheHints: the resource carries the memory, so 2026-07-28 marks it
// private; the 2025 protocol has no caching hints and gets none.
func TestCacheHints(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	for _, tc := range []struct{ version, scope string }{{legacy, ""}, {modern, "private"}} {
		cs := connect(t, ts.url, tc.version, "", nil)
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: resource})
		if err != nil {
			t.Fatal(err)
		}
		if res.CacheScope != tc.scope {
			t.Errorf("%s: resources/read cacheScope %q, want %q", tc.version, res.CacheScope, tc.scope)
		}
	}
	// On the wire: no ttlMs or cacheScope at all in a 2025 session.
	cs := connect(t, ts.url, legacy, "", nil)
	resp := post(t, ts.url, []byte(`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"memory://knowledge-graph"}}`), func(r *http.Request) {
		r.Header.Set("Mcp-Session-Id", cs.ID())
		r.Header.Set("Mcp-Protocol-Version", legacy)
	})
	data, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(data), `"contents"`) || strings.Contains(string(data), "cacheScope") || strings.Contains(string(data), "ttlMs") {
		t.Errorf("2025 resources/read: %s", data)
	}
}

// TestBadIDsAndDiscover: an id with a fraction is refused rather than
// answered as another id, and server/discover without _meta names the key
// it lacks.
func TestBadIDsAndDiscover(t *testing.T) {
	ts := startServer(t, httpserver.Config{}, "")
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	sessionless := func(r *http.Request) {
		r.Header.Set("Mcp-Protocol-Version", modern)
		r.Header.Set("Mcp-Method", "tools/list")
	}
	for _, tc := range []struct {
		body string
		edit func(*http.Request)
		id   string
		code int
		text string
	}{
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{` + meta + `}}`, sessionless, "1.5", -32600, "id 1.5"},
		{`{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}}`, nil, "2", -32602, "io.modelcontextprotocol/protocolVersion"},
	} {
		resp := post(t, ts.url, []byte(tc.body), tc.edit)
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int
				Message string
			} `json:"error"`
		}
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &msg); err != nil || msg.Error == nil || string(msg.ID) != tc.id || msg.Error.Code != tc.code || !strings.Contains(msg.Error.Message, tc.text) {
			t.Errorf("%s: %d %s, want id %s error %d with %q", tc.body, resp.StatusCode, data, tc.id, tc.code, tc.text)
		}
	}
}

// With --http the memory's web page is served at / behind the same token
// and the same Host check as /mcp (docs/design.md §9).
func TestPageBehindToken(t *testing.T) {
	const token = "page-token-0123456789abcdef"
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	page := ui.NewHandler(filestore.Open(file, filestore.Options{}), file, ui.Options{MayEdit: httpserver.MayEdit, Logf: t.Logf})
	srv := startPaged(t, httpserver.Config{Grants: tokenGrants(t, token)}, page, file)
	get := func(path string, edit func(*http.Request)) (int, string) {
		req, _ := http.NewRequest("GET", srv.base+path, nil)
		if edit != nil {
			edit(req)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if code, _ := get("/", nil); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	withToken := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	if code, body := get("/", withToken); code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("with the token: %d %.80q", code, body)
	}
	if code, _ := get("/", func(r *http.Request) { withToken(r); r.Host = "evil.example" }); code != http.StatusForbidden {
		t.Errorf("foreign Host: %d", code)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
}
