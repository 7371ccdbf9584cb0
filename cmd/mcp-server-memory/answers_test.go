package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docs/design.md §8 through the real binary, in both protocol generations:
// with a small MEMORY_ANSWER_LIMIT a big memory answers in parts that fit,
// whose cursors lead through the whole graph; the outline, neighbours and a
// question in plain words work as a client sees them.
func TestAnswersFitThroughTheBinary(t *testing.T) {
	const limit = 3000
	var lines []string
	for i := range 120 {
		lines = append(lines, fmt.Sprintf(`{"type":"entity","name":"message %03d","entityType":"message","observations":["speaker: %s","said: the weather in town number %d was fine"]}`, i, []string{"Caroline", "Melanie"}[i%2], i))
	}
	lines = append(lines,
		`{"type":"entity","name":"message 120","entityType":"message","observations":["speaker: Caroline","I went to a LGBTQ support group yesterday and it was powerful"]}`,
		`{"type":"relation","from":"message 001","to":"message 000","relationType":"replies_to"}`)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startServer(t, file, version, nil, fmt.Sprintf("MEMORY_ANSWER_LIMIT=%d", limit))
			ctx := context.Background()
			size := func(res *mcp.CallToolResult) int {
				n := 0
				for _, c := range res.Content {
					n += len(c.(*mcp.TextContent).Text)
				}
				return n
			}
			structured := func(res *mcp.CallToolResult) map[string]any {
				t.Helper()
				if res.IsError {
					t.Fatalf("tool error: %s", toolText(res))
				}
				b, _ := json.Marshal(res.StructuredContent)
				var m map[string]any
				json.Unmarshal(b, &m)
				return m
			}

			// read_graph in parts: each fits, together they are the graph.
			seen := map[string]bool{}
			relations, parts := 0, 0
			args := map[string]any{}
			for {
				res := p.call(ctx, t, "read_graph", args)
				if size(res) > limit {
					t.Fatalf("part %d: %d bytes of text", parts+1, size(res))
				}
				m := structured(res)
				parts++
				for _, e := range m["entities"].([]any) {
					name := e.(map[string]any)["name"].(string)
					if seen[name] {
						t.Fatalf("%s twice", name)
					}
					seen[name] = true
				}
				relations += len(m["relations"].([]any))
				next, _ := m["nextCursor"].(string)
				if next == "" {
					break
				}
				args = map[string]any{"cursor": next}
			}
			if len(seen) != 121 || relations != 1 || parts < 3 {
				t.Errorf("read_graph: %d entities, %d relations in %d parts", len(seen), relations, parts)
			}

			outline := structured(p.call(ctx, t, "read_graph", map[string]any{"outline": true}))
			first := outline["entities"].([]any)[0].(map[string]any)
			if first["observationCount"] != 2.0 || first["observations"] != nil {
				t.Errorf("outline entity: %v", first)
			}

			near := structured(p.call(ctx, t, "open_nodes", map[string]any{"names": []string{"message 000"}, "depth": 1}))
			if n := len(near["entities"].([]any)); n != 2 {
				t.Errorf("depth 1: %d entities", n)
			}

			res := p.call(ctx, t, "search_nodes", map[string]any{"query": "When did Caroline go to the support group?"})
			found := structured(res)["entities"].([]any)
			if len(found) == 0 || found[0].(map[string]any)["name"] != "message 120" {
				t.Errorf("question: %s", toolText(res))
			}
			if !strings.Contains(toolText(res), "No entity contains the whole query") {
				t.Errorf("question: no note that these are the closest: %s", toolText(res))
			}

			bad := p.call(ctx, t, "read_graph", map[string]any{"cursor": "nonsense"})
			if !bad.IsError || !strings.Contains(toolText(bad), "cursor") {
				t.Errorf("bad cursor: %s", toolText(bad))
			}
		})
	}
}
