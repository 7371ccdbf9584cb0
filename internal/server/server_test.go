package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/protocol"
)

const (
	handshakeVersion   = "2025-11-25"
	sessionlessVersion = "2026-07-28"
)

func newTestServer(t *testing.T) (*Server, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	return New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf}), file
}

// connect opens an in-process session of the go-sdk client speaking
// version; updates receives the resources/updated notifications.
func connect(t *testing.T, s *Server, version string, updates chan<- string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if updates != nil {
		opts.ResourceUpdatedHandler = func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updates <- r.Params.URI }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// resultText is a tool result as text: the structured content, then the text
// items.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	parts := []string{string(structured)}
	for _, c := range res.Content {
		parts = append(parts, c.(*mcp.TextContent).Text)
	}
	return strings.Join(parts, "\n")
}

// canonical rewrites the first line of an answer (the structured content)
// with sorted keys, as the client decodes it.
func canonical(t *testing.T, answer string) string {
	t.Helper()
	first, rest, _ := strings.Cut(answer, "\n")
	var v any
	if err := json.Unmarshal([]byte(first), &v); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(v)
	return string(data) + "\n" + rest
}

func TestEveryToolInBothProtocols(t *testing.T) {
	for _, version := range []string{handshakeVersion, sessionlessVersion} {
		t.Run(version, func(t *testing.T) {
			s, _ := newTestServer(t)
			cs := connect(t, s, version, nil)
			steps := []struct {
				tool string
				args any
				want string
			}{
				{"create_entities", map[string]any{"entities": []any{
					map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"likes tea"}},
					map[string]any{"name": "Bob", "entityType": "person", "observations": []string{}},
				}}, "{\"entities\":[{\"name\":\"Alice\",\"entityType\":\"person\",\"observations\":[\"likes tea\"]},{\"name\":\"Bob\",\"entityType\":\"person\",\"observations\":[]}]}\n{\n  \"entities\": [\n    {\n      \"name\": \"Alice\",\n      \"entityType\": \"person\",\n      \"observations\": [\n        \"likes tea\"\n      ]\n    },\n    {\n      \"name\": \"Bob\",\n      \"entityType\": \"person\",\n      \"observations\": []\n    }\n  ]\n}"},
				{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "Alice", "entityType": "x", "observations": []string{}}}},
					"{\"entities\":[],\"skipped\":[\"Alice\"]}\n{\n  \"entities\": [],\n  \"skipped\": [\n    \"Alice\"\n  ]\n}\nSkipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities."},
				{"create_relations", map[string]any{"relations": []any{map[string]any{"from": "Alice", "to": "Bob", "relationType": "knows"}}},
					"{\"relations\":[{\"from\":\"Alice\",\"to\":\"Bob\",\"relationType\":\"knows\"}]}\n{\n  \"relations\": [\n    {\n      \"from\": \"Alice\",\n      \"to\": \"Bob\",\n      \"relationType\": \"knows\"\n    }\n  ]\n}"},
				{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Bob", "contents": []string{"plays chess"}}}},
					"{\"results\":[{\"entityName\":\"Bob\",\"addedObservations\":[\"plays chess\"]}]}\n{\n  \"results\": [\n    {\n      \"entityName\": \"Bob\",\n      \"addedObservations\": [\n        \"plays chess\"\n      ]\n    }\n  ]\n}"},
				{"search_nodes", map[string]any{"query": "chess"},
					"{\"entities\":[{\"name\":\"Bob\",\"entityType\":\"person\",\"observations\":[\"plays chess\"]}],\"relations\":[{\"from\":\"Alice\",\"to\":\"Bob\",\"relationType\":\"knows\"}]}\n{\n  \"entities\": [\n    {\n      \"name\": \"Bob\",\n      \"entityType\": \"person\",\n      \"observations\": [\n        \"plays chess\"\n      ]\n    }\n  ],\n  \"relations\": [\n    {\n      \"from\": \"Alice\",\n      \"to\": \"Bob\",\n      \"relationType\": \"knows\"\n    }\n  ]\n}"},
				{"open_nodes", map[string]any{"names": []string{"Alice", "Nobody"}},
					"{\"entities\":[{\"name\":\"Alice\",\"entityType\":\"person\",\"observations\":[\"likes tea\"]}],\"relations\":[]}\n{\n  \"entities\": [\n    {\n      \"name\": \"Alice\",\n      \"entityType\": \"person\",\n      \"observations\": [\n        \"likes tea\"\n      ]\n    }\n  ],\n  \"relations\": []\n}"},
				{"delete_observations", map[string]any{"deletions": []any{map[string]any{"entityName": "Bob", "observations": []string{"plays chess", "nothing"}}}},
					"{\"success\":true,\"message\":\"Deleted 1 of 2 observations.\",\"deletedCount\":1}\nDeleted 1 of 2 observations."},
				{"delete_relations", map[string]any{"relations": []any{map[string]any{"from": "Alice", "to": "Bob", "relationType": "knows"}}},
					"{\"success\":true,\"message\":\"Relations deleted successfully\",\"deletedCount\":1}\nRelations deleted successfully"},
				{"delete_entities", map[string]any{"entityNames": []string{"Bob", "Carol"}},
					"{\"success\":true,\"message\":\"Deleted 1 of 2 entities. Not found: Carol\",\"notFound\":[\"Carol\"]}\nDeleted 1 of 2 entities. Not found: Carol"},
				{"read_graph", map[string]any{},
					"{\"entities\":[{\"name\":\"Alice\",\"entityType\":\"person\",\"observations\":[\"likes tea\"]}],\"relations\":[]}\n{\n  \"entities\": [\n    {\n      \"name\": \"Alice\",\n      \"entityType\": \"person\",\n      \"observations\": [\n        \"likes tea\"\n      ]\n    }\n  ],\n  \"relations\": []\n}"},
			}
			for _, step := range steps {
				res := call(t, cs, step.tool, step.args)
				if res.IsError {
					t.Fatalf("%s: tool error %s", step.tool, resultText(t, res))
				}
				if got, want := resultText(t, res), canonical(t, step.want); got != want {
					t.Errorf("%s:\ngot  %s\nwant %s", step.tool, got, step.want)
				}
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) != 9 {
				t.Fatalf("tools/list: %v, %v", tools, err)
			}
		})
	}
}

