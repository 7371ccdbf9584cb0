package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
)

// bearer sends every request with a token.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP opens a session over streamable HTTP with a token whose
// scopes are as the tokens file says: "reader" may only read,
// "writer" may write and is labelled "laptop".
func connectHTTP(t *testing.T, s *Server, token string) *mcp.ClientSession {
	t.Helper()
	info := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		switch token {
		case "reader":
			return &auth.TokenInfo{Scopes: []string{"read"}}, nil
		case "writer":
			return &auth.TokenInfo{Scopes: []string{"read", ScopeWrite}, Extra: map[string]any{TokenLabelKey: "laptop"}}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() }, nil)
	ts := httptest.NewServer(auth.RequireBearerToken(info, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
	t.Cleanup(ts.Close)
	transport := &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: bearer{token}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestReadOnlyToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	for _, tc := range []struct{ memory, name string }{{"", "default"}, {"work", "work"}} {
		s := New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Memory: tc.memory})
		reader := connectHTTP(t, s, "reader")
		tools, err := reader.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range tools.Tools {
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("a read-only token is offered %s", tool.Name)
			}
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if want := []string{"open_nodes", "read_graph", "search_nodes"}; !slices.Equal(names, want) {
			t.Errorf("a read-only token is offered %v, want %v", names, want)
		}
		res := call(t, reader, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}})
		if got, want := resultText(t, res), "this token may only read memory "+tc.name; !res.IsError || !strings.Contains(got, want) {
			t.Errorf("memory %q: a read-only token's write: %v %q, want %q", tc.memory, res.IsError, got, want)
		}
		if res := call(t, reader, "read_graph", nil); res.IsError {
			t.Errorf("a read-only token's read: %s", resultText(t, res))
		}

		writer := connectHTTP(t, s, "writer")
		tools, err = writer.ListTools(context.Background(), nil)
		if err != nil || len(tools.Tools) != 9 {
			t.Errorf("a write token sees %d tools, want all 9 (%v)", len(tools.Tools), err)
		}
		if res := call(t, writer, "create_entities", map[string]any{"entities": []any{map[string]any{"name": "By" + tc.name, "entityType": "t", "observations": []string{}}}}); res.IsError {
			t.Errorf("a write token's write: %s", resultText(t, res))
		}
	}
}

func TestReadToolsOnlyLeavesOtherResults(t *testing.T) {
	res := &mcp.ListPromptsResult{}
	if got := readToolsOnly(res); got != mcp.Result(res) {
		t.Errorf("readToolsOnly changed a prompts/list result: %#v", got)
	}
}

func TestTokenLabelNamesTheWriter(t *testing.T) {
	req := &mcp.CallToolRequest{Extra: &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{Extra: map[string]any{TokenLabelKey: "laptop"}}}}
	if got := clientName(req); got != "laptop" {
		t.Errorf("clientName = %q, want the token's label", got)
	}
	req.Extra.TokenInfo.Extra = nil
	if got := clientName(req); got != "" {
		t.Errorf("clientName without a label or a session = %q", got)
	}
}

// connectAs opens an in-process session of a client that says it is name.
func connectAs(t *testing.T, s *Server, name string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// A known host's answers fit what it takes; any other client's are
// bounded by the server's limit.
func TestAnswerLimitByHost(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	s := New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf, AnswerLimit: 100000, AnswerLimitByHost: true})
	var ents []any
	for i := range 100 {
		ents = append(ents, map[string]any{"name": fmt.Sprintf("e%03d", i), "entityType": "t", "observations": []string{strings.Repeat("o", 100)}})
	}
	call(t, connectAs(t, s, "other"), "create_entities", map[string]any{"entities": ents})
	for name, limit := range map[string]int{"Codex": 8000, "claude-code": 30000, "other": 100000} {
		res := call(t, connectAs(t, s, name), "read_graph", nil)
		p := pageOf(t, res)
		if size := textSize(res); size > limit || (p.NextCursor != "") != (limit < 20000) {
			t.Errorf("%s: an answer of %d bytes, next cursor %q; want at most %d", name, size, p.NextCursor, limit)
		}
	}
}
