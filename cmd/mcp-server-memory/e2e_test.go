package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

var generations = []string{"2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"}

// TestToolsInEveryGeneration drives all nine tools and the resource through
// the go-sdk client in each protocol version a client may speak.
func TestToolsInEveryGeneration(t *testing.T) {
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			updates := make(chan string, 100)
			cs, acks := connectWatchingAcks(t, file, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			ctx := context.Background()

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkToolList(t, tools.Tools)

			subscribe(t, cs, version, acks)

			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			res := call("create_entities", map[string]any{"entities": []map[string]any{
				{"name": "Alice", "entityType": "person", "observations": []string{"Speaks fluent Spanish", "東京に住んでいる"}},
				{"name": "Боб", "entityType": "person", "observations": []string{"Живёт в Москве"}},
				{"name": "Anthropic", "entityType": "organization", "observations": []string{}},
			}})
			wantStructured(t, res, `{"entities":[{"name":"Alice","entityType":"person","observations":["Speaks fluent Spanish","東京に住んでいる"]},{"name":"Боб","entityType":"person","observations":["Живёт в Москве"]},{"name":"Anthropic","entityType":"organization","observations":[]}]}`)
			waitUpdate(t, updates)

			res = call("create_entities", map[string]any{"entities": []map[string]any{
				{"name": "Alice", "entityType": "person", "observations": []string{"ignored"}},
			}})
			wantStructured(t, res, `{"entities":[],"skipped":["Alice"]}`)
			if len(res.Content) != 2 || res.Content[1].(*mcp.TextContent).Text != "Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities." {
				t.Errorf("skipped notice: %+v", res.Content)
			}

			res = call("create_relations", map[string]any{"relations": []map[string]any{
				{"from": "Alice", "to": "Anthropic", "relationType": "works_at"},
				{"from": "Боб", "to": "Alice", "relationType": "knows"},
			}})
			wantStructured(t, res, `{"relations":[{"from":"Alice","to":"Anthropic","relationType":"works_at"},{"from":"Боб","to":"Alice","relationType":"knows"}]}`)
			waitUpdate(t, updates)

			res = call("create_relations", map[string]any{"relations": []map[string]any{{"from": "Alice", "to": "Nobody", "relationType": "knows"}}})
			if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "Entity with name Nobody not found" {
				t.Errorf("relation to a missing entity: %+v", res)
			}

			res = call("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Alice", "contents": []string{"Prefers morning meetings", "Speaks fluent Spanish"}}}})
			wantStructured(t, res, `{"results":[{"entityName":"Alice","addedObservations":["Prefers morning meetings"]}]}`)
			waitUpdate(t, updates)

			res = call("search_nodes", map[string]any{"query": "москве"})
			wantStructured(t, res, `{"entities":[{"name":"Боб","entityType":"person","observations":["Живёт в Москве"]}],"relations":[{"from":"Боб","to":"Alice","relationType":"knows"}]}`)
			res = call("search_nodes", map[string]any{"query": "東京"})
			if got := names(t, res); !slices.Equal(got, []string{"Alice"}) {
				t.Errorf("search 東京: %v", got)
			}
			// The entity that holds the query comes first; Alice, who works
			// at an organization, follows as a closest match
			// (docs/design.md §8).
			res = call("search_nodes", map[string]any{"query": "ORGANIZATION"})
			if got := names(t, res); !slices.Equal(got, []string{"Anthropic", "Alice"}) {
				t.Errorf("search ORGANIZATION: %v", got)
			}
			res = call("search_nodes", map[string]any{"query": strings.Repeat("x", 2049)})
			if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "query") {
				t.Errorf("over-long query: %+v", res)
			}

			res = call("open_nodes", map[string]any{"names": []string{"Anthropic", "Alice", "ghost"}})
			wantStructured(t, res, `{"entities":[{"name":"Alice","entityType":"person","observations":["Speaks fluent Spanish","東京に住んでいる","Prefers morning meetings"]},{"name":"Anthropic","entityType":"organization","observations":[]}],"relations":[{"from":"Alice","to":"Anthropic","relationType":"works_at"}]}`)

			res = call("delete_observations", map[string]any{"deletions": []map[string]any{{"entityName": "Alice", "observations": []string{"Prefers morning meetings", "never said"}}}})
			wantStructured(t, res, `{"success":true,"message":"Deleted 1 of 2 observations.","deletedCount":1}`)
			waitUpdate(t, updates)

			res = call("delete_relations", map[string]any{"relations": []map[string]any{{"from": "Боб", "to": "Alice", "relationType": "knows"}}})
			wantStructured(t, res, `{"success":true,"message":"Relations deleted successfully","deletedCount":1}`)
			waitUpdate(t, updates)

			res = call("delete_entities", map[string]any{"entityNames": []string{"Боб", "ghost"}})
			wantStructured(t, res, `{"success":true,"message":"Deleted 1 of 2 entities. Not found: ghost","notFound":["ghost"]}`)
			if res.Content[0].(*mcp.TextContent).Text != "Deleted 1 of 2 entities. Not found: ghost" {
				t.Errorf("delete_entities text: %+v", res.Content)
			}
			waitUpdate(t, updates)

			res = call("read_graph", map[string]any{})
			want := `{"entities":[{"name":"Alice","entityType":"person","observations":["Speaks fluent Spanish","東京に住んでいる"]},{"name":"Anthropic","entityType":"organization","observations":[]}],"relations":[{"from":"Alice","to":"Anthropic","relationType":"works_at"}]}`
			wantStructured(t, res, want)

			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://knowledge-graph"})
			if err != nil {
				t.Fatal(err)
			}
			if c := rr.Contents[0]; c.MIMEType != "application/json" || compactJSON(t, c.Text) != compactJSON(t, want) {
				t.Errorf("resource: %+v", c)
			}

			// Every write records when: the entity created, each
			// observation, the relation. The writes went to the journal;
			// the server compacts it into the memory file once it has been
			// idle for a moment.
			wantFile := `{"type":"entity","name":"Alice","entityType":"person","observations":["Speaks fluent Spanish","東京に住んでいる"],"createdAt":"T","observationsHash":"b2f0de02"}
{"type":"entity","name":"Anthropic","entityType":"organization","observations":[],"createdAt":"T"}
{"type":"relation","from":"Alice","to":"Anthropic","relationType":"works_at","createdAt":"T"}
`
			data := waitForFile(t, file, wantFile)
			if string(stampTimes(data)) != wantFile {
				t.Errorf("memory file:\n%s\nwant:\n%s", data, wantFile)
			}
			fi, _ := os.Stat(file)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("memory file mode %v, want 0600", fi.Mode().Perm())
			}

			// Notifications are handled in the order they arrive, so once
			// the answer to a later request is in, any notification the
			// reads caused would be too.
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if len(updates) > 0 {
				t.Errorf("unexpected notification %s after reads", <-updates)
			}
		})
	}
}

