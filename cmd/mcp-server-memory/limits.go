package main

import (
	"flag"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
)

// The HTTP limits are one httpserver.Limits, options.limits: the flags
// fill in what clients can make an HTTP server hold (--http-max-body,
// --http-max-sessions, --http-max-sessions-per-token, --http-max-streams,
// --http-max-streams-per-token, --max-open-memories), and limitsFromEnv
// the rest, read once by memoryconfig (the tool calls of one token, and
// for tests only, how soon a silent session and an unused memory are
// closed).

// limitsFromEnv completes the limits the flags set with the environment's.
func (o *options) limitsFromEnv() {
	o.limits.SessionStartTimeout, o.limits.MemoryIdleTimeout = o.env.SessionStartTimeout, o.env.MemoryIdleTimeout
	o.limits.MaxCallsPerToken = o.env.Bounds.Calls
}

// limitFlagsProblem says what is wrong with the limit flags, or returns
// "": --max-open-memories needs --tokens (the --http- ones are checked
// with the other HTTP options).
func limitFlagsProblem(fs *flag.FlagSet, tokens string, l httpserver.Limits) string {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "max-open-memories" })
	if set && tokens == "" {
		return "--max-open-memories only applies with --tokens FILE (named memories)"
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"http-max-sessions", l.MaxSessions}, {"http-max-sessions-per-token", l.MaxSessionsPerToken}, {"http-max-streams", l.MaxStreams}, {"http-max-streams-per-token", l.MaxStreamsPerToken}, {"max-open-memories", l.MaxOpenMemories}} {
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
