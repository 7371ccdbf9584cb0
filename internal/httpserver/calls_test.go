package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// gatedStore holds every read until its gate opens, and says when one
// arrives.
type gatedStore struct {
	graph.Store
	entered, gate chan struct{}
}

func (g gatedStore) View(ctx context.Context, fn func(*graph.Graph) error) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	return g.Store.View(ctx, fn)
}

// TestCallsPerTokenBound: past MaxCallsPerToken reads in progress, a read
// is refused with 429, Retry-After and a JSON-RPC error naming the bound,
// in both generations; a write is still served, and once the reads are
// answered the place is free again.
func TestCallsPerTokenBound(t *testing.T) {
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			logs := testlog.OnFailure(t, "server log")
			gate, entered := make(chan struct{}), make(chan struct{}, 1)
			store := gatedStore{filestore.Open(file, filestore.Options{Logf: logs.Printf}), entered, gate}
			ts := startServerOn(t, httpserver.Config{Limits: httpserver.Limits{MaxCallsPerToken: 1}}, nil, store, file, logs)
			cs := connect(t, ts.url, version, "", nil)
			ctx := context.Background()
			first := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
				first <- err
			}()
			<-entered // the first read is in progress
			body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_nodes","arguments":{"query":"x"}}}`
			resp := post(t, ts.url, []byte(body), func(r *http.Request) {
				r.Header.Set("Mcp-Protocol-Version", version)
				r.Header.Set("Mcp-Session-Id", cs.ID())
			})
			data, _ := io.ReadAll(resp.Body)
			code, msg := rpcRefusal(t, string(data))
			if resp.StatusCode != http.StatusTooManyRequests || code != -32000 || !strings.Contains(msg, "Too many calls: this token has 1 reads in progress, the most it may have (MEMORY_MAX_CALLS)") || resp.Header.Get("Retry-After") == "" {
				t.Errorf("read past the bound: %d, %d %q, Retry-After %q", resp.StatusCode, code, msg, resp.Header.Get("Retry-After"))
			}
			if err := createEntity(ctx, cs, "W"); err != nil {
				t.Errorf("write while the reads are at their bound: %v", err)
			}
			close(gate)
			if err := <-first; err != nil {
				t.Errorf("first read: %v", err)
			}
			// The place is free once the first read's POST has ended, a
			// moment after its client has the answer.
			if !eventually(func() bool {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
				return err == nil
			}) {
				t.Error("a read after the first was answered is still refused")
			}
		})
	}
}
