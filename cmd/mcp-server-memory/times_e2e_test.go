package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadByTime asks the read tools by time, in each protocol generation:
// since/until keep what was learned in the window (unknown times in none),
// showTimes says when, bad values are tool errors naming the argument, and
// without them the answer is as before.
func TestReadByTime(t *testing.T) {
	hash := fmt.Sprintf("%08x", graph.ObservationsHash([]string{"wrote the first program", "undated note"}))
	seed := `{"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program","undated note"],"createdAt":"2020-01-02T03:04:05Z","observationTimes":["2020-01-02T03:04:05Z",1,null,1],"observationsHash":"` + hash + `"}
{"type":"entity","name":"Charles","entityType":"person","observations":["designed engines"]}
{"type":"relation","from":"Ada","to":"Charles","relationType":"worked with","createdAt":"2020-01-05T00:00:00Z"}
`
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
				t.Fatal(err)
			}
			cs := connect(t, file, version, nil)
			ctx := context.Background()
			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			call("create_entities", map[string]any{"entities": []map[string]any{{"name": "Grace", "entityType": "person", "observations": []string{"wrote a compiler"}}}})
			call("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Ada", "contents": []string{"met Grace"}}}})
			call("create_relations", map[string]any{"relations": []map[string]any{{"from": "Grace", "to": "Ada", "relationType": "admired"}}})

			// Without the new arguments: the whole graph, no times.
			wantStructured(t, call("read_graph", map[string]any{}), `{"entities":[
				{"name":"Ada","entityType":"person","observations":["wrote the first program","undated note","met Grace"]},
				{"name":"Charles","entityType":"person","observations":["designed engines"]},
				{"name":"Grace","entityType":"person","observations":["wrote a compiler"]}],
				"relations":[{"from":"Ada","to":"Charles","relationType":"worked with"},{"from":"Grace","to":"Ada","relationType":"admired"}]}`)

			// What was learned since 2021: this test's writes.
			res := call("read_graph", map[string]any{"since": "2021-01-01"})
			wantStructured(t, res, `{"entities":[
				{"name":"Ada","entityType":"person","observations":["met Grace"]},
				{"name":"Grace","entityType":"person","observations":["wrote a compiler"]}],
				"relations":[{"from":"Grace","to":"Ada","relationType":"admired"}]}`)
			if last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text; last != "Only what was learned since 2021-01-01T00:00:00Z is shown; facts whose time is unknown (written before this server recorded times, or by another tool) are left out." {
				t.Errorf("note: %q", last)
			}

			// Until the end of 2020, with times: what the file said; the
			// undated observation and Charles are in no window.
			res = call("open_nodes", map[string]any{"names": []string{"Ada", "Charles", "Grace"}, "until": "2020-12-31", "showTimes": true})
			got := stampStructured(t, res)
			want := `{"entities":[{"createdAt":"2020-01-02T03:04:05Z","entityType":"person","name":"Ada","observationTimes":["2020-01-02T03:04:05Z"],"observations":["wrote the first program"],"updatedAt":"T"}],"relations":[{"createdAt":"2020-01-05T00:00:00Z","from":"Ada","relationType":"worked with","to":"Charles"}]}`
			if got != want {
				t.Errorf("open_nodes until 2020 with times:\n%s\nwant\n%s", got, want)
			}

			// showTimes alone: everything, each fact with its time or null.
			got = stampStructured(t, call("open_nodes", map[string]any{"names": []string{"Ada", "Charles"}, "showTimes": true}))
			want = `{"entities":[{"createdAt":"2020-01-02T03:04:05Z","entityType":"person","name":"Ada","observationTimes":["2020-01-02T03:04:05Z",null,"T"],"observations":["wrote the first program","undated note","met Grace"],"updatedAt":"T"},{"entityType":"person","name":"Charles","observations":["designed engines"]}],"relations":[{"createdAt":"2020-01-05T00:00:00Z","from":"Ada","relationType":"worked with","to":"Charles"}]}`
			if got != want {
				t.Errorf("open_nodes with times:\n%s\nwant\n%s", got, want)
			}

			// search_nodes: the entities that match by what they learned in
			// the window, with what they learned in it; the limit counts
			// only those. Ada wrote before 2021: what she learned since
			// ("met Grace") does not match, so she is not found.
			wantStructured(t, call("search_nodes", map[string]any{"query": "wrote", "since": "2021-01-01T00:00:00Z", "limit": 1}), `{"entities":[
				{"name":"Grace","entityType":"person","observations":["wrote a compiler"]}],
				"relations":[{"from":"Grace","to":"Ada","relationType":"admired"}]}`)
			// Until before Ada met Grace: nothing learned by then says so.
			wantStructured(t, call("search_nodes", map[string]any{"query": "Grace", "until": "2020-12-31"}), `{"entities":[],"relations":[]}`)
			wantStructured(t, call("search_nodes", map[string]any{"query": "who did Ada meet?", "until": "2020-12-31"}), `{"entities":[
				{"name":"Ada","entityType":"person","observations":["wrote the first program"]}],
				"relations":[{"from":"Ada","to":"Charles","relationType":"worked with"}]}`)
			wantStructured(t, call("search_nodes", map[string]any{"query": "compiler", "since": "2021-01-01"}), `{"entities":[
				{"name":"Grace","entityType":"person","observations":["wrote a compiler"]}],
				"relations":[{"from":"Grace","to":"Ada","relationType":"admired"}]}`)
			wantStructured(t, call("search_nodes", map[string]any{"query": "wrote", "until": "2020-06-01T00:00:00+02:00"}), `{"entities":[
				{"name":"Ada","entityType":"person","observations":["wrote the first program"]}],
				"relations":[{"from":"Ada","to":"Charles","relationType":"worked with"}]}`)

			for _, tc := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"read_graph", map[string]any{"since": "yesterday"}, `Invalid arguments for tool read_graph: since must be a date (2026-11-30) or an RFC 3339 date-time (2026-11-30T09:15:00Z); got "yesterday"`},
				{"open_nodes", map[string]any{"names": []string{"Ada"}, "until": "2026-11-30T09:15:00"}, `Invalid arguments for tool open_nodes: until must be a date (2026-11-30) or an RFC 3339 date-time (2026-11-30T09:15:00Z); got "2026-11-30T09:15:00"`},
				{"search_nodes", map[string]any{"query": "x", "since": "2026-12-01", "until": "2026-11-30"}, `Invalid arguments for tool search_nodes: since (2026-12-01T00:00:00Z) is after until (2026-11-30T23:59:59Z)`},
				{"read_graph", map[string]any{"showTimes": "yes"}, `Invalid arguments for tool read_graph: showTimes must be true or false; got "yes"`},
				{"read_graph", map[string]any{"since": 2026}, `Invalid arguments for tool read_graph: since must be a string; got 2026`},
			} {
				res := call(tc.tool, tc.args)
				if !res.IsError || res.Content[0].(*mcp.TextContent).Text != tc.want {
					t.Errorf("%s %v: %+v, want the error %q", tc.tool, tc.args, res.Content[0], tc.want)
				}
			}
		})
	}
}

// stampStructured is the structured content with sorted keys and the times
// this test's writes recorded written "T".
func stampStructured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %+v", res.Content)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	text := compactJSON(t, string(b))
	if res.Content[0].(*mcp.TextContent).Text[0] == '{' && compactJSON(t, res.Content[0].(*mcp.TextContent).Text) != text {
		t.Errorf("the text differs from the structured content:\n%s", res.Content[0].(*mcp.TextContent).Text)
	}
	return recentQuoted.ReplaceAllStringFunc(text, func(v string) string { return string(stampTimes([]byte(v))) })
}

var recentQuoted = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)