func TestToolErrors(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, handshakeVersion, nil)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"search_nodes", map[string]any{"query": []string{"x"}}, "Invalid arguments for tool search_nodes"},
		{"search_nodes", map[string]any{}, "Invalid arguments for tool search_nodes"},
		{"search_nodes", map[string]any{"query": strings.Repeat("x", graph.MaxQueryLength+1)}, fmt.Sprintf("query must be a string of at most %d characters", graph.MaxQueryLength)},
		{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t"}}}, "observations"},
		{"add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "nobody", "contents": []string{"x"}}}}, "Entity with name nobody not found"},
		{"create_relations", map[string]any{"relations": []any{map[string]any{"from": "a", "to": "b", "relationType": "r"}}}, "Entity with name a not found"},
		{"read_graph", nil, ""},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if got := resultText(t, res); res.IsError != (tc.want != "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: isError %v %q, want an error containing %q", tc.tool, tc.args, res.IsError, got, tc.want)
		}
	}
}

// The resource carries the memory: private in 2026-07-28, and no caching
// hints at all in the 2025 protocols, which have none.
func TestResourceAndCacheHints(t *testing.T) {
	for _, tc := range []struct {
		version              string
		resourceScope, lists string
	}{
		{handshakeVersion, "", ""},
		{sessionlessVersion, "private", "public"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			s, _ := newTestServer(t)
			cs := connect(t, s, tc.version, nil)
			call(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{"o"}}}})
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: answer.ResourceURI})
			if err != nil {
				t.Fatal(err)
			}
			if want := "{\n  \"entities\": [\n    {\n      \"name\": \"A\",\n      \"entityType\": \"t\",\n      \"observations\": [\n        \"o\"\n      ]\n    }\n  ],\n  \"relations\": []\n}"; res.Contents[0].Text != want || res.Contents[0].MIMEType != "application/json" {
				t.Errorf("resource: %+v", res.Contents[0])
			}
			if res.CacheScope != tc.resourceScope {
				t.Errorf("resources/read cacheScope %q, want %q", res.CacheScope, tc.resourceScope)
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tools.CacheScope != tc.lists {
				t.Errorf("tools/list cacheScope %q, want %q", tools.CacheScope, tc.lists)
			}
			resources, err := cs.ListResources(context.Background(), nil)
			if err != nil || len(resources.Resources) != 2 || resources.CacheScope != tc.lists {
				t.Errorf("resources/list: %+v, %v", resources, err)
			}
			if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory://nope"}); err == nil {
				t.Error("reading an unknown resource: no error")
			}
		})
	}
}

