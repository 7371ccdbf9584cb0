package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// connectAs is connect for a client that calls itself name, with env added
// to the server's environment.
func connectAs(t *testing.T, memoryFile, version, name string, env ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := serverCmd(memoryFile, env...)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestAnswersSizedToTheHost: without MEMORY_ANSWER_LIMIT, a host known to
// cut results short gets answers that fit it, any other client 60 KB; with
// it set, everyone gets that. Claude Code's result-size _meta is declared
// only when the set limit lets an answer be longer than Claude Code keeps
// inline.
func TestAnswersSizedToTheHost(t *testing.T) {
	file := writePeople(t)
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				client, env string
				max         int
				parts       bool
			}{
				{"e2e", "", 60000, false},
				{"claude-code", "", 30000, true},
				{"github-copilot-developer", "", 10000, true},
				{"codex-mcp-client", "", 8000, true},
				{"claude-code", "MEMORY_ANSWER_LIMIT=60000", 60000, false},
			} {
				cs := connectAs(t, file, version, tc.client, tc.env)
				n, more := firstPart(t, cs)
				if n > tc.max || more != tc.parts || tc.parts && n < tc.max*2/3 || !tc.parts && n < 40000 {
					t.Errorf("%s %s: first part %d bytes, more %t; want at most %d bytes, more %t", tc.client, tc.env, n, more, tc.max, tc.parts)
				}
			}
		})
	}
}

// writePeople writes a memory whose read_graph answer is about 46 KB.
func writePeople(t *testing.T) string {
	t.Helper()
	var lines []string
	for i := range 150 {
		lines = append(lines, fmt.Sprintf(`{"type":"entity","name":"person %03d","entityType":"person","observations":["Lives at number %d of a long street in the north of the city","Works as a teacher at the school by the river since 2019","Plays the violin in an orchestra on Thursday evenings"]}`, i, i))
	}
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// firstPart returns the bytes of text of read_graph's first part, and
// whether more parts follow.
func firstPart(t *testing.T, cs *mcp.ClientSession) (int, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("read_graph: %v %+v", err, res)
	}
	n := 0
	for _, c := range res.Content {
		n += len(c.(*mcp.TextContent).Text)
	}
	_, more := res.StructuredContent.(map[string]any)["nextCursor"]
	return n, more
}

// TestClaudeResultSizeMeta: tools/list carries Claude Code's result-size
// key only where an answer may pass the 50,000 characters Claude Code
// keeps inline.
func TestClaudeResultSizeMeta(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	for _, tc := range []struct {
		env  string
		want any
	}{
		{"", nil},
		{"MEMORY_ANSWER_LIMIT=40000", nil},
		{"MEMORY_ANSWER_LIMIT=200000", 200000.0},
		{"MEMORY_ANSWER_LIMIT=0", 500000.0},
		{"MEMORY_ANSWER_LIMIT=900000", 500000.0},
	} {
		for _, version := range []string{"2025-06-18", "2026-07-28"} {
			cs := connectAs(t, file, version, "claude-code", tc.env)
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if got := tool.Meta["anthropic/maxResultSizeChars"]; got != tc.want {
					t.Errorf("%s %q %s: _meta %v, want %v", version, tc.env, tool.Name, tool.Meta, tc.want)
				}
			}
		}
	}
}
