package server

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Answers sized to the host (docs/design.md §8; the table with its sources
// is in docs/hosts.md). Hosts cut tool results at different sizes, and
// say who they are in clientInfo.name (initialize's params in 2025
// protocols, each request's _meta in 2026-07-28). Where
// MEMORY_ANSWER_LIMIT is not set (Options.AnswerLimitByHost), a known
// host's answers fit what it takes; any other client gets
// Options.AnswerLimit.

// hostLimits are the answer limits of hosts that cut results below the
// default, by clientInfo.name compared without regard to case.
var hostLimits = map[string]int{
	// Claude Code warns past 10,000 tokens, refuses past 25,000
	// (MAX_MCP_OUTPUT_TOKENS), and puts a result over 50,000 characters
	// into a file the model has to read back.
	"claude-code": 30000,
	// GitHub Copilot CLI cuts an MCP result to 10 KiB without saying so.
	"github-copilot-developer": 10000,
	// Codex cuts tool output to 10 KiB or 256 lines, whichever comes
	// first; at about 35 bytes a line of indented JSON, 8000 bytes is
	// about 230 lines.
	"codex-mcp-client": 8000,
	"codex":            8000,
}

// ClaudeResultSizeKey is the tools/list _meta key with which a tool tells
// Claude Code the largest result, in characters, it keeps inline instead
// of putting it into a file (up to claudeResultSizeCeiling; the default
// is claudeInlineChars).
const (
	ClaudeResultSizeKey     = "anthropic/maxResultSizeChars"
	claudeInlineChars       = 50000
	claudeResultSizeCeiling = 500000
)

type limitKey struct{}

// withAnswerLimit returns ctx carrying the answer limit of the client that
// sent req.
func (s *Server) withAnswerLimit(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	limit := s.opts.AnswerLimit
	if s.opts.AnswerLimitByHost {
		if info := req.ClientInfo(); info != nil {
			if l, ok := hostLimits[strings.ToLower(info.Name)]; ok {
				limit = l
			}
		}
	}
	return context.WithValue(ctx, limitKey{}, limit)
}

// limit is the answer limit of the call ctx belongs to.
func (s *Server) limit(ctx context.Context) int {
	if l, ok := ctx.Value(limitKey{}).(int); ok {
		return l
	}
	return s.opts.AnswerLimit
}

// toolMeta is the _meta of every tool: Claude Code's result size, only
// when an answer may be longer than Claude Code keeps inline, which only a
// MEMORY_ANSWER_LIMIT set above it (or 0, no limit) allows; Claude Code's
// own answers are sized below it otherwise.
func (s *Server) toolMeta() mcp.Meta {
	limit := s.opts.AnswerLimit
	if s.opts.AnswerLimitByHost || limit > 0 && limit <= claudeInlineChars {
		return nil
	}
	if limit == 0 || limit > claudeResultSizeCeiling {
		limit = claudeResultSizeCeiling
	}
	return mcp.Meta{ClaudeResultSizeKey: limit}
}
