package httpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// Three tokens: one writes to alpha only, one reads every memory, one
// writes to alpha and beta.
const (
	tokAlpha = "alpha-writer-0123456789abcdef"
	tokRead  = "reader-of-all-0123456789abcdef"
	tokTwo   = "alpha-beta-writer-0123456789ab"
	tokNone  = "granted-nothing-0123456789abcd"
)

const teamTokens = `# token memories access
` + tokAlpha + ` alpha write
` + tokRead + ` * read
` + tokTwo + ` alpha,beta write
`

type namedServer struct {
	base   string // http://127.0.0.1:PORT
	addr   string // 127.0.0.1:PORT
	root   string // holds dir and the tokens file, nothing else
	dir    string // the memories
	tokens string // the tokens file
	file   *access.File
	hs     *httpserver.Server
	logs   *testlog.Buffer
}

func startNamed(t *testing.T, tokens string) *namedServer {
	t.Helper()
	return startNamedWith(t, tokens, nil)
}

// memoryOf is memory name on store as the binary serves it: its MCP server
// and its web page sharing the store.
func memoryOf(store graph.Store, name string, logf func(string, ...any)) httpserver.Memory {
	return httpserver.Memory{
		Server: server.New(store, server.Options{Version: "test", Memory: name, WatchInterval: watchEvery, Logf: logf}),
		Page:   ui.NewHandler(store, "memory "+name, ui.Options{MayEdit: httpserver.MayEdit, WatchInterval: watchEvery, Logf: logf}),
	}
}

// startNamedWith serves named memories that open opens, or files in the
// memories directory when open is nil (each reporting whether its file
// exists, as the binary's do), with the Config that tweaks change.
func startNamedWith(t *testing.T, tokens string, open func(ctx context.Context, name string) (httpserver.Memory, error), tweaks ...func(*httpserver.Config)) *namedServer {
	t.Helper()
	root := t.TempDir()
	ns := &namedServer{root: root, dir: filepath.Join(root, "memories"), tokens: filepath.Join(root, "tokens")}
	if err := os.Mkdir(ns.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ns.tokens, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if ns.file, err = access.Open(ns.tokens); err != nil {
		t.Fatal(err)
	}
	ns.logs = testlog.OnFailure(t, "server log")
	if open == nil {
		open = func(_ context.Context, name string) (httpserver.Memory, error) {
			path := filepath.Join(ns.dir, name+".jsonl")
			m := memoryOf(filestore.Open(path, filestore.Options{Logf: ns.logs.Printf}), name, ns.logs.Printf)
			m.Exists = func() bool { _, err := os.Lstat(path); return err == nil }
			return m, nil
		}
	}
	cfg := httpserver.Config{Addr: "127.0.0.1:0", Logf: ns.logs.Printf, Grants: ns.file, Memories: open}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	hs, err := httpserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns.hs = hs
	ns.addr, _ = testserver.Serve(t, hs)
	ns.base = "http://" + ns.addr
	return ns
}

func (ns *namedServer) url(memory string) string {
	if memory == "default" {
		return ns.base + "/mcp"
	}
	return ns.base + "/mcp/" + memory
}

func (ns *namedServer) memoryFile(memory string) string {
	return filepath.Join(ns.dir, memory+".jsonl")
}

// files lists every file under root.
func (ns *namedServer) files(t *testing.T) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(ns.root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ns.root, path)
			names = append(names, rel)
		}
		return nil
	})
	return names
}

// rawStatus sends an initialize request for path exactly as written (no
// client-side cleaning) and returns the status and body.
func rawStatus(t *testing.T, addr, path, authorization string) (int, string) {
	t.Helper()
	var header []string
	if authorization != "" {
		header = []string{"Authorization", authorization}
	}
	header = append(header, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	resp, body := rawRequest(t, addr, http.MethodPost, path, string(initialize), header...)
	return resp.StatusCode, body
}

// rawRequest sends a request for path exactly as written (no client-side
// cleaning), with the headers given as name, value pairs, and returns the
// response and its body.
func rawRequest(t *testing.T, addr, method, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n", method, path, addr, len(body))
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&req, "%s: %s\r\n", header[i], header[i+1])
	}
	fmt.Fprintf(&req, "\r\n%s", body)
	io.WriteString(conn, req.String())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %q: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestNamedMemoriesGrants tries every token on every memory, reading and
