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

// A cursor inside an entity split across parts is refused once that
// entity's observations change (one already shown deleted, one that
// matches added), rather than going on one observation off; a change
// elsewhere after the cursor leaves it working.
func TestSplitEntityCursorThroughTheBinary(t *testing.T) {
	lines := []string{`{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}`}
	var big []string
	for i := range 40 {
		big = append(big, fmt.Sprintf(`"observation %02d of Big: a long sentence that takes some room in the answer"`, i))
	}
	lines = append(lines,
		`{"type":"entity","name":"Big","entityType":"thing","observations":[`+strings.Join(big, ",")+`]}`,
		`{"type":"entity","name":"Zed","entityType":"person","observations":["likes coffee"]}`)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, file, "2025-11-25", nil, "MEMORY_ANSWER_LIMIT=2000")
	ctx := context.Background()
	type part struct {
		Entities []struct {
			Name                string   `json:"name"`
			Observations        []string `json:"observations"`
			OmittedObservations int      `json:"omittedObservations"`
		} `json:"entities"`
		NextCursor string `json:"nextCursor"`
	}
	get := func(tool string, args map[string]any) (part, *mcp.CallToolResult) {
		t.Helper()
		res := p.call(ctx, t, tool, args)
		var pt part
		if !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &pt)
		}
		return pt, res
	}
	// firstSplit pages until a part ends inside Big, and returns that
	// part's cursor and the observations of Big it showed.
	firstSplit := func(tool string, base map[string]any) (cursor string, shown []string) {
		t.Helper()
		args := base
		for range 10 {
			pt, res := get(tool, args)
			if res.IsError || pt.NextCursor == "" {
				t.Fatalf("%s: no part ends inside Big: %s", tool, toolText(res))
			}
			if last := pt.Entities[len(pt.Entities)-1]; last.Name == "Big" && last.OmittedObservations > 0 {
				return pt.NextCursor, last.Observations
			}
			args = map[string]any{"cursor": pt.NextCursor}
			for k, v := range base {
				args[k] = v
			}
		}
		t.Fatalf("%s: no part ends inside Big", tool)
		return "", nil
	}
	refused := func(what string, res *mcp.CallToolResult) {
		t.Helper()
		if !res.IsError || !strings.Contains(toolText(res), "memory changed") {
			t.Errorf("%s: the old cursor was not refused: %s", what, toolText(res))
		}
	}

	// A change after the cursor: it still works, and goes on where it was.
	cursor, shown := firstSplit("read_graph", map[string]any{})
	p.mustCall(ctx, t, "add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Zed", "contents": []string{"drinks it black"}}}})
	next, res := get("read_graph", map[string]any{"cursor": cursor})
	if res.IsError || next.Entities[0].Name != "Big" || next.Entities[0].Observations[0] != fmt.Sprintf("observation %02d of Big: a long sentence that takes some room in the answer", len(shown)) {
		t.Errorf("after a change elsewhere: %s", toolText(res))
	}

	// One of Big's observations already shown is deleted.
	cursor, shown = firstSplit("read_graph", map[string]any{})
	p.mustCall(ctx, t, "delete_observations", map[string]any{"deletions": []map[string]any{{"entityName": "Big", "observations": []string{shown[0]}}}})
	_, res = get("read_graph", map[string]any{"cursor": cursor})
	refused("read_graph after delete_observations", res)

	// While a search pages through Big, an observation that matches is added.
	cursor, _ = firstSplit("search_nodes", map[string]any{"query": "sentence"})
	p.mustCall(ctx, t, "add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Big", "contents": []string{"one more sentence"}}}})
	_, res = get("search_nodes", map[string]any{"query": "sentence", "cursor": cursor})
	refused("search_nodes after add_observations", res)
}
