package server

import (
	"context"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A tool registered as a write must be annotated as one, and a read as a
// read: the annotations tell clients what the call limits and the grants
// count it as.
func TestRegisteredAsAnnotated(t *testing.T) {
	s := New(nil, Options{})
	tool := func(name string, a *mcp.ToolAnnotations) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: object(map[string]*jsonschema.Schema{}), Annotations: a}
	}
	refused := func(name string, register func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), name) {
				t.Errorf("%s registered: %v", name, r)
			}
		}()
		register()
	}
	read := func(context.Context, struct{}) (*mcp.CallToolResult, error) { return nil, nil }
	write := func(context.Context, graph.Write, struct{}) (*mcp.CallToolResult, error) { return nil, nil }
	refused("w_as_read", func() { addTool(s, tool("w_as_read", mutating), read) })
	refused("r_as_write", func() { addWriteTool(s, tool("r_as_write", readOnly), write) })
	refused("unannotated", func() { addWriteTool(s, tool("unannotated", nil), write) })
	addWriteTool(s, tool("w", destructive), write)
	addTool(s, tool("r", readOnly), read)
	if !s.IsWrite("w") || s.IsWrite("r") {
		t.Errorf("IsWrite: w %v, r %v", s.IsWrite("w"), s.IsWrite("r"))
	}
}
