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

// TokenLabelKey is the member of the go-sdk's TokenInfo.Extra where the
// HTTP layer puts the label the tokens file gives the request's token.
const TokenLabelKey = "label"

// clientName names the client a write is recorded as made by: the label
// of the request's token when the tokens file gives one, else the name
// the client gave in its clientInfo (at initialize, or on each request of
// the 2026-07-28 protocol).
func clientName(req *mcp.CallToolRequest) string {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if label, _ := extra.TokenInfo.Extra[TokenLabelKey].(string); label != "" {
			return label
		}
	}
	if info := req.ClientInfo(); info != nil {
		return info.Name
	}
	return ""
}

// memoryName names the memory in messages.
func (s *Server) memoryName() string {
	if s.opts.Memory == "" {
		return "default"
	}
	return s.opts.Memory
}
