package server

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
)

// A read refused by the bounds in an HTTP request's scope is recorded
// with the scope, for the transport to answer 503; a write is not
// refused, and closing the scope forgets the refusal.
func TestRefusalRecordedWithTheScope(t *testing.T) {
	s := New(filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{}),
		Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Limiter: NewLimiter(Bounds{AnswerBytes: 100, ReadWait: time.Millisecond})})
	l := s.Limiter()
	release := l.hold(150) // answers that fill the bound
	defer release()
	id := l.OpenScope()
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return &mcp.CallToolResult{}, nil }
	handler := s.receive(next)
	req := func(tool string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool}, Extra: &mcp.RequestExtra{Header: http.Header{ScopeHeader: {id}}}}
	}

	if _, err := handler(context.Background(), "tools/call", req("create_entities")); err != nil || l.Refusal(id) != nil {
		t.Errorf("a write with the answers' bound full: %v, refusal %v", err, l.Refusal(id))
	}
	_, err := handler(context.Background(), "tools/call", req("read_graph"))
	refusal := l.Refusal(id)
	if err == nil || refusal == nil || !strings.Contains(refusal.Message, "MEMORY_MAX_ANSWER_MB") {
		t.Fatalf("a read with the answers' bound full: %v, refusal %v", err, refusal)
	}
	if other := l.OpenScope(); l.Refusal(other) != nil {
		t.Errorf("another scope has the refusal: %v", l.Refusal(other))
	}
	l.CloseScope(id)
	if l.Refusal(id) != nil {
		t.Errorf("closed scope still refused: %v", l.Refusal(id))
	}
}