// writing, through both protocol generations.
func TestNamedMemoriesGrants(t *testing.T) {
	ns := startNamed(t, teamTokens)
	memories := []string{"default", "alpha", "beta", "gamma"}
	grants := map[string]map[string]access.Level{
		tokAlpha: {"alpha": access.Write},
		tokRead:  {"default": access.Read, "alpha": access.Read, "beta": access.Read, "gamma": access.Read},
		tokTwo:   {"alpha": access.Write, "beta": access.Write},
		tokNone:  {},
	}
	_, forbidden := rawStatus(t, ns.addr, "/mcp/nosuchmemory", "Bearer "+tokAlpha)
	ctx := context.Background()
	for _, version := range generations {
		for _, token := range []string{tokAlpha, tokRead, tokTwo, tokNone} {
			for _, memory := range memories {
				level := grants[token][memory]
				t.Run(fmt.Sprintf("%s/%s/%s", version, token[:12], memory), func(t *testing.T) {
					path := strings.TrimPrefix(ns.url(memory), ns.base)
					if level == access.None {
						before := ns.files(t)
						code, body := rawStatus(t, ns.addr, path, "Bearer "+token)
						if code != http.StatusForbidden || body != forbidden {
							t.Errorf("status %d %q, want 403 %q", code, body, forbidden)
						}
						if after := ns.files(t); !slices.Equal(before, after) {
							t.Errorf("files %v became %v", before, after)
						}
						return
					}
					cs := connect(t, ns.url(memory), version, token, nil)
					// A read token is listed only the tools it may call.
					listed, err := cs.ListTools(ctx, nil)
					if err != nil {
						t.Fatal(err)
					}
					var names []string
					for _, tool := range listed.Tools {
						names = append(names, tool.Name)
					}
					if want := []string{"open_nodes", "read_graph", "search_nodes"}; level == access.Read && !slices.Equal(names, want) || level == access.Write && len(names) != 9 {
						t.Errorf("tools/list: %v", names)
					}
					name := fmt.Sprintf("%s-%s-%s", version, token[:12], memory)
					before, _ := os.ReadFile(ns.memoryFile(memory))
					err = createEntity(ctx, cs, name)
					if level == access.Write {
						if err != nil {
							t.Fatal(err)
						}
						if !entityNames(t, ns.memoryFile(memory))[name] {
							t.Errorf("%s is not in %s", name, memory)
						}
					} else {
						want := "this token may only read memory " + memory
						if err == nil || !strings.Contains(err.Error(), want) {
							t.Errorf("create_entities with a read token: %v, want a tool error %q", err, want)
						}
						after, _ := os.ReadFile(ns.memoryFile(memory))
						if string(before) != string(after) {
							t.Errorf("a refused write changed %s", memory)
						}
					}
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
					if err != nil || res.IsError {
						t.Fatalf("read_graph: %v %v", err, res)
					}
					if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resource}); err != nil {
						t.Errorf("reading the resource: %v", err)
					}
				})
			}
		}
	}
	// What the writers wrote is each in its own memory only.
	for _, memory := range memories {
		names := map[string]bool{}
		if _, err := os.Stat(ns.memoryFile(memory)); err == nil {
			names = entityNames(t, ns.memoryFile(memory))
		}
		for name := range names {
			if !strings.HasSuffix(name, "-"+memory) {
				t.Errorf("%s holds %s, written to another memory", memory, name)
			}
		}
	}
}

