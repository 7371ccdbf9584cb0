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

// A write issued while whole answers of a big memory are being encoded is
// answered without waiting for them: a read lets go of the graph once it
// has picked its page, before it encodes it. The reads here are held
// where their encoding begins until the write is answered, and then show
// the memory as it was when they read it.
func TestWriteDoesNotWaitForReadsEncoding(t *testing.T) {
	const reads = 3
	s, _ := serverOn(t, 500, 0)
	s.limiter = NewLimiter(Bounds{Reads: reads})
	cs := connect(t, s, "", nil)
	ctx := context.Background()
	// A first read loads the memory (a load holds the graph alone).
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	encoding, gate := make(chan struct{}), make(chan struct{})
	s.encoding = func() {
		encoding <- struct{}{}
		<-gate
	}
	opened := false
	t.Cleanup(func() { // before the session's, which waits for the reads
		if !opened {
			close(gate)
		}
	})
	answers := make(chan *mcp.CallToolResult, reads)
	for range reads {
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
			if err != nil {
				t.Error(err)
			}
			answers <- res
		}()
	}
	for range reads {
		select {
		case <-encoding:
		case <-time.After(time.Minute):
			t.Fatal("the reads did not all begin to encode")
		}
	}
	written := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
			"entities": []any{map[string]any{"name": "Written meanwhile", "entityType": "t", "observations": []any{}}},
		}})
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the write waited for the reads being encoded")
	}
	opened = true
	close(gate)
	for range reads {
		res := <-answers
		if res == nil {
			continue
		}
		if p := pageOf(t, res); len(p.Entities) != 500 || strings.Contains(resultText(t, res), "Written meanwhile") {
			t.Errorf("a read shows %d entities, want the 500 it read", len(p.Entities))
		}
	}
}

// An answer sent over HTTP counts as held with the go-sdk's copies of it
// until its request ends: a second read is refused where, over stdio, the
// same answer held unread leaves room for it.
func TestAnswersOverHTTPCountTheirCopies(t *testing.T) {
	big := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", bigResult)}}}
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { return big, nil }
	read := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "read_graph"}}
	for _, viaHTTP := range []bool{false, true} {
		s := New(filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{}),
			Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Limiter: NewLimiter(Bounds{AnswerBytes: 3 * bigResult, ReadWait: time.Millisecond})})
		handler, l := s.receive(next), s.Limiter()
		ctx, req := context.WithValue(context.Background(), heldKey{}, &heldResults{}), read
		if viaHTTP {
			scope := l.OpenScope()
			defer l.CloseScope(scope)
			req = &mcp.CallToolRequest{Params: read.Params, Extra: &mcp.RequestExtra{Header: http.Header{ScopeHeader: {scope}}}}
		}
		if _, err := handler(ctx, "tools/call", req); err != nil {
			t.Fatal(err)
		}
		// The answer is held: unwritten on stdio, its request open over HTTP.
		_, err := handler(context.Background(), "tools/call", read)
		if refused := err != nil; refused != viaHTTP {
			t.Errorf("over HTTP %t: a second read refused %t (%v), want %t", viaHTTP, refused, err, viaHTTP)
		}
	}
}
