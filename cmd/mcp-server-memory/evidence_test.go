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

// A question about the second of two people holding hundreds of facts
// each: through the binary, the answer shows each person's best-matching
// facts and leaves the rest out (counted, with a note that open_nodes
// shows them), so the fact asked about is within the first 4,000 bytes.
func TestSearchShowsEvidenceFirstThroughTheBinary(t *testing.T) {
	var lines []string
	for _, who := range []string{"Ann", "Bo"} {
		var obs []string
		for i := range 300 {
			obs = append(obs, fmt.Sprintf("%s volunteered at the shelter with a friend on day %d and walked the dogs", who, i))
		}
		if who == "Bo" {
			obs = append(obs, "Bo adopted a greyhound called Biscuit from the shelter on 12 March")
		}
		b, _ := json.Marshal(map[string]any{"type": "entity", "name": who, "entityType": "person", "observations": obs})
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, file, "2025-11-25", nil)
	res := p.call(context.Background(), t, "search_nodes", map[string]any{"query": "Which greyhound did Ann's friend adopt?"})
	text := toolText(res)
	if res.IsError {
		t.Fatalf("tool error: %s", text)
	}
	if i := strings.Index(text, "Bo adopted a greyhound"); i < 0 || i > 4000 {
		t.Errorf("the fact asked about is at byte %d, want within the first 4000:\n%.2000s", i, text)
	}
	if !strings.Contains(text, `"omittedObservations": 2`) || !strings.Contains(text, "open_nodes") {
		t.Errorf("no count of what was left out, or no pointer to open_nodes:\n%.2000s", text)
	}
}

// The observations shown are chosen across the hits: through the binary,
// the person the question names shows nineteen of her twenty matching
// facts, the other person, whose three hundred facts match one word, only
// his best one, each with the rest counted.
func TestSearchChoosesEvidenceAcrossHitsThroughTheBinary(t *testing.T) {
	var lines []string
	for _, who := range []string{"Bo", "Ann"} {
		var obs []string
		for i := range map[string]int{"Ann": 20, "Bo": 300}[who] {
			if who == "Ann" {
				obs = append(obs, fmt.Sprintf("Ann repaired the garden shed, visit %d", i))
			} else {
				obs = append(obs, fmt.Sprintf("Bo watered the garden on day %d", i))
			}
		}
		b, _ := json.Marshal(map[string]any{"type": "entity", "name": who, "entityType": "person", "observations": obs})
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		p := startServer(t, file, version, nil)
		res := p.call(context.Background(), t, "search_nodes", map[string]any{"query": "What did Ann do to the garden shed?"})
		text := toolText(res)
		if res.IsError {
			t.Fatalf("tool error: %s", text)
		}
		var got struct {
			Entities []struct {
				Name                string   `json:"name"`
				Observations        []string `json:"observations"`
				OmittedObservations int      `json:"omittedObservations"`
			} `json:"entities"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil {
			t.Fatalf("%s: %v\n%.2000s", version, err, text)
		}
		if len(got.Entities) != 2 || got.Entities[0].Name != "Ann" || len(got.Entities[0].Observations) != 19 || got.Entities[0].OmittedObservations != 1 ||
			got.Entities[1].Name != "Bo" || len(got.Entities[1].Observations) != 1 || got.Entities[1].OmittedObservations != 299 {
			t.Errorf("%s: want Ann with 19 shown and 1 omitted, then Bo with 1 and 299:\n%.3000s", version, text)
		}
	}
}

// A hub related to every other entity does not flood a search answer with
// its relations: through the binary, in both generations, the answer shows
// five relations per entity, the most relevant first (the one between two
// entities found, then those sharing the query's words), counts the rest
// in omittedRelations and says that open_nodes with depth shows them.
func TestSearchBoundsRelationsThroughTheBinary(t *testing.T) {
	lines := []string{`{"type":"entity","name":"default_user","entityType":"person","observations":["The user of this assistant, who keeps bees"]}`,
		`{"type":"entity","name":"Honey harvest","entityType":"event","observations":["The user took 12 kg of honey from the bees in July"]}`}
	for i := range 500 {
		lines = append(lines, fmt.Sprintf(`{"type":"entity","name":"note %d","entityType":"note","observations":["Something the user said, number %d"]}`, i, i))
		lines = append(lines, fmt.Sprintf(`{"type":"relation","from":"default_user","to":"note %d","relationType":"said"}`, i))
	}
	lines = append(lines, `{"type":"relation","from":"default_user","to":"Bee club","relationType":"member_of"}`,
		`{"type":"relation","from":"default_user","to":"Honey harvest","relationType":"took_part_in"}`)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		p := startServer(t, file, version, nil)
		res := p.call(context.Background(), t, "search_nodes", map[string]any{"query": "How much honey did the bees give?", "limit": 2})
		if res.IsError {
			t.Fatalf("tool error: %s", toolText(res))
		}
		var got struct {
			Entities []struct {
				Name string `json:"name"`
			} `json:"entities"`
			Relations []struct {
				From, To, RelationType string
			} `json:"relations"`
			Omitted    int    `json:"omittedRelations"`
			NextCursor string `json:"nextCursor"`
		}
		first := res.Content[0].(*mcp.TextContent).Text
		if err := json.Unmarshal([]byte(first), &got); err != nil {
			t.Fatalf("%s: %v\n%.2000s", version, err, first)
		}
		if len(got.Entities) != 2 || len(got.Relations) != 10 || got.Omitted != 492 || got.NextCursor != "" {
			t.Fatalf("%s: %d entities, %d relations, %d omitted, cursor %q; want 2, 10, 492 and none:\n%.3000s", version, len(got.Entities), len(got.Relations), got.Omitted, got.NextCursor, first)
		}
		if r := got.Relations[0]; r.To != "Honey harvest" {
			t.Errorf("%s: first relation %+v, want the one between the two entities found", version, r)
		}
		if r := got.Relations[1]; r.To != "Bee club" {
			t.Errorf("%s: second relation %+v, want the one sharing a word of the query", version, r)
		}
		if text := toolText(res); !strings.Contains(text, "492 more relations") || !strings.Contains(text, "depth 1") {
			t.Errorf("%s: no note of the relations left out:\n%.3000s", version, text)
		}
		if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"omittedRelations":492`) {
			t.Errorf("%s: structured content without omittedRelations: %.300s", version, sc)
		}
	}
}

// Prefix search through the binary: auth* finds the words beginning with
// "auth", not "oauth"; the tool's description says so.
func TestSearchPrefixThroughTheBinary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	seed := `{"type":"entity","name":"Login service","entityType":"service","observations":["Handles authentication"]}
{"type":"entity","name":"Notes","entityType":"note","observations":["Mentions oauth in passing"]}
{"type":"entity","name":"Mary Shelley","entityType":"person","observations":["Author of Frankenstein"]}
`
	if err := os.WriteFile(file, []byte(seed), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		p := startServer(t, file, version, nil)
		res := p.call(context.Background(), t, "search_nodes", map[string]any{"query": "auth*"})
		var got struct {
			Entities []struct {
				Name string `json:"name"`
			} `json:"entities"`
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &got); err != nil || res.IsError {
			t.Fatalf("%s: %v %s", version, err, toolText(res))
		}
		if len(got.Entities) != 2 || got.Entities[0].Name != "Login service" || got.Entities[1].Name != "Mary Shelley" {
			t.Errorf("%s: auth* found %+v, want Login service and Mary Shelley", version, got.Entities)
		}
	}
}