// TestNamedMemoriesEveryWriteToolRefused: a read token calls each write
// tool; each is a tool error naming the memory and nothing changes.
func TestNamedMemoriesEveryWriteToolRefused(t *testing.T) {
	ns := startNamed(t, teamTokens)
	ctx := context.Background()
	writer := connect(t, ns.url("alpha"), modern, tokTwo, nil)
	for _, name := range []string{"A", "B"} {
		if err := createEntity(ctx, writer, name); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := writer.CallTool(ctx, &mcp.CallToolParams{Name: "create_relations", Arguments: map[string]any{
		"relations": []any{map[string]any{"from": "A", "to": "B", "relationType": "knows"}}}}); err != nil || res.IsError {
		t.Fatalf("create_relations: %v %v", err, res)
	}
	before, err := os.ReadFile(ns.memoryFile("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string]any{
		"create_entities":     {"entities": []any{map[string]any{"name": "C", "entityType": "t", "observations": []string{}}}},
		"create_relations":    {"relations": []any{map[string]any{"from": "B", "to": "A", "relationType": "knows"}}},
		"add_observations":    {"observations": []any{map[string]any{"entityName": "A", "contents": []string{"x"}}}},
		"delete_entities":     {"entityNames": []string{"A"}},
		"delete_observations": {"deletions": []any{map[string]any{"entityName": "A", "observations": []string{"written over HTTP"}}}},
		"delete_relations":    {"relations": []any{map[string]any{"from": "A", "to": "B", "relationType": "knows"}}},
	}
	for _, version := range generations {
		reader := connect(t, ns.url("alpha"), version, tokRead, nil)
		for tool, args := range calls {
			res, err := reader.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s %s: %v", version, tool, err)
			}
			if !res.IsError || text(res.Content) != "this token may only read memory alpha" {
				t.Errorf("%s %s with a read token: %v %q", version, tool, res.IsError, text(res.Content))
			}
		}
	}
	after, _ := os.ReadFile(ns.memoryFile("alpha"))
	if string(before) != string(after) {
		t.Errorf("refused writes changed the memory:\n%s\nbecame\n%s", before, after)
	}
}

// forging adds headers a client might hope would raise its access.
type forging struct{ token string }

func (f forging) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+f.token)
	r.Header.Add("Authorization", "Bearer "+tokTwo)
	for _, h := range []string{"X-Memory-Access", "X-Scopes", "Scope", "Token-Info", "X-Access-Level"} {
		r.Header.Set(h, "write")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestNamedMemoriesLevelCannotBeForged: a read token with headers claiming
// write access (and the write token in a second Authorization header) and
// _meta claiming scopes still only reads.
func TestNamedMemoriesLevelCannotBeForged(t *testing.T) {
	ns := startNamed(t, teamTokens)
	for _, version := range generations {
		transport := &mcp.StreamableClientTransport{Endpoint: ns.url("beta"), HTTPClient: &http.Client{Transport: forging{tokRead}}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "forger", Version: "1"}, nil).
			Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Name:      "create_entities",
			Arguments: map[string]any{"entities": []any{map[string]any{"name": "forged", "entityType": "t", "observations": []string{}}}},
			Meta:      mcp.Meta{"scopes": []string{"write"}, "tokenInfo": map[string]any{"Scopes": []string{"write"}}},
		})
		cs.Close()
		if err != nil || !res.IsError || !strings.Contains(text(res.Content), "may only read memory beta") {
			t.Errorf("%s: a forged write: %v %v", version, err, res)
		}
	}
	if _, err := os.Stat(ns.memoryFile("beta")); !os.IsNotExist(err) {
		t.Errorf("beta's file exists after only refused writes: %v", err)
	}
}

// TestNamedMemoriesRefuseUniformly: names that are no memory's, traversal
// attempts, bad tokens: the same 403 and body, no file created anywhere;
// without Authorization the same 401 everywhere.
func TestNamedMemoriesRefuseUniformly(t *testing.T) {
	ns := startNamed(t, teamTokens)
	_, forbidden := rawStatus(t, ns.addr, "/mcp/gamma", "Bearer "+tokAlpha)
	_, unauthorized := rawStatus(t, ns.addr, "/mcp/alpha", "")
	paths := []string{
		"/mcp/..", "/mcp/%2e%2e", "/mcp/%2E%2E", "/mcp/../mcp", "/mcp/..%2f..%2fetc", "/mcp/%2e%2e/%2e%2e/tokens",
		"/mcp/a/b", "/mcp/a%2fb", "/mcp/alpha/", "/mcp//alpha", "/mcp/", "/mcp/%00", "/mcp/alpha%00",
		"/mcp/Alpha", "/mcp/ALPHA", "/mcp/con", "/mcp/nul.jsonl", "/mcp/com1", "/mcp/.alpha", "/mcp/alpha.",
		"/mcp/" + strings.Repeat("a", 65), "/mcp/unknown", "/mcp/alpha.jsonl/..", "/mcp/~", "/mcp/%7e",
	}
	for _, path := range paths {
		// The read-everything token: any valid name would be granted.
		for _, authz := range []string{"Bearer " + tokRead, "Bearer " + tokNone, "Bearer " + tokRead + "x", "Bearer", "Basic " + tokRead} {
			code, body := rawStatus(t, ns.addr, path, authz)
			if path == "/mcp/unknown" && authz == "Bearer "+tokRead {
				continue // a valid name: the reader reaches it
			}
			if code != http.StatusForbidden || body != forbidden {
				t.Errorf("%s with %q: %d %q, want 403 %q", path, authz[:min(len(authz), 12)], code, body, forbidden)
			}
		}
		if code, body := rawStatus(t, ns.addr, path, ""); code != http.StatusUnauthorized || body != unauthorized {
			t.Errorf("%s without a token: %d %q, want 401 %q", path, code, body, unauthorized)
		}
	}
	if code, _ := rawStatus(t, ns.addr, "/mcp/alpha", "Bearer "+tokAlpha); code != http.StatusOK {
		t.Errorf("the granted memory: %d", code)
	}
	if files := ns.files(t); !slices.Equal(files, []string{"tokens"}) {
		t.Errorf("files after refused requests and one initialize: %v, want only the tokens file", files)
	}
}

