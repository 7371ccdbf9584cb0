//go:build !windows

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// meaningAnswer is what the tests of a by-meaning answer read of it.
type meaningAnswer struct {
	Entities []struct {
		Name                string   `json:"name"`
		Observations        []string `json:"observations"`
		OmittedObservations int      `json:"omittedObservations"`
	} `json:"entities"`
	Relations        []json.RawMessage `json:"relations"`
	OmittedRelations int               `json:"omittedRelations"`
}

func decodeMeaningAnswer(t *testing.T, text string) meaningAnswer {
	t.Helper()
	var ans meaningAnswer
	if err := json.NewDecoder(strings.NewReader(text)).Decode(&ans); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
	return ans
}

// TestMeaningAnswerLaidOutAsWordsBinary: through the binary, an answer by
// words and meaning is laid out as one by words: a hub found by meaning
// alone shows five relations per hit, the rest counted; and the evidence
// is chosen across the hits, so an entity whose fifteen observations all
// hold the query's rarer word shows all fifteen, the budget the hit
// found by meaning does not need.
func TestMeaningAnswerLaidOutAsWordsBinary(t *testing.T) {
	stub := meaningtest.New("m")
	t.Cleanup(stub.Close)
	cs, _ := startMeaningServer(t, filepath.Join(t.TempDir(), "memory.jsonl"), stub, "m")
	alice := []string{"spends weekends on photography"}
	for i := range 15 {
		alice = append(alice, fmt.Sprintf("paid invoice %d on time", i+1))
	}
	var bob []string
	for i := range 15 {
		bob = append(bob, fmt.Sprintf("hobby club meeting %d was in the hall", i+1))
	}
	ents := []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": alice},
		map[string]any{"name": "Bob", "entityType": "person", "observations": bob},
	}
	var rels []any
	for i := range 40 {
		name := fmt.Sprintf("Client %02d", i+1)
		ents = append(ents, map[string]any{"name": name, "entityType": "company", "observations": []string{"orders paper"}})
		rels = append(rels, map[string]any{"from": "Alice", "to": name, "relationType": "serves"})
	}
	if text, isErr := callTool(t, cs, "create_entities", map[string]any{"entities": ents}); isErr {
		t.Fatal(text)
	}
	if text, isErr := callTool(t, cs, "create_relations", map[string]any{"relations": rels}); isErr {
		t.Fatal(text)
	}

	// "camera" shares no word with anything: Alice is found by meaning.
	ans := decodeMeaningAnswer(t, waitMeaning(t, cs, "camera", "Alice"))
	if want := 5 * len(ans.Entities); len(ans.Relations) != want || ans.OmittedRelations != 40-want {
		t.Errorf("camera: %d entities, %d relations and %d omitted; want %d shown and %d omitted", len(ans.Entities), len(ans.Relations), ans.OmittedRelations, want, 40-want)
	}

	// Bob holds every word of "Bob hobby" (not in one field); Alice is
	// close by meaning.
	text := waitMeaningHas(t, cs, "Bob hobby", "Alice")
	ans = decodeMeaningAnswer(t, text)
	if ans.Entities[0].Name != "Bob" || len(ans.Entities[0].Observations) != 15 || ans.Entities[0].OmittedObservations != 0 {
		t.Errorf("Bob hobby: first %s with %d observations and %d omitted; want Bob with all 15:\n%s", ans.Entities[0].Name, len(ans.Entities[0].Observations), ans.Entities[0].OmittedObservations, text)
	}
	for _, e := range ans.Entities {
		if e.Name == "Alice" && (len(e.Observations) == 0 || e.Observations[0] != alice[0]) {
			t.Errorf("Bob hobby: Alice shows %q first, want her closest %q", e.Observations, alice[0])
		}
	}
}

// waitMeaningHas searches for query until its answer shows name, and
// returns that answer.
func waitMeaningHas(t *testing.T, cs *mcp.ClientSession, query, name string) string {
	t.Helper()
	var text string
	waitFor(t, fmt.Sprintf("%s in the answer to %q", name, query), func() bool {
		text = search(t, cs, query)
		return strings.Contains(text, fmt.Sprintf("%q", name))
	})
	return text
}
