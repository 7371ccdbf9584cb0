package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// badArguments are bad arguments for every tool and the one sentence each
// gets back. byHandler marks a check the tool makes beyond its published
// schema.
var badArguments = []struct {
	tool, args, want string
	byHandler        bool
}{
	{tool: "create_entities", args: `{}`, want: "entities is required: an array of objects with name, entityType and observations"},
	{tool: "create_entities", args: `{"entities":"Alice"}`, want: `entities must be an array of objects with name, entityType and observations; got "Alice"`},
	{tool: "create_entities", args: `{"entities":[null]}`, want: "entities[0] must be an object with name, entityType and observations; got null"},
	{tool: "create_entities", args: `{"entities":[{"name":"A","entityType":"t"}]}`, want: "entities[0].observations is required: an array of strings"},
	{tool: "create_entities", args: `{"entities":[{"entityType":"t","observations":[]}]}`, want: "entities[0].name is required: a string"},
	{tool: "create_entities", args: `{"entities":[{"name":"A","entityType":"t","observations":[]},{"name":5,"entityType":"t","observations":[]}]}`, want: "entities[1].name must be a string; got 5"},
	{tool: "create_entities", args: `{"entities":[{"name":"A","entityType":"t","observations":["a",{"b":1}]}]}`, want: "entities[0].observations[1] must be a string; got an object"},
	{tool: "create_relations", args: `{"relations":{}}`, want: "relations must be an array of objects with from, to and relationType; got an object"},
	{tool: "create_relations", args: `{"relations":[{"from":"a","to":"b"}]}`, want: "relations[0].relationType is required: a string"},
	{tool: "add_observations", args: `{"observations":[{"entityName":"a","contents":"x"}]}`, want: `observations[0].contents must be an array of strings; got "x"`},
	{tool: "add_observations", args: `{"observations":[{"entityName":"a","contents":[1.5]}]}`, want: "observations[0].contents[0] must be a string; got 1.5"},
	{tool: "add_observations", args: `{"observations":[{"contents":[]}]}`, want: "observations[0].entityName is required: a string"},
	{tool: "delete_entities", args: `{"entityNames":null}`, want: "entityNames must be an array of strings; got null"},
	{tool: "delete_entities", args: `5`, want: "the arguments must be an object with entityNames; got 5"},
	{tool: "delete_observations", args: `{"deletions":[{"entityName":"a"}]}`, want: "deletions[0].observations is required: an array of strings"},
	{tool: "delete_observations", args: `{"deletions":[{"entityName":false,"observations":[]}]}`, want: "deletions[0].entityName must be a string; got false"},
	{tool: "delete_relations", args: `{"relations":[{"from":"a","to":"b","relationType":true}]}`, want: "relations[0].relationType must be a string; got true"},
	{tool: "delete_relations", args: `{}`, want: "relations is required: an array of objects with from, to and relationType"},
	{tool: "read_graph", args: `{"outline":"yes"}`, want: `outline must be true or false; got "yes"`},
	{tool: "read_graph", args: `{"cursor":5}`, want: "cursor must be a string; got 5"},
	{tool: "read_graph", args: `[]`, want: "the arguments must be an object; got an array"},
	{tool: "search_nodes", args: `{}`, want: "query is required: a string"},
	{tool: "search_nodes", args: `{"query":["x"]}`, want: "query must be a string; got an array"},
	{tool: "search_nodes", args: `{"query":"x","limit":0}`, want: "limit must be a whole number from 1 to 100; got 0"},
	{tool: "search_nodes", args: `{"query":"x","limit":101}`, want: "limit must be a whole number from 1 to 100; got 101"},
	{tool: "search_nodes", args: `{"query":"x","limit":2.5}`, want: "limit must be a whole number from 1 to 100; got 2.5"},
	{tool: "search_nodes", args: `{"query":"x","limit":"` + strings.Repeat("ж", 50) + `"}`, want: `limit must be a whole number from 1 to 100; got "` + strings.Repeat("ж", 40) + `…"`},
	{tool: "search_nodes", args: `{"query":"` + strings.Repeat("東", graph.MaxQueryLength+1) + `"}`, want: fmt.Sprintf("query must be a string of at most %d characters; got %d characters", graph.MaxQueryLength, graph.MaxQueryLength+1), byHandler: true},
	{tool: "open_nodes", args: `{"names":["a"],"depth":3}`, want: "depth must be 0, 1 or 2; got 3"},
	{tool: "open_nodes", args: `{"names":["a"],"depth":-1}`, want: "depth must be 0, 1 or 2; got -1"},
	{tool: "open_nodes", args: `{"names":["a"],"depth":1.5}`, want: "depth must be 0, 1 or 2; got 1.5"},
	{tool: "open_nodes", args: `{"names":["a"],"depth":"1"}`, want: `depth must be 0, 1 or 2; got "1"`},
	{tool: "open_nodes", args: `{"names":["a"],"depth":1e400}`, want: "depth must be 0, 1 or 2; got 1e400"},
	{tool: "open_nodes", args: `{"names":"Alice"}`, want: `names must be an array of strings; got "Alice"`},
	{tool: "open_nodes", args: `{"names":["a",7]}`, want: "names[1] must be a string; got 7"},
	{tool: "open_nodes", args: `null`, want: "names is required: an array of strings"},
}