// What the handshake-era wrappers send: the result without ttlMs and
// cacheScope, everything else as it was.
func TestWithoutCacheHintsMarshal(t *testing.T) {
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}}
	res.CacheScope = "public"
	data, err := json.Marshal(withoutCacheHints(res, ""))
	if err != nil || strings.Contains(string(data), "cacheScope") || strings.Contains(string(data), "ttlMs") || !strings.Contains(string(data), `"name":"t"`) {
		t.Errorf("list: %s, %v", data, err)
	}
	rr := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "u", Text: "x"}}}
	data, err = json.Marshal(withoutCacheHints(rr, ""))
	if want := `{"contents":[{"uri":"u","text":"x"}]}`; err != nil || string(data) != want {
		t.Errorf("resource: %s, %v; want %s", data, err, want)
	}
	if got := withoutCacheHints(rr, sessionlessVersion); got != mcp.Result(rr) {
		t.Errorf("2026-07-28 result changed: %#v", got)
	}
}

func TestSubscriptionNotifies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	s := New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: time.Hour, Logf: t.Logf})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Watch(ctx)
	updates := make(chan string, 10)
	cs := connect(t, s, handshakeVersion, updates)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "memory://nope"}); err == nil {
		t.Error("subscribing to an unknown resource: no error")
	}
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: answer.ResourceURI}); err != nil {
		t.Fatal(err)
	}
	// Watch starts in the background: write until it hears a write (a
	// new name each time, so that each write changes the memory).
	heard := false
	for i := 0; i < 20 && !heard; i++ {
		call(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": fmt.Sprint("A", i), "entityType": "t", "observations": []string{}}}})
		select {
		case uri := <-updates:
			heard = true
			if uri != answer.ResourceURI {
				t.Errorf("updated %q", uri)
			}
		case <-time.After(500 * time.Millisecond):
		}
	}
	if !heard {
		t.Fatal("no resources/updated after a write")
	}
	// One write, one notification: Watch is the one path (the poll, an
	// hour apart here, is not what reported it).
	call(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "B", "entityType": "t", "observations": []string{}}}})
	if uri := <-updates; uri != answer.ResourceURI {
		t.Errorf("updated %q", uri)
	}
	select {
	case uri := <-updates:
		t.Errorf("a second resources/updated (%s) for one write", uri)
	case <-time.After(300 * time.Millisecond):
	}
	if err := cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: answer.ResourceURI}); err != nil {
		t.Fatal(err)
	}
}

// Without a Watch (WatchInterval negative) the server's own write still
// tells its subscribers, once, before its answer.
func TestSubscriptionNotifiesWithoutWatch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	s := New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf})
	updates := make(chan string, 10)
	cs := connect(t, s, handshakeVersion, updates)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: answer.ResourceURI}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}})
	select {
	case uri := <-updates:
		if uri != answer.ResourceURI {
			t.Errorf("updated %q", uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no resources/updated after a write without a Watch")
	}
	select {
	case uri := <-updates:
		t.Errorf("a second resources/updated (%s) for one write", uri)
	case <-time.After(300 * time.Millisecond):
	}
}

// Another process writes the file: Watch tells subscribers.
func TestWatchNotifies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	s := New(filestore.Open(file, filestore.Options{}), Options{WatchInterval: 5 * time.Millisecond, Logf: t.Logf})
	updates := make(chan string, 10)
	cs := connect(t, s, handshakeVersion, updates)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: answer.ResourceURI}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Watch(ctx)
	// Watch takes its first look at the file when its goroutine runs; a
	// write before that look is not a change to it. So the other process
	// writes again until one is heard, for at most 10 s.
	other := filestore.Open(file, filestore.Options{})
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		if _, err := other.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("B%d", i), EntityType: "t"}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-updates:
			return
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no resources/updated after another process wrote")
		}
	}
}

