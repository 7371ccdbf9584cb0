package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

// TestLimitsFromFlagsAndEnvironment: the flags and the environment fill
// one httpserver.Limits, which serveHTTP hands down as it is.
func TestLimitsFromFlagsAndEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("mcp-server-memory", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := defineFlags(fs)
	if err := fs.Parse([]string{"--http-max-body", "1000", "--http-max-sessions", "7", "--http-max-streams-per-token", "3"}); err != nil {
		t.Fatal(err)
	}
	o.env = memoryconfig.Read(memoryconfig.Vars{
		"MEMORY_MAX_CALLS":                        "5",
		"MCP_SERVER_MEMORY_SESSION_START_TIMEOUT": "300ms",
		"MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT":   "2s",
	})
	o.limitsFromEnv()
	want := httpserver.Limits{
		MaxBodyBytes: 1000, MaxSessions: 7, MaxSessionsPerToken: httpserver.DefaultMaxSessionsPerToken,
		MaxStreams: httpserver.DefaultMaxStreams, MaxStreamsPerToken: 3, MaxOpenMemories: httpserver.DefaultMaxOpenMemories,
		MaxCallsPerToken: 5, SessionStartTimeout: 300 * time.Millisecond, MemoryIdleTimeout: 2 * time.Second,
	}
	if o.limits != want {
		t.Errorf("limits %+v\nwant %+v", o.limits, want)
	}
}
