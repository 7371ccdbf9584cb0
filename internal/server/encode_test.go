package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/answer"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
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

func TestEncodeMatchesJSONStringify(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{
		{Name: "Alice", EntityType: "person", Observations: []string{"<b>&</b>", `quote " and \ backslash`, "tab\tnew\nline\x01", "東京", "Москва", "🧠"}},
		{Name: "Empty", EntityType: "", Observations: nil},
	})
	g.CreateRelations([]graph.Relation{{From: "Alice", To: "Empty", RelationType: "knows"}})
	count := 2
	cases := map[string]struct {
		write func(*answer.JSON)
		std   any
	}{
		"selection":       {writeSelection(g.All()), g.ReadGraph()},
		"empty selection": {writeSelection(g.Open(nil)), g.Open(nil).Snapshot()},
		"created":         {writeCreatedEntities(graph.CreateEntitiesResult{Entities: g.ReadGraph().Entities, Skipped: []string{"X", "Y"}}, 0), graph.CreateEntitiesResult{Entities: g.ReadGraph().Entities, Skipped: []string{"X", "Y"}}},
		"created none":    {writeCreatedEntities(graph.CreateEntitiesResult{Entities: []graph.Entity{}}, 0), graph.CreateEntitiesResult{Entities: []graph.Entity{}}},
		"relations":       {writeCreatedRelations(graph.CreateRelationsResult{Relations: g.ReadGraph().Relations}, 0), graph.CreateRelationsResult{Relations: g.ReadGraph().Relations}},
		"added":           {writeAddedObservations(graph.AddObservationsResult{Results: []graph.AddedObservations{{EntityName: "A", AddedObservations: []string{}}, {EntityName: "B", AddedObservations: []string{"x"}}}}, 0), graph.AddObservationsResult{Results: []graph.AddedObservations{{EntityName: "A", AddedObservations: []string{}}, {EntityName: "B", AddedObservations: []string{"x"}}}}},
		"deleted":         {writeDeleted(graph.DeleteResult{Success: true, Message: "m", NotFound: []string{"n"}}, 0), graph.DeleteResult{Success: true, Message: "m", NotFound: []string{"n"}}},
		"deleted count":   {writeDeleted(graph.DeleteResult{Success: true, Message: "m", DeletedCount: &count}, 0), graph.DeleteResult{Success: true, Message: "m", DeletedCount: &count}},
	}
	for name, c := range cases {
		for _, indent := range []bool{false, true} {
			got := string(answer.Encode(indent, c.write))
			if want := stdJSON(t, c.std, indent); got != want {
				t.Errorf("%s (indent %v):\ngot  %s\nwant %s", name, indent, got, want)
			}
		}
	}
}

// JSON.stringify leaves U+2028 and U+2029 raw; encoding/json escapes them.
func TestEncodeLineSeparatorsRaw(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{{Name: "a\u2028b\u2029c", EntityType: "t"}})
	got := string(answer.Encode(false, writeSelection(g.All())))
	if want := "{\"entities\":[{\"name\":\"a\u2028b\u2029c\",\"entityType\":\"t\",\"observations\":[]}],\"relations\":[]}"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