// Each session is pinned to the protocol it opened with, and its entry is
// gone once the session ends.
func TestPinning(t *testing.T) {
	s, _ := newTestServer(t)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: handshakeVersion})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.pins.Version(ss); got != handshakeVersion {
		t.Errorf("pinned to %q, want %q", got, handshakeVersion)
	}
	cs.Close()
	ss.Wait()
	waitFor(t, "the session's pin to go", func() bool { return s.pins.Len() == 0 })
}

// waitFor waits until done holds, for state that changes in another
// goroutine right after an event the test saw.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// Every way an error gets its JSON-RPC code.
func TestErrorCodes(t *testing.T) {
	coded := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad", Data: json.RawMessage(`{"x":1}`)}
	for _, tc := range []struct {
		name        string
		method      string
		initialized bool
		err         error
		code        int64
		message     string
	}{
		{"coded error keeps its code", "tools/call", true, coded, jsonrpc.CodeInvalidParams, "bad"},
		{"wrapped coded error keeps code and outer text", "tools/call", true, fmt.Errorf("handling: %w", coded), jsonrpc.CodeInvalidParams, "handling: bad"},
		{"code 0 from the SDK counts as uncoded", "tools/call", true, &jsonrpc.Error{Message: "x"}, jsonrpc.CodeInternalError, "x"},
		{"failed initialize is a duplicate initialize", "initialize", true, errors.New(`duplicate "initialize" received`), jsonrpc.CodeInvalidRequest, `duplicate "initialize" received`},
		{"before initialization", "tools/list", false, errors.New("anything"), jsonrpc.CodeInvalidRequest, "anything"},
		{"any other error is internal", "resources/read", true, errors.New("disk"), jsonrpc.CodeInternalError, "disk"},
	} {
		got := classify(tc.method, tc.initialized, tc.err)
		if got.Code != tc.code || got.Message != tc.message {
			t.Errorf("%s: %d %q, want %d %q", tc.name, got.Code, got.Message, tc.code, tc.message)
		}
	}
	if got := wireError("tools/call", errors.New("x")); got.Code != jsonrpc.CodeInternalError {
		t.Errorf("wireError: %d", got.Code)
	}
	if got := classify("x", true, fmt.Errorf("w: %w", coded)); string(got.Data) != `{"x":1}` {
		t.Errorf("data lost: %s", got.Data)
	}
	for _, tc := range []struct {
		err  *jsonrpc.Error
		code int64
		text string
	}{
		{errUnknownResource("x://y"), jsonrpc.CodeInvalidParams, "the resources are " + answer.ResourceURI + " and " + StandingURI},
		{errInternal(errors.New("e")), jsonrpc.CodeInternalError, "e"},
	} {
		if tc.err.Code != tc.code || !strings.Contains(tc.err.Message, tc.text) {
			t.Errorf("%d %q, want %d and %q", tc.err.Code, tc.err.Message, tc.code, tc.text)
		}
	}
}

func TestCancelToolCalls(t *testing.T) {
	s, _ := newTestServer(t)
	started := make(chan struct{})
	blocked := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	done := make(chan error)
	go func() {
		_, err := s.receive(blocked)(context.Background(), "tools/call", &mcp.CallToolRequest{})
		done <- err
	}()
	<-started
	if n := s.ToolCalls(); n != 1 {
		t.Errorf("ToolCalls() = %d while one runs", n)
	}
	s.CancelToolCalls()
	if err := <-done; err == nil {
		t.Error("cancelled call: no error")
	}
	if n := s.ToolCalls(); n != 0 {
		t.Errorf("ToolCalls() = %d after", n)
	}
}

// stdio: a raw client writes lines and reads answers.
type rawClient struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan error
}

func startStdio(t *testing.T, s *Server) *rawClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawClient{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(nil, 1<<20)
	go func() {
		err := s.RunStdio(context.Background(), inR, outW)
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() { inW.Close(); go io.Copy(io.Discard, outR); <-c.done })
	return c
}

