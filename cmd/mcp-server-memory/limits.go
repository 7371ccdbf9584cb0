package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
)

// httpLimits bound what clients can make an HTTP server hold: sessions
// (--http-max-sessions, --http-max-sessions-per-token), named memories
// open at once (--max-open-memories), and, for tests only, how soon a
// silent session and an unused memory are closed.
type httpLimits struct {
	maxSessions, maxSessionsPerToken, maxOpenMemories int
	sessionStart, memoryIdle                          time.Duration
}

// apply sets the limits in cfg; zero values leave httpserver's defaults.
func (l httpLimits) apply(cfg *httpserver.Config) {
	cfg.MaxSessions, cfg.MaxSessionsPerToken, cfg.MaxOpenMemories = l.maxSessions, l.maxSessionsPerToken, l.maxOpenMemories
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
	}{{"http-max-sessions", l.maxSessions}, {"http-max-sessions-per-token", l.maxSessionsPerToken}, {"max-open-memories", l.maxOpenMemories}} {
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

// Timing knobs for tests only, as the lock's (tuning): unset means the
// defaults.
const (
	envSessionStart = "MCP_SERVER_MEMORY_SESSION_START_TIMEOUT"
	envMemoryIdle   = "MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT"
	envDBRead       = "MCP_SERVER_MEMORY_DB_READ_TIMEOUT"
	envDBWrite      = "MCP_SERVER_MEMORY_DB_WRITE_TIMEOUT"
)

// durationEnv reads a test knob: 0 when unset.
func durationEnv(name string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 500ms", name, v)
	}
	return d, nil
}

// readTimings reads the test knobs of httpLimits into l.
func (l *httpLimits) readTimings() error {
	var err error
	if l.sessionStart, err = durationEnv(envSessionStart); err != nil {
		return err
	}
	l.memoryIdle, err = durationEnv(envMemoryIdle)
	return err
}

// databaseOptions are the PostgreSQL store's options: the lock timeout,
// and the deadlines of reads and writes (test knobs; by default 30 s and
// the lock timeout).
func databaseOptions(lockTimeout time.Duration, logf func(string, ...any)) (pgstore.Options, error) {
	opts := pgstore.Options{LockTimeout: lockTimeout, Logf: logf}
	var err error
	if opts.QueryTimeout, err = durationEnv(envDBRead); err != nil {
		return opts, err
	}
	opts.WriteTimeout, err = durationEnv(envDBWrite)
	return opts, err
}
