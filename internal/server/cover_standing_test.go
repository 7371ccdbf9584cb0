package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func readStandingResource(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: StandingURI})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; c.URI != StandingURI || c.MIMEType != "text/plain" {
		t.Errorf("standing resource: %+v", c)
	}
	return res.Contents[0].Text
}

func addObservations(t *testing.T, cs *mcp.ClientSession, entity string, contents ...string) {
	t.Helper()
	call(t, cs, "create_entities", map[string]any{"entities": []any{map[string]any{"name": entity, "entityType": "person", "observations": []string{}}}})
	if failed, got := callText(t, cs, "add_observations", map[string]any{"observations": []any{map[string]any{"entityName": entity, "contents": contents}}}); failed {
		t.Fatal(got)
	}
}

func TestStandingResource(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, handshakeVersion, nil)
	if got := readStandingResource(t, cs); !strings.HasPrefix(got, "No standing preferences or instructions yet.") {
		t.Errorf("empty memory: %q", got)
	}
	call(t, cs, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "default_user", "entityType": "person", "observations": []string{}},
		map[string]any{"name": "Bob", "entityType": "person", "observations": []string{}},
	}})
	// One write: one time for all, so newest first is the order of the
	// memory, the later first.
	call(t, cs, "add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "default_user", "contents": []string{"likes tea", "Standing preference: answer in French", "Standing instruction: no emoji"}},
		map[string]any{"entityName": "Bob", "contents": []string{"  standing INSTRUCTION: call him Robert"}},
	}})
	want := standingHeading + "\nBob:\n-   standing INSTRUCTION: call him Robert\ndefault_user:\n- Standing instruction: no emoji\n- Standing preference: answer in French"
	if got := readStandingResource(t, cs); got != want {
		t.Errorf("standing resource:\n%s\nwant\n%s", got, want)
	}
	// Every search answer carries them, whatever its words.
	failed, got := callText(t, cs, "search_nodes", map[string]any{"query": "nothing matches this"})
	if failed || !strings.Contains(got, want) {
		t.Errorf("search answer without the standing facts:\n%s", got)
	}
	if _, got := callText(t, cs, "read_graph", nil); strings.Contains(got, standingHeading) {
		t.Errorf("read_graph answer with a standing note:\n%s", got)
	}
}

func TestStandingNoteBounded(t *testing.T) {
	s, _ := newTestServer(t)
	cs := connect(t, s, handshakeVersion, nil)
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("Standing preference: number %02d %s", i, strings.Repeat("x", 40)))
	}
	addObservations(t, cs, "default_user", many...)
	_, got := callText(t, cs, "search_nodes", map[string]any{"query": "zzz"})
	note := got[strings.Index(got, standingHeading):]
	if len(note) > maxStandingNote || !strings.Contains(note, "number 39") || strings.Contains(note, "number 00") ||
		!strings.HasSuffix(note, " more: read the resource memory://standing-preferences)") {
		t.Errorf("note of %d bytes:\n%s", len(note), note)
	}
	if text := readStandingResource(t, cs); !strings.Contains(text, "number 00") || !strings.Contains(text, "number 39") {
		t.Errorf("the resource leaves some out:\n%s", text)
	}
}

func TestStandingNoteTooLongForTheBudget(t *testing.T) {
	facts := []standingFact{{entity: "u", text: "Standing preference: " + strings.Repeat("y", 100)}, {entity: "u", text: "Standing preference: z"}}
	if got, want := standingNote(facts, 50), standingHeading+" (2 more: read the resource memory://standing-preferences)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := standingNote(nil, 50); got != "" {
		t.Errorf("no facts: %q", got)
	}
}

func TestStandingResourceBounded(t *testing.T) {
	var facts []standingFact
	for i := range 1000 {
		facts = append(facts, standingFact{entity: fmt.Sprintf("e%d", i%3), text: "Standing instruction: " + strings.Repeat("w", 60)})
	}
	got := standingText(facts)
	if len(got) > maxStandingResource || !strings.Contains(got, " older ones left out to keep this under 32768 bytes: search_nodes with the query \"standing\" finds them)") {
		t.Errorf("resource of %d bytes ends %q", len(got), got[max(0, len(got)-200):])
	}
}