// Every schema error of every tool is one sentence that names the argument
// and what it must be, as a tool error, in both protocol generations.
func TestBadArguments(t *testing.T) {
	tools := map[string]bool{}
	for _, version := range []string{handshakeVersion, sessionlessVersion} {
		t.Run(version, func(t *testing.T) {
			s, _ := newTestServer(t)
			cs := connect(t, s, version, nil)
			for _, tc := range badArguments {
				tools[tc.tool] = true
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
				if err != nil {
					t.Errorf("%s %.80s: a protocol error, not a tool error: %v", tc.tool, tc.args, err)
					continue
				}
				want := "Invalid arguments for tool " + tc.tool + ": " + tc.want
				if got := resultText(t, res); !res.IsError || got != "null\n"+want {
					t.Errorf("%s %.80s:\n got %q (isError %v)\nwant %q", tc.tool, tc.args, got, res.IsError, want)
				}
			}
		})
	}
	if len(tools) != 9 {
		t.Errorf("the table covers %d tools, want all 9", len(tools))
	}
}

// The checks refuse exactly what the published schemas refuse (apart from
// the checks the tools make beyond them), and accept what they accept:
// whole numbers written as 2.0 or 1e1 too.
func TestArgumentChecksAgreeWithTheSchemas(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, handshakeVersion, nil)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var sch jsonschema.Schema
		if err := json.Unmarshal(b, &sch); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = sch.Resolve(nil); err != nil {
			t.Fatal(err)
		}
	}
	validate := func(tool, args string) error {
		var v any
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			return err // 1e400: not even a float64
		}
		if v == nil {
			v = map[string]any{}
		}
		return schemas[tool].Validate(v)
	}
	for _, tc := range badArguments {
		if err := validate(tc.tool, tc.args); (err == nil) != tc.byHandler {
			t.Errorf("%s %.80s: the published schema says %v", tc.tool, tc.args, err)
		}
	}
	for _, good := range []struct{ tool, args string }{
		{"open_nodes", `{"names":["a"],"depth":2.0}`},
		{"search_nodes", `{"query":"a","limit":1e1}`},
		{"read_graph", `{"outline":true,"anything":"else"}`},
		{"create_entities", `{"entities":[]}`},
	} {
		if err := validate(good.tool, good.args); err != nil {
			t.Fatalf("%s %s: %v", good.tool, good.args, err)
		}
		if res := call(t, cs, good.tool, json.RawMessage(good.args)); res.IsError {
			t.Errorf("%s %s: %s", good.tool, good.args, resultText(t, res))
		}
	}
}

// A schema with a keyword the checks do not know is refused when the tool
// is added, not silently left unchecked.
func TestUnknownSchemaKeywordRefused(t *testing.T) {
	for _, sch := range []*jsonschema.Schema{
		object(map[string]*jsonschema.Schema{"q": {Type: "string", MaxLength: jsonschema.Ptr(3)}}),
		object(map[string]*jsonschema.Schema{"q": {Type: "number"}}),
		object(map[string]*jsonschema.Schema{"q": {Type: "array"}}),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("schema %v accepted", sch.Properties["q"])
				}
			}()
			checkSchemaKeywords("t", sch)
		}()
	}
	checkSchemaKeywords("t", object(map[string]*jsonschema.Schema{"q": str("d"), "n": depthArg, "o": outlineArg, "e": array(entitySchema(), "")}, "q"))
}
