package httpserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hidePaths is MCP middleware that takes the memory file's directory out of
// the error messages clients see (tool errors and JSON-RPC errors, such as
// "saving /var/lib/mcp-memory/memory.jsonl: no space left on device"), so a
// remote client learns the file's name but not the server's file layout.
// The server's log keeps the full path.
func hidePaths(memoryFile string) mcp.Middleware {
	prefix := filepath.Dir(memoryFile) + string(filepath.Separator)
	hide := func(s string) string { return strings.ReplaceAll(s, prefix, "") }
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil && strings.Contains(err.Error(), prefix) {
				// internal/server has already given every error a code.
				var we *jsonrpc.Error
				if errors.As(err, &we) {
					err = &jsonrpc.Error{Code: we.Code, Message: hide(we.Message), Data: we.Data}
				}
			}
			if tr, ok := res.(*mcp.CallToolResult); ok && tr.IsError {
				for _, c := range tr.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						tc.Text = hide(tc.Text)
					}
				}
			}
			return res, err
		}
	}
}