// TestOwnWriteNotifiesOnce: over stdio, a client subscribed to the graph
// hears of its own write once: the store's Watch reports it, and nothing
// else does (the poll that then finds the file changed knows it is the
// server's own).
func TestOwnWriteNotifiesOnce(t *testing.T) {
	updates := make(chan string, 10)
	cs, acks := connectWatchingAcks(t, filepath.Join(t.TempDir(), "memory.jsonl"), "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
	})
	subscribe(t, cs, "2025-11-25", acks)
	for _, name := range []string{"A", "B"} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
			"entities": []map[string]any{{"name": name, "entityType": "t", "observations": []string{}}}}})
		if err != nil {
			t.Fatal(err)
		}
		waitUpdate(t, updates)
		// Ten polls of the watch (100 ms apart, serverCmd).
		select {
		case u := <-updates:
			t.Errorf("write %s: a second notification (%s)", name, u)
		case <-time.After(time.Second):
		}
	}
}

// subscribe asks for updates of the knowledge graph. In 2026-07-28 the
// subscription is a subscriptions/listen stream that stays open, so it runs
// in the background until the session closes.
func subscribe(t *testing.T, cs *mcp.ClientSession, version string, acks <-chan struct{}) {
	t.Helper()
	subscribeTo(t, cs, version, acks, "memory://knowledge-graph")
}

// subscribeTo is subscribe for the resource uri.
func subscribeTo(t *testing.T, cs *mcp.ClientSession, version string, acks <-chan struct{}, uri string) {
	t.Helper()
	params := &mcp.SubscribeParams{URI: uri}
	if version < "2026-07-28" {
		if err := cs.Subscribe(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		return
	}
	go cs.Subscribe(context.Background(), params)
	// The server acknowledges the listen stream once it has registered it.
	select {
	case <-acks:
	case <-time.After(10 * time.Second):
		t.Fatal("subscriptions/listen was not acknowledged")
	}
}

// connectWatchingAcks is connect, with a channel that receives each
// notifications/subscriptions/acknowledged the server sends (the go-sdk
// client has no handler for it).
func connectWatchingAcks(t *testing.T, memoryFile, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := serverCmd(memoryFile)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	acks := make(chan struct{}, 10)
	transport := ackTransport{Transport: &mcp.CommandTransport{Command: cmd}, acks: acks}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, acks
}

type ackTransport struct {
	mcp.Transport
	acks chan<- struct{}
}

func (t ackTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return ackConn{Connection: c, acks: t.acks}, nil
}

type ackConn struct {
	mcp.Connection
	acks chan<- struct{}
}

func (c ackConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/subscriptions/acknowledged" {
		c.acks <- struct{}{}
	}
	return msg, err
}

// TestRequestsBeforeEOFAreServed pipes a whole session into the binary and
// closes stdin at once, as a script does: every request is answered and the
// write is in the file when the process exits.
func TestRequestsBeforeEOFAreServed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cmd := serverCmd(file)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"Alice","entityType":"person","observations":["likes tea"]}]}}}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	answered := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("bad output line %q", sc.Bytes())
		}
		answered[string(msg.ID)] = msg.Result != nil
	}
	if !answered["1"] || !answered["2"] {
		t.Errorf("answers (id: has result) %v, want results for 1 and 2; output:\n%s", answered, out)
	}
	data, err := os.ReadFile(file)
	if want := `{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"],"createdAt":"T","observationsHash":"8dcbdfba"}` + "\n"; err != nil || string(stampTimes(data)) != want {
		t.Errorf("memory file %q, %v; want %q", data, err, want)
	}
}

