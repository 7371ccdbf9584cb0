package server

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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

// readToolsOnly is a tools/list result as a token that may only read sees
// it: the read tools alone, since it may call no other.
func readToolsOnly(res mcp.Result) mcp.Result {
	list, ok := res.(*mcp.ListToolsResult)
	if !ok || list == nil {
		return res
	}
	only := *list
	only.Tools = []*mcp.Tool{}
	for _, t := range list.Tools {
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			only.Tools = append(only.Tools, t)
		}
	}
	return &only
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
		return boundedName(info.Name)
	}
	return ""
}

// maxClientName bounds the client name a write records: a client chooses
// it, and every write of its session carries it.
const maxClientName = 128

// boundedName is a client's name as the history keeps it: control
// characters dropped, cut to maxClientName bytes at a character boundary.
func boundedName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	if len(name) <= maxClientName {
		return name
	}
	cut := maxClientName
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// memoryName names the memory in messages.
func (s *Server) memoryName() string {
	if s.opts.Memory == "" {
		return "default"
	}
	return s.opts.Memory
}
