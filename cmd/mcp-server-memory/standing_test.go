package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const standingHeading = "Standing preferences and instructions of the user, newest first; follow them in this answer:"

// TestStandingPreferencesInEveryGeneration: observations that begin with
// "Standing preference:" or "Standing instruction:" come with every search
// answer, whatever its words, newest first and within 1 KB, and the
// standing resource lists them all.
func TestStandingPreferencesInEveryGeneration(t *testing.T) {
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			updates := make(chan string, 100)
			cs, acks := connectWatchingAcks(t, filepath.Join(t.TempDir(), "memory.jsonl"), version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			subscribeTo(t, cs, version, acks, "memory://standing-preferences")
			ctx := context.Background()
			call := func(name string, args any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("%s: %v %+v", name, err, res)
				}
				return res
			}
			standingItem := func(query string) string {
				t.Helper()
				res := call("search_nodes", map[string]any{"query": query})
				for _, c := range res.Content[1:] {
					if text := c.(*mcp.TextContent).Text; strings.HasPrefix(text, standingHeading) {
						return text
					}
				}
				return ""
			}
			call("create_entities", map[string]any{"entities": []map[string]any{
				{"name": "default_user", "entityType": "person", "observations": []string{"Standing instruction: always format code with syntax highlighting", "Lives in Leeds"}},
				{"name": "Acme", "entityType": "organization", "observations": []string{"Makes anvils"}},
			}})
			select {
			case uri := <-updates:
				if uri != "memory://standing-preferences" {
					t.Errorf("update of %s", uri)
				}
			case <-time.After(10 * time.Second):
				t.Error("no update of memory://standing-preferences after a write")
			}
			if got := standingItem("Acme"); got == "" {
				t.Fatal("no standing item for a query that shares no word with the instruction")
			}
			call("add_observations", map[string]any{"observations": []map[string]any{
				{"entityName": "default_user", "contents": []string{"  STANDING PREFERENCE: metric units only"}},
			}})
			want := standingHeading + "\ndefault_user:\n-   STANDING PREFERENCE: metric units only\n- Standing instruction: always format code with syntax highlighting"
			if got := standingItem("show me how to implement a login feature"); got != want {
				t.Errorf("standing item:\n%s\nwant:\n%s", got, want)
			}

			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://standing-preferences"})
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != want || res.Contents[0].MIMEType != "text/plain" {
				t.Errorf("standing resource: %v %+v", err, res)
			}

			var many []string
			for i := range 40 {
				many = append(many, fmt.Sprintf("Standing preference: number %02d of a long list of ways the user likes answers", i))
			}
			call("add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Acme", "contents": many}}})
			got := standingItem("anything at all")
			if len(got) > 1024 || !strings.Contains(got, "\nAcme:\n- Standing preference: number 39 ") ||
				!strings.HasSuffix(got, " more: read the resource memory://standing-preferences)") {
				t.Errorf("standing item over many facts (%d bytes):\n%s", len(got), got)
			}
			res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://standing-preferences"})
			if err != nil || strings.Count(res.Contents[0].Text, "\n- ") != 42 || strings.Count(res.Contents[0].Text, "\ndefault_user:\n") != 1 {
				t.Errorf("standing resource over many facts: %v %+v", err, res)
			}
		})
	}
}

// TestNoStandingItemWithoutStandingFacts: a memory without standing facts
// answers searches exactly as before.
func TestNoStandingItemWithoutStandingFacts(t *testing.T) {
	cs := connect(t, filepath.Join(t.TempDir(), "memory.jsonl"), "2025-06-18", nil)
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{"entities": []map[string]any{
		{"name": "default_user", "entityType": "person", "observations": []string{"Prefers tea", "Said standing preference: is a phrase"}},
	}}}); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_nodes", Arguments: map[string]any{"query": "tea"}})
	if err != nil || len(res.Content) != 1 {
		t.Errorf("search without standing facts: %v %+v", err, res.Content)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://standing-preferences"})
	if err != nil || !strings.HasPrefix(rr.Contents[0].Text, "No standing preferences or instructions yet.") {
		t.Errorf("empty standing resource: %v %+v", err, rr)
	}
}
