package httpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
)

// What a client can make the server hold is bounded: memories open,
// sessions per token and per server, sessions that never speak after
// initialize.

// eventually waits (up to 20 s) until cond holds, and reports whether it did.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// readGraph calls read_graph and returns its text.
func readGraph(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("read_graph: %v %v", err, res)
	}
	return text(res.Content)
}

// rpcRefusal decodes a JSON-RPC error answer.
func rpcRefusal(t *testing.T, body string) (code int64, message string) {
	t.Helper()
	var msg struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Error == nil {
		t.Fatalf("not a JSON-RPC error: %q (%v)", body, err)
	}
	return msg.Error.Code, msg.Error.Message
}

// TestNamedReadsOfNewNamesKeepNothingOpen: a read token reading many names
// nobody wrote, in both generations, gets empty memories, and leaves no
// file and no memory open.
func TestNamedReadsOfNewNamesKeepNothingOpen(t *testing.T) {
	ns := startNamed(t, teamTokens)
	before := ns.files(t)
	for i := range 60 {
		version := generations[i%2]
		cs := connect(t, ns.url(fmt.Sprintf("new-%d", i)), version, tokRead, nil)
		if g := readGraph(t, cs); strings.Contains(g, `"name"`) {
			t.Fatalf("a memory nobody wrote holds %s", g)
		}
		cs.Close()
	}
	if after := ns.files(t); !slices.Equal(before, after) {
		t.Errorf("reads created files: %v became %v", before, after)
	}
	// A 2025 session's end reaches the server a moment after Close.
	if !eventually(func() bool { return len(ns.hs.OpenMemories()) == 0 }) {
		t.Errorf("memories still open after their reads: %v", ns.hs.OpenMemories())
	}
}

// TestNamedMemoriesCap: past MaxOpenMemories, with every open memory in
// use (a session each), a request for another memory is refused with 503
// and a JSON-RPC error naming the limit; once one is free, it is served.
// An unused memory makes room by itself.
func TestNamedMemoriesCap(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) { c.MaxOpenMemories = 2 })
	ctx := context.Background()
	if err := createEntity(ctx, connect(t, ns.url("alpha"), modern, tokTwo, nil), "kept"); err != nil {
		t.Fatal(err)
	}
	a := connect(t, ns.url("alpha"), legacy, tokRead, nil)
	b := connect(t, ns.url("beta"), legacy, tokRead, nil)
	resp, body := rawRequest(t, ns.addr, http.MethodPost, "/mcp/gamma", string(initialize),
		"Authorization", "Bearer "+tokRead, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third memory past the cap: %d %q, want 503", resp.StatusCode, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--max-open-memories") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	// The page of a memory past the cap: the same refusal, as text.
	resp, body = rawRequest(t, ns.addr, http.MethodGet, "/page/gamma/", "", "Authorization", "Bearer "+tokRead)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "--max-open-memories") {
		t.Errorf("gamma's page past the cap: %d %q", resp.StatusCode, body)
	}
	b.Close()
	// beta's session ends a moment after Close: then gamma has room.
	eventually(func() bool {
		code, _ := rawStatus(t, ns.addr, "/mcp/gamma", "Bearer "+tokRead)
		return code != http.StatusServiceUnavailable
	})
	g := connect(t, ns.url("gamma"), modern, tokRead, nil)
	readGraph(t, g)
	if !strings.Contains(readGraph(t, a), "kept") {
		t.Error("alpha lost its entity")
	}
}

