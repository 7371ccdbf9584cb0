package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
)

// httpLimits bound what clients can make an HTTP server hold: sessions
// (--http-max-sessions, --http-max-sessions-per-token), event streams
// (--http-max-streams, --http-max-streams-per-token), named memories
// open at once (--max-open-memories), and, for tests only, how soon a
// silent session and an unused memory are closed (memoryconfig reads those
// knobs).
type httpLimits struct {
	maxSessions, maxSessionsPerToken, maxOpenMemories int
	maxStreams, maxStreamsPerToken                    int
	sessionStart, memoryIdle                          time.Duration
}

// apply sets the limits in cfg; zero values leave httpserver's defaults.
func (l httpLimits) apply(cfg *httpserver.Config) {
	cfg.MaxSessions, cfg.MaxSessionsPerToken, cfg.MaxOpenMemories = l.maxSessions, l.maxSessionsPerToken, l.maxOpenMemories
	cfg.MaxStreams, cfg.MaxStreamsPerToken = l.maxStreams, l.maxStreamsPerToken
	cfg.SessionStartTimeout, cfg.MemoryIdleTimeout = l.sessionStart, l.memoryIdle
}

// limitFlagsProblem says what is wrong with the limit flags, or returns
// "": --max-open-memories needs --tokens (the --http- ones are checked
// with the other HTTP options).
func limitFlagsProblem(fs *flag.FlagSet, tokens string, l httpLimits) string {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "max-open-memories" })
	if set && tokens == "" {
		return "--max-open-memories only applies with --tokens FILE (named memories)"
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"http-max-sessions", l.maxSessions}, {"http-max-sessions-per-token", l.maxSessionsPerToken}, {"http-max-streams", l.maxStreams}, {"http-max-streams-per-token", l.maxStreamsPerToken}, {"max-open-memories", l.maxOpenMemories}} {
		if problem := positiveFlag(f.name, f.n); problem != "" {
			return problem
		}
	}
	return ""
}

// positiveFlag checks a count given on the command line.
func positiveFlag(name string, n int) string {
	if n <= 0 {
		return fmt.Sprintf("--%s %d: want a positive number", name, n)
	}
	return ""
}
