package server

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ScopeWrite is the scope a request's token must carry to call a write
// tool, when the request carries token information at all. The HTTP layer
// (internal/httpserver, serving named memories) decides the scopes from the
// tokens file and hands them to the go-sdk, which gives them to handlers as
// RequestExtra.TokenInfo; they come from the server's own request context,
// never from anything a client sends. Requests without token information
// (stdio, or HTTP with one token or none) may write.
const ScopeWrite = "write"

// mayWrite reports whether req may call a write tool.
func mayWrite(req mcp.Request) bool {
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return true
	}
	return slices.Contains(extra.TokenInfo.Scopes, ScopeWrite)
}

// memoryName names the memory in messages.
func (s *Server) memoryName() string {
	if s.opts.Memory == "" {
		return "default"
	}
	return s.opts.Memory
}