func (c *rawClient) send(lines ...string) {
	for _, l := range lines {
		if _, err := io.WriteString(c.in, l+"\n"); err != nil {
			c.t.Fatal(err)
		}
	}
}

type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (c *rawClient) next() rawAnswer {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no answer: %v", c.out.Err())
	}
	var a rawAnswer
	if err := json.Unmarshal(c.out.Bytes(), &a); err != nil {
		c.t.Fatalf("answer %q: %v", c.out.Bytes(), err)
	}
	return a
}

func (c *rawClient) expectError(id string, code int64, text string) {
	c.t.Helper()
	a := c.next()
	if string(a.ID) != id || a.Error == nil || a.Error.Code != code || !strings.Contains(a.Error.Message, text) {
		c.t.Errorf("got id %s error %+v, want id %s code %d %q", a.ID, a.Error, id, code, text)
	}
}

func (c *rawClient) expectResult(id string) rawAnswer {
	c.t.Helper()
	a := c.next()
	if string(a.ID) != id || a.Error != nil {
		c.t.Errorf("got id %s error %+v, want a result for id %s", a.ID, a.Error, id)
	}
	return a
}

const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	meta2026    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
)

func TestStdioLines(t *testing.T) {
	s, _ := newTestServer(t)
	c := startStdio(t, s)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	c.expectError("0", jsonrpc.CodeInvalidRequest, "invalid during session initialization")
	c.send(initialize)
	c.expectResult("1")
	c.send(initialized)
	for _, tc := range []struct {
		line, id string
		code     int64
		text     string
	}{
		{"hello", "null", jsonrpc.CodeParseError, "invalid character 'h'"},
		{`{"jsonrpc":"2.0","id":2,"method":`, "null", jsonrpc.CodeParseError, "unexpected end of JSON input"},
		{`"just a string"`, "null", jsonrpc.CodeInvalidRequest, "not a JSON object"},
		{`{"hello":1}`, "null", jsonrpc.CodeInvalidRequest, "version tag"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, "null", jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message"},
		{`{"jsonrpc":"2.0","id":3,"method":7}`, "3", jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message"},
		{`[]`, "null", jsonrpc.CodeInvalidRequest, "has no JSON-RPC batches"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "1.5", jsonrpc.CodeInvalidRequest, "id 1.5 is not an integer"},
		{`{"jsonrpc":"2.0","id":2e0,"method":"ping"}`, "2e0", jsonrpc.CodeInvalidRequest, "id 2e0 is not an integer"},
		{`{"jsonrpc":"2.0","id":4,"method":"server/discover"}`, "4", jsonrpc.CodeInvalidParams, "server/discover must carry"},
		{`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "5", jsonrpc.CodeInvalidRequest, "duplicate"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{` + meta2026 + `}}`, "6", jsonrpc.CodeInvalidRequest, "pinned to protocol 2025-11-25"},
		// Deeper than the go-sdk decodes: it would end the connection.
		{`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":` + nested(protocol.MaxNesting-1) + `}}`, "7", jsonrpc.CodeInvalidRequest, "more than 1000 deep"},
		{`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"read_graph","arguments":{"x":` + nested(5000) + `}}}`, `"deep"`, jsonrpc.CodeInvalidRequest, "more than 1000 deep"},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":` + nested(20000) + `}}`, "null", jsonrpc.CodeInvalidRequest, "more than 1000 deep"},
		{nested(3000), "null", jsonrpc.CodeInvalidRequest, "more than 1000 deep"},
		{`{"jsonrpc":"2.0","id":9.5,"method":"ping","params":{"x":` + nested(protocol.MaxNesting) + `}}`, "null", jsonrpc.CodeInvalidRequest, "more than 1000 deep"},
	} {
		c.send(tc.line)
		c.expectError(tc.id, tc.code, tc.text)
	}
	// As deep as the go-sdk decodes, and brackets inside strings, are fine.
	c.send(`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":` + nested(protocol.MaxNesting-2) + `}}`)
	c.expectResult("10")
	c.send(`{"jsonrpc":"2.0","id":11,"method":"ping","params":{"x":"` + strings.Repeat("[{", 3000) + `"}}`)
	c.expectResult("11")
	c.send("", "   ", `{"jsonrpc":"2.0","id":"x","method":"ping"}`)
	c.expectResult(`"x"`)
}

// nested is n arrays, one inside the other.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestStdioLineTooLong(t *testing.T) {
	defer func(n int) { maxLineLength = n }(maxLineLength)
	maxLineLength = 1000
	s, _ := newTestServer(t)
	c := startStdio(t, s)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200<<10) + `"}}`)
	c.expectError("null", jsonrpc.CodeInvalidRequest, "longer than 1000 bytes")
	c.send(initialize)
	c.expectResult("1")
}