// TestNamedMemoriesIdleClose: a memory unused for MemoryIdleTimeout is
// closed, and opens again with its data; a memory with a session stays.
func TestNamedMemoriesIdleClose(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) { c.MemoryIdleTimeout = 100 * time.Millisecond })
	ctx := context.Background()
	if err := createEntity(ctx, connect(t, ns.url("alpha"), modern, tokAlpha, nil), "survives"); err != nil {
		t.Fatal(err)
	}
	held := connect(t, ns.url("beta"), legacy, tokTwo, nil)
	if err := createEntity(ctx, held, "in-beta"); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return !slices.Contains(ns.hs.OpenMemories(), "alpha") }) {
		t.Fatalf("alpha still open: %v", ns.hs.OpenMemories())
	}
	if !slices.Contains(ns.hs.OpenMemories(), "beta") {
		t.Error("beta, which has a session, was closed")
	}
	if g := readGraph(t, connect(t, ns.url("alpha"), legacy, tokRead, nil)); !strings.Contains(g, "survives") {
		t.Errorf("alpha opened again without its entity: %s", g)
	}
	if g := readGraph(t, held); !strings.Contains(g, "in-beta") {
		t.Errorf("beta's session reads %s", g)
	}
}

// initializeAs sends a raw 2025 initialize with token and returns the
// response and its body.
func initializeAs(t *testing.T, ns *namedServer, memory, token string) (*http.Response, string) {
	t.Helper()
	return rawRequest(t, ns.addr, http.MethodPost, strings.TrimPrefix(ns.url(memory), ns.base), string(initialize),
		"Authorization", "Bearer "+token, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
}

// TestSessionCaps: a token past MaxSessionsPerToken gets 429, the server
// past MaxSessions 503, each with a JSON-RPC error naming its limit; an
// ended session frees its place. 2026-07-28 requests need no session and
// are served throughout.
func TestSessionCaps(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) { c.MaxSessionsPerToken, c.MaxSessions = 2, 3 })
	first := connect(t, ns.url("alpha"), legacy, tokAlpha, nil)
	connect(t, ns.url("alpha"), legacy, tokAlpha, nil)
	resp, body := initializeAs(t, ns, "alpha", tokAlpha)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a token's third session: %d %q, want 429", resp.StatusCode, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-sessions-per-token") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	readGraph(t, connect(t, ns.url("alpha"), modern, tokAlpha, nil))

	connect(t, ns.url("beta"), legacy, tokTwo, nil)
	resp, body = initializeAs(t, ns, "beta", tokTwo)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a fourth session on the server: %d %q, want 503", resp.StatusCode, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-sessions") || strings.Contains(msg, "per-token") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	first.Close()
	if !eventually(func() bool {
		resp, _ := initializeAs(t, ns, "beta", tokTwo)
		return resp.StatusCode == http.StatusOK
	}) {
		t.Error("an ended session's place was not freed")
	}
}

// TestSessionSilentAfterInitializeIsClosed: a session that sends nothing
// after its initialize is closed after SessionStartTimeout, which frees
// its token's place; a client that goes on (notifications/initialized,
// calls) keeps its session.
func TestSessionSilentAfterInitializeIsClosed(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) {
		c.SessionStartTimeout, c.MaxSessionsPerToken = 200*time.Millisecond, 1
	})
	talking := connect(t, ns.url("alpha"), legacy, tokRead, nil)
	resp, body := initializeAs(t, ns, "alpha", tokAlpha)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %q", resp.StatusCode, body)
	}
	// The silent session holds tokAlpha's one place until it is closed;
	// asking for another does not touch it.
	if !eventually(func() bool {
		resp, _ := initializeAs(t, ns, "alpha", tokAlpha)
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatal("a session silent after initialize was not closed")
	}
	if err := talking.Ping(context.Background(), nil); err != nil {
		t.Errorf("the session that spoke was closed too: %v", err)
	}
}

// TestSessionCapSingleMemory: the caps hold for a single memory too (one
// token, or none: every client then counts as one), and a token written
// another way ("bearer", extra spaces) is still the same token.
func TestSessionCapSingleMemory(t *testing.T) {
	const token = "single-memory-token-0123456789"
	ts := startServer(t, httpserver.Config{Grants: tokenGrants(t, token), Limits: httpserver.Limits{MaxSessionsPerToken: 1}}, "")
	addr := strings.TrimPrefix(ts.base, "http://")
	connect(t, ts.url, legacy, token, nil)
	for _, auth := range []string{"Bearer " + token, "bearer  " + token + " "} {
		resp, body := rawRequest(t, addr, http.MethodPost, "/mcp", string(initialize),
			"Authorization", auth, "Content-Type", "application/json", "Accept", "application/json, text/event-stream")
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("%q: a second session: %d %q, want 429", auth, resp.StatusCode, body)
		}
		if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-sessions-per-token") {
			t.Errorf("the refusal: %d %q", code, msg)
		}
	}
	readGraph(t, connect(t, ts.url, modern, token, nil))
}

