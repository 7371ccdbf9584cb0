package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