// TestNamedMemoriesReload: a revoked token is refused after Reload; a
// broken file keeps the grants in force.
func TestNamedMemoriesReload(t *testing.T) {
	ns := startNamed(t, teamTokens)
	ctx := context.Background()
	cs := connect(t, ns.url("alpha"), modern, tokAlpha, nil)
	if err := createEntity(ctx, cs, "before"); err != nil {
		t.Fatal(err)
	}
	session := connect(t, ns.url("alpha"), legacy, tokAlpha, nil) // a 2025 session, open across the reloads
	if err := os.WriteFile(ns.tokens, []byte("this line is broken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ns.hs.ReloadTokens(); err == nil {
		t.Fatal("a broken tokens file reloaded")
	}
	if err := createEntity(ctx, cs, "still"); err != nil {
		t.Errorf("after a broken reload: %v", err)
	}
	revoked := strings.Replace(teamTokens, tokAlpha+" alpha write\n", "", 1)
	if err := os.WriteFile(ns.tokens, []byte(revoked), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ns.hs.ReloadTokens(); err != nil {
		t.Fatal(err)
	}
	if err := createEntity(ctx, cs, "after"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a revoked token wrote: %v", err)
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}); err == nil {
		t.Error("a revoked token read in its open 2025 session")
	}
	if names := entityNames(t, ns.memoryFile("alpha")); !names["before"] || !names["still"] || names["after"] {
		t.Errorf("alpha holds %v, want before and still only", names)
	}
	if code, _ := rawStatus(t, ns.addr, "/mcp/alpha", "Bearer "+tokAlpha); code != http.StatusForbidden {
		t.Errorf("a revoked token: %d, want 403", code)
	}
	if code, _ := rawStatus(t, ns.addr, "/mcp/alpha", "Bearer "+tokTwo); code != http.StatusOK {
		t.Errorf("a token still granted: %d, want 200", code)
	}
}

// TestNamedMemoriesSubscriptions: a read token subscribes to a memory and
// hears a writer's change to it, and nothing of another memory's.
func TestNamedMemoriesSubscriptions(t *testing.T) {
	ns := startNamed(t, teamTokens)
	ctx := context.Background()
	writer := connect(t, ns.url("beta"), modern, tokTwo, nil)
	other := connect(t, ns.url("alpha"), modern, tokTwo, nil)
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			n := make(notifications, 1)
			cs := connect(t, ns.url("beta"), version, tokRead, n.options())
			subscribe(t, cs, version)
			expectNotified(t, n, "a write to beta", func(i int) {
				if err := createEntity(ctx, writer, fmt.Sprintf("sub-%s-%d", version, i)); err != nil {
					t.Fatal(err)
				}
			})
			for n.await(300 * time.Millisecond) {
			}
			if err := createEntity(ctx, other, "elsewhere-"+version); err != nil {
				t.Fatal(err)
			}
			if n.await(500 * time.Millisecond) {
				t.Error("a write to alpha notified beta's subscriber")
			}
		})
	}
}

