//go:build !windows

package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// TestAssistantOverHTTP: over Streamable HTTP too, each session gets the
// instructions and the prompt, Claude Code's answers are sized to it, and
// searches carry the standing facts, in both generations.
func TestAssistantOverHTTP(t *testing.T) {
	const token = "assistant-token-0123456789abcdef"
	file := writePeople(t)
	cmd := serverCmd(file, "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")
	cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0")
	c := startChild(t, cmd)
	base := waitLog(t, c.stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		if n := len(cs.InitializeResult().Instructions); n == 0 || n > server.MaxInstructions {
			t.Errorf("%s: instructions of %d bytes", version, n)
		}
		if p, err := cs.ListPrompts(context.Background(), nil); err != nil || len(p.Prompts) != 1 {
			t.Errorf("%s: prompts/list %v %+v", version, err, p)
		}
		if n, more := firstPart(t, cs); n > 30000 || !more {
			t.Errorf("%s: Claude Code's first part %d bytes, more %t", version, n, more)
		}
		if version == "2025-11-25" {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_observations", Arguments: map[string]any{"observations": []map[string]any{
				{"entityName": "person 000", "contents": []string{"Standing preference: answers in French"}},
			}}}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_nodes", Arguments: map[string]any{"query": "weather"}})
		if err != nil || !strings.Contains(toolText(res), "person 000:\n- Standing preference: answers in French") {
			t.Errorf("%s: search without the standing fact: %v %s", version, err, toolText(res))
		}
		cs.Close()
	}
}
