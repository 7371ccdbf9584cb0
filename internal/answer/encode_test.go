package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// stdJSON renders v as encoding/json does without HTML escaping, which is
// JSON.stringify's output for strings without U+2028/U+2029.
func stdJSON(t *testing.T, v any, indent bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestEncodeMatchesJSONStringify checks every write tool's answer and the
// resource against encoding/json: the text item is the reference's
// indented JSON, and the structured content the same value compact.
func TestEncodeMatchesJSONStringify(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{
		{Name: "Alice", EntityType: "person", Observations: []string{"<b>&</b>", `quote " and \ backslash`, "tab\tnew\nline\x01", "東京", "Москва", "🧠"}},
		{Name: "Empty", EntityType: "", Observations: nil},
	})
	g.CreateRelations([]graph.Relation{{From: "Alice", To: "Empty", RelationType: "knows"}})
	count := 2
	created := graph.CreateEntitiesResult{Entities: g.ReadGraph().Entities, Skipped: []string{"X", "Y"}}
	added := graph.AddObservationsResult{Results: []graph.AddedObservations{{EntityName: "A", AddedObservations: []string{}}, {EntityName: "B", AddedObservations: []string{"x"}}}}
	deleted := graph.DeleteResult{Success: true, Message: "m", NotFound: []string{"n"}}
	counted := graph.DeleteResult{Success: true, Message: "m", DeletedCount: &count}
	cases := map[string]struct {
		got Result
		std any
	}{
		"selection":       {Result{Texts: []string{Graph(g.ReadGraph())}}, g.ReadGraph()},
		"empty selection": {Result{Texts: []string{Graph(graph.New().ReadGraph())}}, graph.New().ReadGraph()},
		"created":         {CreatedEntities(created, 0), created},
		"created none":    {CreatedEntities(graph.CreateEntitiesResult{Entities: []graph.Entity{}}, 0), graph.CreateEntitiesResult{Entities: []graph.Entity{}}},
		"relations":       {CreatedRelations(graph.CreateRelationsResult{Relations: g.ReadGraph().Relations}, 0), graph.CreateRelationsResult{Relations: g.ReadGraph().Relations}},
		"added":           {AddedObservations(added, 0), added},
		"deleted":         {Deleted(deleted, 0), deleted},
		"deleted count":   {Deleted(counted, 0), counted},
	}
	for name, c := range cases {
		if c.got.Structured != nil {
			if want := stdJSON(t, c.std, false); string(c.got.Structured) != want {
				t.Errorf("%s structured:\ngot  %s\nwant %s", name, c.got.Structured, want)
			}
		}
		if strings.HasPrefix(name, "deleted") {
			if c.got.Texts[0] != "m" {
				t.Errorf("%s text: got %q, want the message", name, c.got.Texts[0])
			}
			continue
		}
		if want := stdJSON(t, c.std, true); c.got.Texts[0] != want {
			t.Errorf("%s text:\ngot  %s\nwant %s", name, c.got.Texts[0], want)
		}
	}
}

// JSON.stringify leaves U+2028 and U+2029 raw; encoding/json escapes them.
func TestEncodeLineSeparatorsRaw(t *testing.T) {
	r := CreatedEntities(graph.CreateEntitiesResult{Entities: []graph.Entity{{Name: "a\u2028b\u2029c", EntityType: "t"}}}, 0)
	if want := "{\"entities\":[{\"name\":\"a\u2028b\u2029c\",\"entityType\":\"t\",\"observations\":[]}]}"; string(r.Structured) != want {
		t.Errorf("got %q, want %q", r.Structured, want)
	}
	if !strings.Contains(r.Texts[0], "\"a\u2028b\u2029c\"") {
		t.Errorf("text item %q escapes the line separators", r.Texts[0])
	}
}

// The structured content is the text item without its white space, byte
// for byte, on every part of every answer, whole or cut, outline or not,
// and on every write tool's answer cut to a limit.
func TestEncodedOnceTextAndStructuredAgree(t *testing.T) {
	agree := func(t *testing.T, what string, r Result) {
		t.Helper()
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(r.Texts[0])); err != nil {
			t.Fatalf("%s: text item is not JSON: %v", what, err)
		}
		if !bytes.Equal(compact.Bytes(), r.Structured) {
			t.Fatalf("%s: structured content is not the text item:\ntext       %s\nstructured %s", what, compact.Bytes(), r.Structured)
		}
	}
	for _, s := range seeds() {
		r := rand.New(rand.NewPCG(s, 0))
		g := randomGraph(r)
		for _, a := range []*Answer{allOf(g), pagingAnswer(g, true), {Tool: "read_graph", Request: "outline", Outline: true, Entities: allOf(g).Entities, Relations: g.Relations()}} {
			for _, limit := range []int{0, MinLimit + r.IntN(4000)} {
				cursor := ""
				for part := 1; ; part++ {
					p, err := a.Page(limit, cursor)
					if err != nil {
						t.Fatal(err)
					}
					agree(t, fmt.Sprintf("seed %d %s limit %d part %d", s, a.Request, limit, part), p)
					if cursor = p.NextCursor; cursor == "" {
						break
					}
				}
			}
		}
		created := graph.CreateEntitiesResult{Entities: g.ReadGraph().Entities, Skipped: []string{"a", "b"}}
		var added graph.AddObservationsResult
		for _, e := range created.Entities {
			added.Results = append(added.Results, graph.AddedObservations{EntityName: e.Name, AddedObservations: e.Observations})
		}
		for _, limit := range []int{0, MinLimit} {
			agree(t, fmt.Sprintf("seed %d create_entities limit %d", s, limit), CreatedEntities(created, limit))
			agree(t, fmt.Sprintf("seed %d create_relations limit %d", s, limit), CreatedRelations(graph.CreateRelationsResult{Relations: g.ReadGraph().Relations}, limit))
			agree(t, fmt.Sprintf("seed %d add_observations limit %d", s, limit), AddedObservations(added, limit))
		}
	}
}

// BenchmarkEncodeWholeAnswer encodes read_graph's whole answer (no limit)
// and a search's matching thousands of entities, of a generated memory of
// 10k entities: the text item and the structured content, as one tool call
// encodes them.
//
//	go test ./internal/answer -run XXX -bench EncodeWholeAnswer -benchmem
func BenchmarkEncodeWholeAnswer(b *testing.B) {
	tg, q := testgraph.Generate(10000, 1)
	var file bytes.Buffer
	if err := tg.WriteJSONL(&file); err != nil {
		b.Fatal(err)
	}
	g := jsonl.Decode(file.Bytes()).Graph
	search := func() *Answer {
		found := g.SearchRanked(q.Common, 0)
		a := &Answer{Tool: "search_nodes", Request: "search", Relations: found.Relations}
		for _, h := range found.Hits {
			a.Entities = append(a.Entities, View{Entity: h.Entity, First: h.Matched})
		}
		return a
	}
	for _, c := range []struct {
		name   string
		answer func() *Answer
	}{{"read_graph", func() *Answer { return allOf(g) }}, {"search_common", search}} {
		b.Run(c.name, func(b *testing.B) {
			a := c.answer()
			var size int
			for b.Loop() {
				p, err := a.Page(0, "")
				if err != nil {
					b.Fatal(err)
				}
				size = len(p.Texts[0]) + len(p.Structured)
			}
			b.SetBytes(int64(size))
		})
	}
}
