package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP hosts show tool errors to the user and often hide the server's
// stderr: a MEMORY_FILE_PATH that cannot work is named, with its fix, in
// the error of every tool call it breaks.
func TestBadMemoryPathInToolErrors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "mem")
	if err := os.Mkdir(file, 0o700); err != nil {
		t.Fatal(err)
	}
	want := "the memory file " + file + " is a directory: set MEMORY_FILE_PATH to a file in it, such as " + filepath.Join(file, "memory.jsonl")
	cs := connect(t, file, "2025-11-25", nil)
	for _, call := range []mcp.CallToolParams{
		{Name: "create_entities", Arguments: map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}}},
		{Name: "read_graph", Arguments: map[string]any{}},
		{Name: "search_nodes", Arguments: map[string]any{"query": "A"}},
	} {
		res, err := cs.CallTool(context.Background(), &call)
		if err != nil {
			t.Fatalf("%s: %v", call.Name, err)
		}
		if !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
			t.Errorf("%s: error %v %+v, want the tool error %q", call.Name, res.IsError, res.Content, want)
		}
	}
}
