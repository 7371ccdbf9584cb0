package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// serverOn serves a generated graph of n entities with the given answer
// limit.
func serverOn(t *testing.T, n, limit int) (*Server, testgraph.Queries) {
	s, q, _ := serverOnGraph(t, n, limit)
	return s, q
}

func serverOnGraph(t testing.TB, n, limit int) (*Server, testgraph.Queries, *testgraph.Graph) {
	t.Helper()
	g, q := testgraph.Generate(n, 1)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	var b bytes.Buffer
	if err := g.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf, AnswerLimit: limit}), q, g
}

func textSize(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		n += len(c.(*mcp.TextContent).Text)
	}
	return n
}

type page struct {
	Entities   []map[string]any `json:"entities"`
	Relations  []map[string]any `json:"relations"`
	NextCursor string           `json:"nextCursor"`
}

func pageOf(t *testing.T, res *mcp.CallToolResult) page {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(t, res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var p page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// all follows the cursors of tool's answer to args and returns the parts put
// together, checking that each part fits limit.
func all(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, limit int) (whole page, parts int) {
	t.Helper()
	whole = page{Entities: []map[string]any{}, Relations: []map[string]any{}}
	for {
		res := call(t, cs, tool, args)
		if limit > 0 && textSize(res) > limit {
			t.Fatalf("%s part %d: %d bytes of text, limit %d", tool, parts+1, textSize(res), limit)
		}
		p := pageOf(t, res)
		parts++
		whole.Entities = append(whole.Entities, p.Entities...)
		whole.Relations = append(whole.Relations, p.Relations...)
		if p.NextCursor == "" {
			return whole, parts
		}
		if last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text; !strings.Contains(last, p.NextCursor) {
			t.Fatalf("a cut answer must say how to go on: %q", last)
		}
		args = clone(args)
		args["cursor"] = p.NextCursor
	}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A big answer comes in parts that fit the limit; put together they are
// the unlimited answer, in both protocol generations.
func TestPagedAnswersAreTheWholeAnswer(t *testing.T) {
	const limit = 4000
	cut, q := serverOn(t, 300, limit)
	whole, _ := serverOn(t, 300, 0)
	for _, version := range []string{handshakeVersion, sessionlessVersion} {
		t.Run(version, func(t *testing.T) {
			cs, ref := connect(t, cut, version, nil), connect(t, whole, version, nil)
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"read_graph", map[string]any{}},
				{"read_graph", map[string]any{"outline": true}},
				{"search_nodes", map[string]any{"query": q.Common}},
				{"search_nodes", map[string]any{"query": "who went to work in Tokyo last year?", "limit": 30}},
				{"open_nodes", map[string]any{"names": []string{"no such name"}}},
			} {
				got, parts := all(t, cs, c.tool, c.args, limit)
				want := pageOf(t, call(t, ref, c.tool, c.args))
				if parts < 2 && c.tool != "open_nodes" {
					t.Errorf("%s %v: %d part(s); the test wants a cut answer", c.tool, c.args, parts)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v: the parts put together differ from the whole answer (%d/%d entities, %d/%d relations)",
						c.tool, c.args, len(got.Entities), len(want.Entities), len(got.Relations), len(want.Relations))
				}
			}
		})
	}
}

func TestOutlineAndNeighbours(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, handshakeVersion, nil)
	call(t, cs, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Alice", "entityType": "person", "observations": []string{"likes tea", "lives in Leeds"}},
		{"name": "Bob", "entityType": "person", "observations": []string{}},
		{"name": "Acme", "entityType": "company", "observations": []string{"makes anvils"}},
		{"name": "Leeds", "entityType": "city", "observations": []string{}},
	}})
	call(t, cs, "create_relations", map[string]any{"relations": []map[string]any{
		{"from": "Alice", "to": "Acme", "relationType": "works_at"},
		{"from": "Bob", "to": "Alice", "relationType": "knows"},
		{"from": "Acme", "to": "Leeds", "relationType": "based_in"},
	}})

	outline := call(t, cs, "read_graph", map[string]any{"outline": true})
	if o := pageOf(t, outline); !reflect.DeepEqual(o.Entities[0], map[string]any{"name": "Alice", "entityType": "person", "observationCount": 2.0}) || len(o.Relations) != 3 {
		t.Errorf("outline: %s", resultText(t, outline))
	}

	names := func(p page) (out []string) {
		for _, e := range p.Entities {
			out = append(out, e["name"].(string))
		}
		return out
	}
	for depth, want := range [][]string{{"Alice"}, {"Alice", "Bob", "Acme"}, {"Alice", "Bob", "Acme", "Leeds"}} {
		p := pageOf(t, call(t, cs, "open_nodes", map[string]any{"names": []string{"Alice"}, "depth": depth}))
		if got := names(p); !reflect.DeepEqual(got, want) {
			t.Errorf("depth %d: %v, want %v", depth, got, want)
		}
		if depth == 1 && len(p.Relations) != 2 {
			t.Errorf("depth 1 relations: %v", p.Relations)
		}
	}
	if res := call(t, cs, "open_nodes", map[string]any{"names": []string{"Alice"}, "depth": 3}); !res.IsError {
		t.Errorf("depth 3 accepted: %s", resultText(t, res))
	}

	// A question in plain words: nothing holds it whole, the closest come,
	// with what matched first and a note saying so.
	res := call(t, cs, "search_nodes", map[string]any{"query": "Where does Alice live?"})
	p := pageOf(t, res)
	if len(p.Entities) == 0 || p.Entities[0]["name"] != "Alice" || p.Entities[0]["observations"].([]any)[0] != "lives in Leeds" {
		t.Errorf("question: %s", resultText(t, res))
	}
	if len(res.Content) != 2 || !strings.Contains(res.Content[1].(*mcp.TextContent).Text, "No entity contains the whole query") {
		t.Errorf("question notes: %s", resultText(t, res))
	}
	if p := pageOf(t, call(t, cs, "search_nodes", map[string]any{"query": "Where does Alice live?", "limit": 1})); len(p.Entities) != 1 {
		t.Errorf("limit 1: %d entities", len(p.Entities))
	}
}