// TestNamedMemoriesOpenOnce: concurrent first requests open a memory once.
func TestNamedMemoriesOpenOnce(t *testing.T) {
	ns := startNamed(t, teamTokens)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			cs := connect(t, ns.url("beta"), generations[i%2], tokTwo, nil)
			if err := createEntity(context.Background(), cs, fmt.Sprintf("e%d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := len(entityNames(t, ns.memoryFile("beta"))); got != 8 {
		t.Errorf("%d entities, want 8", got)
	}
	if c := strings.Count(ns.logs.String(), "opening memory"); c != 0 {
		t.Errorf("%d failures to open", c)
	}
}

// TestNamedMemoriesDefault: /mcp and /mcp/default are one memory.
func TestNamedMemoriesDefault(t *testing.T) {
	ns := startNamed(t, tokTwo+" default write\n")
	ctx := context.Background()
	if err := createEntity(ctx, connect(t, ns.base+"/mcp", modern, tokTwo, nil), "at-mcp"); err != nil {
		t.Fatal(err)
	}
	res, err := connect(t, ns.base+"/mcp/default", legacy, tokTwo, nil).CallTool(ctx, &mcp.CallToolParams{Name: "open_nodes", Arguments: map[string]any{"names": []string{"at-mcp"}}})
	if err != nil || res.IsError || !strings.Contains(text(res.Content), `"at-mcp"`) {
		t.Errorf("/mcp/default does not hold what /mcp wrote: %v %v", err, res)
	}
	// The memory's file and its history, nothing else.
	if files := ns.files(t); !slices.Equal(files, []string{filepath.Join("memories", "default.jsonl"), filepath.Join("memories", "default.jsonl.history"), "tokens"}) {
		t.Errorf("files %v", files)
	}
}

// TestNamedMemoriesOpenFailure: a memory that cannot be opened answers 503
// and is tried again on the next request.
func TestNamedMemoriesOpenFailure(t *testing.T) {
	var mu sync.Mutex
	fail := true
	ns := startNamedWith(t, teamTokens, func(_ context.Context, name string) (httpserver.Memory, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return httpserver.Memory{}, fmt.Errorf("the database is away")
		}
		return memoryOf(filestore.Open(filepath.Join(t.TempDir(), name+".jsonl"), filestore.Options{}), name, t.Logf), nil
	})
	if code, body := rawStatus(t, ns.addr, "/mcp/alpha", "Bearer "+tokAlpha); code != http.StatusServiceUnavailable || strings.Contains(body, "database") {
		t.Errorf("%d %q, want 503 saying nothing of the cause", code, body)
	}
	if !strings.Contains(ns.logs.String(), "opening memory alpha: the database is away") {
		t.Errorf("the log does not say why:\n%s", ns.logs)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if code, _ := rawStatus(t, ns.addr, "/mcp/alpha", "Bearer "+tokAlpha); code != http.StatusOK {
		t.Errorf("after the failure passed: %d, want 200", code)
	}
}

// listen opens a 2026-07-28 subscriptions/listen stream on memory with
// token and returns a channel closed when the stream ends.
func listen(t *testing.T, ns *namedServer, memory, token string) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := listenRequest(ctx, ns, memory, token)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("subscriptions/listen: %d %s", resp.StatusCode, msg)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
	}()
	return ended
}

// listenRequest sends a 2026-07-28 subscriptions/listen request on memory
// with token; its response is the stream, until ctx ends.
func listenRequest(ctx context.Context, ns *namedServer, memory, token string) (*http.Response, error) {
	body := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["` + resource + `"]}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ns.url(memory), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultClient.Do(req)
}

// TestNamedMemoriesRevocationEndsStreams: a reload that revokes a token
// ends its open event streams; other tokens' streams go on.
func TestNamedMemoriesRevocationEndsStreams(t *testing.T) {
	ns := startNamed(t, teamTokens)
	revoked := listen(t, ns, "beta", tokRead)
	kept := listen(t, ns, "beta", tokTwo)
	select {
	case <-revoked:
		t.Fatal("the stream ended before any reload")
	case <-time.After(200 * time.Millisecond):
	}
	if err := os.WriteFile(ns.tokens, []byte(strings.Replace(teamTokens, tokRead+" * read\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ns.hs.ReloadTokens(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-revoked:
	case <-time.After(10 * time.Second):
		t.Fatal("the revoked token's stream is still open")
	}
	select {
	case <-kept:
		t.Error("a stream of a token still granted ended")
	case <-time.After(300 * time.Millisecond):
	}
}