// listenStatus opens a 2026-07-28 subscriptions/listen stream on memory
// with token and returns its status and, when refused, its body; an
// accepted stream stays open until closed or the test ends.
func listenStatus(t *testing.T, ns *namedServer, memory, token string) (code int, refusal string, closeStream func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := listenRequest(ctx, ns, memory, token)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeStream = func() { cancel(); resp.Body.Close() }
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(closeStream)
		return resp.StatusCode, "", closeStream
	}
	defer closeStream()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg), func() {}
}

// TestStreamCaps: long-lived streams (subscriptions/listen, the page's
// events) are capped per token (429) and per server (503), MCP and page
// counted together, each refusal naming its flag; a closed stream frees
// its place, and other requests are served throughout.
func TestStreamCaps(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) { c.MaxStreamsPerToken, c.MaxStreams = 2, 3 })
	code, body, first := listenStatus(t, ns, "alpha", tokAlpha)
	if code != http.StatusOK {
		t.Fatalf("a first stream: %d %q", code, body)
	}
	openPageEvents(t, ns, "alpha", "Authorization", "Bearer "+tokAlpha)
	code, body, _ = listenStatus(t, ns, "alpha", tokAlpha)
	if code != http.StatusTooManyRequests {
		t.Fatalf("a token's third stream: %d %q, want 429", code, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-streams-per-token") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	resp, text := rawRequest(t, ns.addr, http.MethodGet, pagePath("alpha", "api/events"), "", "Authorization", "Bearer "+tokAlpha)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(text, "--http-max-streams-per-token") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a token's third stream, on the page: %d %q", resp.StatusCode, text)
	}
	readGraph(t, connect(t, ns.url("alpha"), modern, tokAlpha, nil))

	if code, body, _ := listenStatus(t, ns, "beta", tokTwo); code != http.StatusOK {
		t.Fatalf("another token's stream: %d %q", code, body)
	}
	code, body, _ = listenStatus(t, ns, "beta", tokRead)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("a fourth stream on the server: %d %q, want 503", code, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-streams") || strings.Contains(msg, "per-token") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	first()
	if !eventually(func() bool {
		code, _, closeStream := listenStatus(t, ns, "beta", tokRead)
		closeStream()
		return code == http.StatusOK
	}) {
		t.Error("a closed stream's place was not freed")
	}
}

// TestStreamCapRefusesGET: a 2025 GET event stream past the cap is
// refused as a subscriptions/listen stream is, 429 with Retry-After and a
// JSON-RPC error naming the flag (id null: a GET has no message), not an
// empty body that says it is JSON.
func TestStreamCapRefusesGET(t *testing.T) {
	ns := startNamedWith(t, teamTokens, nil, func(c *httpserver.Config) { c.MaxStreamsPerToken = 1 })
	if code, body, _ := listenStatus(t, ns, "alpha", tokAlpha); code != http.StatusOK {
		t.Fatalf("a first stream: %d %q", code, body)
	}
	resp, body := rawRequest(t, ns.addr, http.MethodGet, "/mcp/alpha", "", "Authorization", "Bearer "+tokAlpha, "Accept", "text/event-stream")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("a token's second stream, a GET: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if code, msg := rpcRefusal(t, body); code != -32000 || !strings.Contains(msg, "--http-max-streams-per-token") {
		t.Errorf("the refusal: %d %q", code, msg)
	}
	if !strings.Contains(body, `"id":null`) {
		t.Errorf("the refusal's id: %q", body)
	}
}