func TestStdioBatchAndIDsInUse(t *testing.T) {
	s, _ := newTestServer(t)
	c := startStdio(t, s)
	c.send(strings.Replace(initialize, "2025-11-25", "2025-03-26", 1), initialized)
	c.expectResult("1")
	c.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	c.expectError("2", jsonrpc.CodeInvalidRequest, "already used")
	c.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`)
	if !c.out.Scan() || !strings.HasPrefix(c.out.Text(), "[") || !strings.Contains(c.out.Text(), `"id":4`) {
		t.Errorf("batch answer: %s", c.out.Text())
	}
	c.send(`[{"jsonrpc":"2.0","id":5,"method":"ping"},"x"]`)
	c.expectError("null", jsonrpc.CodeInvalidRequest, "not a JSON object")
	c.send(`[]`)
	c.expectError("null", jsonrpc.CodeInvalidRequest, "the batch is empty")
	// -0 is the id 0: its answer frees it.
	c.send(`{"jsonrpc":"2.0","id":-0,"method":"ping"}`)
	c.expectResult("0")
	c.send(`{"jsonrpc":"2.0","id":0,"method":"ping"}`)
	c.expectResult("0")
}

func TestStdioIDInUse(t *testing.T) {
	s, _ := newTestServer(t)
	c := startStdio(t, s)
	c.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":{"resourceSubscriptions":["` + answer.ResourceURI + `"]}}}`)
	if !c.out.Scan() || !strings.Contains(c.out.Text(), "acknowledged") {
		t.Fatalf("no acknowledgement: %s", c.out.Text())
	}
	c.send(`{"jsonrpc":"2.0","id":"L","method":"tools/list","params":{` + meta2026 + `}}`)
	c.expectError(`"L"`, jsonrpc.CodeInvalidRequest, `id "L" is already used`)
	c.send(`{"jsonrpc":"2.0","id":"M","method":"tools/list","params":{}}`)
	c.expectError(`"M"`, jsonrpc.CodeInvalidParams, "every request must carry")
}

// Requests queued when stdin closes are all answered and done before
// RunStdio returns.
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	s, file := newTestServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.RunStdio(context.Background(), inR, outW); outW.Close() }()
	go func() {
		io.WriteString(inW, initialize+"\n"+initialized+"\n")
		for i := range 20 {
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"E%d","entityType":"t","observations":[]}]}}}`+"\n", i+2, i)
		}
		inW.Close()
	}()
	data, _ := io.ReadAll(outR)
	if err := <-done; err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("RunStdio: %v", err)
	}
	for i := range 20 {
		if !strings.Contains(string(data), fmt.Sprintf(`"id":%d,"result"`, i+2)) {
			t.Errorf("no answer to request %d:\n%s", i+2, data)
		}
	}
	mem, err := os.ReadFile(file)
	if err != nil || strings.Count(string(mem), "\n") != 20 {
		t.Errorf("memory file: %q, %v", mem, err)
	}
}

// Stateless HTTP serves each request in a session of its own: once the
// requests are answered, no pin is left behind.
func TestStatelessRequestsLeaveNoPins(t *testing.T) {
	s, _ := newTestServer(t)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(handler)
	defer ts.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: sessionlessVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 20 {
		if res := call(t, cs, "read_graph", map[string]any{}); res.IsError {
			t.Fatal(resultText(t, res))
		}
	}
	waitFor(t, "the requests' pins to go", func() bool { return s.pins.Len() == 0 })
}