// A line nested deeper than the go-sdk decodes ended the server, and with
// it a write in progress, unanswered and unsaved. It is answered with an
// error, and the server goes on: the writes before and after it are
// answered and saved.
func TestDeepLineKeepsStdioServing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cmd := serverCmd(file)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	create := func(id int, name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":%q,"entityType":"t","observations":[]}]}}}`, id, name)
	}
	deep := func(id, n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"open_nodes","arguments":{"names":%s%s}}}`, id, strings.Repeat("[", n), strings.Repeat("]", n))
	}
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		create(2, "Before"),
		deep(3, 999),
		deep(4, 100000),
		create(5, "After"),
	}, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("server: %v\n%s", err, out)
	}
	type answer struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	answers := map[string]answer{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var msg struct {
			ID json.RawMessage `json:"id"`
			answer
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("bad output line %q", sc.Bytes())
		}
		answers[string(msg.ID)] = msg.answer
	}
	for _, id := range []string{"1", "2", "5"} {
		if a := answers[id]; a.Result == nil || bytes.Contains(a.Result, []byte(`"isError":true`)) {
			t.Errorf("request %s: %+v; output:\n%s", id, a, out)
		}
	}
	for id, wantID := range map[string]string{"3": "3", "4": "null"} {
		if a := answers[wantID]; a.Error == nil || a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "more than 1000 deep") {
			t.Errorf("deep request %s: want -32600 with id %s, got %+v; output:\n%s", id, wantID, a, out)
		}
	}
	data, err := os.ReadFile(file)
	if !strings.Contains(string(data), `"Before"`) || !strings.Contains(string(data), `"After"`) {
		t.Errorf("memory file %q, %v; want Before and After", data, err)
	}
}

func waitUpdate(t *testing.T, updates <-chan string) {
	t.Helper()
	waitUpdateOf(t, updates, "memory://knowledge-graph")
}

// waitUpdateOf is waitUpdate for the resource uri.
func waitUpdateOf(t *testing.T, updates <-chan string, uri string) {
	t.Helper()
	select {
	case u := <-updates:
		if u != uri {
			t.Errorf("update for %q, want %q", u, uri)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no notifications/resources/updated of %s after a change", uri)
	}
}

func checkToolList(t *testing.T, tools []*mcp.Tool) {
	t.Helper()
	type hints struct{ readOnly, destructive, idempotent, openWorld bool }
	want := map[string]hints{
		"create_entities":     {false, false, false, false},
		"create_relations":    {false, false, false, false},
		"add_observations":    {false, false, false, false},
		"delete_entities":     {false, true, true, false},
		"delete_observations": {false, true, true, false},
		"delete_relations":    {false, true, true, false},
		"read_graph":          {true, false, true, false},
		"search_nodes":        {true, false, true, false},
		"open_nodes":          {true, false, true, false},
	}
	if len(tools) != len(want) {
		t.Errorf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		got := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
		if got != w {
			t.Errorf("%s annotations %+v, want %+v", tool.Name, got, w)
		}
		if tool.Title == "" || tool.Description == "" {
			t.Errorf("%s lacks title or description", tool.Name)
		}
		// Arrays are plain arrays, never ["null","array"], and every input
		// field the reference has is required; what docs/design.md §8 adds
		// (cursor, outline, limit, depth, since, until, showTimes) is
		// optional, so the reference's calls still fit.
		schema, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(schema), `"null"`) {
			t.Errorf("%s input schema admits null: %s", tool.Name, schema)
		}
		var in struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		json.Unmarshal(schema, &in)
		optional := map[string]bool{"cursor": true, "outline": true, "limit": true, "depth": true, "since": true, "until": true, "showTimes": true}
		for name := range in.Properties {
			if !optional[name] && !slices.Contains(in.Required, name) {
				t.Errorf("%s: %s is not required", tool.Name, name)
			}
		}
		for _, name := range in.Required {
			if optional[name] {
				t.Errorf("%s: %s must be optional", tool.Name, name)
			}
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", tool.Name)
		}
	}
}

func wantStructured(t *testing.T, res *mcp.CallToolResult, want string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %+v", res.Content)
	}
	got, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	// The JSON text item carries the same result.
	if compactJSON(t, string(got)) != compactJSON(t, want) {
		t.Errorf("structuredContent:\n%s\nwant:\n%s", got, want)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if strings.HasPrefix(text, "{") && compactJSON(t, text) != compactJSON(t, want) {
		t.Errorf("text:\n%s\nwant:\n%s", text, want)
	}
}

// compactJSON re-renders JSON with object keys in a fixed order.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("invalid JSON %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func names(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var g struct {
		Entities []struct{ Name string } `json:"entities"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range g.Entities {
		out = append(out, e.Name)
	}
	return out
}