func TestBadCursors(t *testing.T) {
	s, _ := serverOn(t, 200, 3000)
	cs := connect(t, s, sessionlessVersion, nil)
	first := pageOf(t, call(t, cs, "read_graph", map[string]any{}))
	if first.NextCursor == "" {
		t.Fatal("want a cut answer")
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_graph", map[string]any{"cursor": "garbage"}, "Invalid arguments for tool read_graph: bad cursor: it is not one this server gave"},
		{"read_graph", map[string]any{"cursor": first.NextCursor, "outline": true}, "other arguments"},
		{"search_nodes", map[string]any{"query": "work", "cursor": first.NextCursor}, "other arguments"},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(resultText(t, res), c.want) {
			t.Errorf("%s %v: %s", c.tool, c.args, resultText(t, res))
		}
	}
	// A cursor from before a change to what it skipped is refused.
	call(t, cs, "delete_entities", map[string]any{"entityNames": []string{first.Entities[0]["name"].(string)}})
	res := call(t, cs, "read_graph", map[string]any{"cursor": first.NextCursor})
	if !res.IsError || !strings.Contains(resultText(t, res), "the memory changed") {
		t.Errorf("stale cursor: %s", resultText(t, res))
	}
}

// Write tools list what they did; a call too big for one answer lists what
// fits, counts the rest, and saves everything.
func TestWriteAnswersFit(t *testing.T) {
	s, file := newTestServer(t)
	s.opts.AnswerLimit = 3000
	cs := connect(t, s, handshakeVersion, nil)
	var ents []map[string]any
	var names []string
	for i := range 200 {
		name := fmt.Sprintf("entity-%03d", i)
		names = append(names, name)
		ents = append(ents, map[string]any{"name": name, "entityType": "thing", "observations": []string{"an observation of " + name}})
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"create_entities", map[string]any{"entities": ents}},
		{"create_entities", map[string]any{"entities": ents}}, // all skipped
		{"add_observations", map[string]any{"observations": []map[string]any{{"entityName": "entity-000", "contents": names}}}},
		{"delete_entities", map[string]any{"entityNames": append(names, strings.Split(strings.Repeat("ghost,", 300), ",")...)}},
	} {
		res := call(t, cs, c.tool, c.args)
		if res.IsError || textSize(res) > 3000 {
			t.Fatalf("%s: error %v, %d bytes", c.tool, res.IsError, textSize(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		if c.tool != "delete_entities" && !strings.Contains(string(b), `"omitted":`) {
			t.Errorf("%s: no omitted count: %s", c.tool, b)
		}
		if last := res.Content[len(res.Content)-1].(*mcp.TextContent).Text; c.tool != "delete_entities" && !strings.Contains(last, "to fit the answer limit") {
			t.Errorf("%s: last text %q", c.tool, last)
		}
	}
	data, _ := os.ReadFile(file)
	if len(data) != 0 {
		t.Errorf("everything was deleted, the file still holds %d bytes", len(data))
	}
}

// Every tool's answer fits the default limit on a big memory (100k
// entities; 20k under the race detector, which makes the test ten times
// slower, not different).
func TestEveryAnswerFitsABigMemory(t *testing.T) {
	n := 100000
	if raceEnabled || testing.Short() {
		n = 20000
	}
	s, q, g := serverOnGraph(t, n, answer.DefaultLimit)
	cs := connect(t, s, sessionlessVersion, nil)
	var names []string
	for _, e := range g.Entities {
		names = append(names, e.Name)
	}
	var many []map[string]any
	for i := range 3000 {
		many = append(many, map[string]any{"name": fmt.Sprintf("new-%d", i), "entityType": "thing", "observations": []string{"a fact about new entity number " + fmt.Sprint(i)}})
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_graph", map[string]any{}},
		{"read_graph", map[string]any{"outline": true}},
		{"search_nodes", map[string]any{"query": q.Common}},
		{"search_nodes", map[string]any{"query": q.TwoWords}},
		{"search_nodes", map[string]any{"query": q.Japanese}},
		{"search_nodes", map[string]any{"query": q.Rare}},
		{"search_nodes", map[string]any{"query": "what did the engineer in Tokyo work on last spring?", "limit": 100}},
		{"open_nodes", map[string]any{"names": names}},
		{"open_nodes", map[string]any{"names": names[:20], "depth": 2}},
		{"create_entities", map[string]any{"entities": many}},
		{"create_entities", map[string]any{"entities": many}},
		{"delete_entities", map[string]any{"entityNames": names[:5000]}},
	} {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, resultText(t, res))
		}
		if size := textSize(res); size > answer.DefaultLimit {
			t.Errorf("%s %.60v: %d bytes of text, over %d", c.tool, c.args, size, answer.DefaultLimit)
		}
	}
}
