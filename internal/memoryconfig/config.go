// Package memoryconfig turns the environment and the command line into an
// opened memory, for the server (one memory or named memories) and for
// every command alike. It is the one place that reads the MEMORY_*
// variables and the MCP_SERVER_MEMORY_* timing knobs of the tests: a
// second reading of the same variable is where the server and the
// commands would drift apart (a blank MEMORY_DATABASE_URL once meant a
// file to the server and PostgreSQL to the commands).
//
// Read takes the environment once into a Config; Config.Open opens the
// one memory the flags choose (a memory file, or a memory in PostgreSQL),
// and Config.OpenMemories the place named memories live. What they open
// says where it is, which paths error messages to remote clients must
// leave out, and how to close it.
package memoryconfig

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// Environment is where Read finds variables: the process's environment
// (OS), or a map in tests.
type Environment interface {
	Getenv(key string) string
}

// OS is the process's environment.
var OS Environment = osEnvironment{}

type osEnvironment struct{}

func (osEnvironment) Getenv(key string) string { return os.Getenv(key) }

// Vars is an environment given as a map, for tests.
type Vars map[string]string

// Getenv returns the variable key, "" when unset.
func (v Vars) Getenv(key string) string { return v[key] }

// Config is the environment, read once.
type Config struct {
	// DatabaseURL is MEMORY_DATABASE_URL without surrounding space. A
	// blank value is no database: the memory is a file.
	DatabaseURL string
	// FilePath is MEMORY_FILE_PATH as set (its rules are applied by Open).
	FilePath string
	// HTTPToken is MEMORY_HTTP_TOKEN as set.
	HTTPToken string
	// AnswerLimit is MEMORY_ANSWER_LIMIT: bytes of text one tool answer
	// may hold, 0 for no limit; answer.DefaultLimit when unset.
	AnswerLimit int
	// Bounds are what tool calls may make the server hold: MEMORY_MAX_CALLS
	// (calls in progress per connection or token, reads and writes each),
	// MEMORY_MAX_READS (reads running at once) and MEMORY_MAX_ANSWER_MB
	// (answers held at once); 0 when unset, the server's defaults.
	Bounds Bounds
	// AnswerLimitSet is whether MEMORY_ANSWER_LIMIT set AnswerLimit; when
	// not, the server sizes the answers of hosts it knows to what they take.
	AnswerLimitSet bool

	// Timing knobs for tests only; zero values are the defaults.

	// Lock is the memory file lock's timings
	// (MCP_SERVER_MEMORY_LOCK_TIMEOUT, _LOCK_STALE_AFTER, _LOCK_REFRESH).
	// Its timeout also bounds a write's wait in PostgreSQL.
	Lock filestore.LockOptions
	// WatchInterval is how often a memory is checked for other
	// processes' writes (MCP_SERVER_MEMORY_WATCH_INTERVAL).
	WatchInterval time.Duration
	// SessionStartTimeout closes an HTTP session silent after its
	// initialize (MCP_SERVER_MEMORY_SESSION_START_TIMEOUT).
	SessionStartTimeout time.Duration
	// MemoryIdleTimeout closes an unused named memory
	// (MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT).
	MemoryIdleTimeout time.Duration
	// DatabaseReadTimeout and DatabaseWriteTimeout bound PostgreSQL's
	// reads and writes (MCP_SERVER_MEMORY_DB_READ_TIMEOUT, _DB_WRITE_TIMEOUT).
	DatabaseReadTimeout, DatabaseWriteTimeout time.Duration
	// Embeddings is search by meaning's endpoint (embeddings.go); off
	// when MEMORY_EMBEDDINGS_URL is unset.
	Embeddings Embeddings

	// CompactIdle is how long a memory file's journal waits with no write
	// before it is folded into the file (MCP_SERVER_MEMORY_COMPACT_IDLE).
	CompactIdle time.Duration

	// History bounds the history of writes: MEMORY_HISTORY_DAYS (0 keeps
	// none) and MEMORY_HISTORY_MAX_MB; history.Default when unset.
	History history.Limits

	err           error // the first malformed value (Err)
	openErr       error // the first malformed value opening a memory uses
	embeddingsErr error // a malformed MEMORY_EMBEDDINGS_* value
}

// FromOS reads the process's environment.
func FromOS() Config { return Read(OS) }

// Read reads every variable of the configuration from env. A malformed
// value is kept for later (Err, Open) rather than returned, so that a
// caller may report a mistake on its command line first, and a command
// is not refused for a setting only the server uses.
func Read(env Environment) Config {
	c := Config{
		DatabaseURL: strings.TrimSpace(env.Getenv("MEMORY_DATABASE_URL")),
		FilePath:    env.Getenv("MEMORY_FILE_PATH"),
		HTTPToken:   env.Getenv("MEMORY_HTTP_TOKEN"),
	}
	for _, k := range []struct {
		name    string
		dst     *time.Duration
		opening bool // used to open a memory, not only to serve one
	}{
		{"MCP_SERVER_MEMORY_LOCK_TIMEOUT", &c.Lock.Timeout, true},
		{"MCP_SERVER_MEMORY_LOCK_STALE_AFTER", &c.Lock.StaleAfter, true},
		{"MCP_SERVER_MEMORY_LOCK_REFRESH", &c.Lock.RefreshInterval, true},
		{"MCP_SERVER_MEMORY_WATCH_INTERVAL", &c.WatchInterval, false},
		{"MCP_SERVER_MEMORY_SESSION_START_TIMEOUT", &c.SessionStartTimeout, false},
		{"MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT", &c.MemoryIdleTimeout, false},
		{"MCP_SERVER_MEMORY_DB_READ_TIMEOUT", &c.DatabaseReadTimeout, true},
		{"MCP_SERVER_MEMORY_DB_WRITE_TIMEOUT", &c.DatabaseWriteTimeout, true},
		{"MCP_SERVER_MEMORY_COMPACT_IDLE", &c.CompactIdle, true},
		{"MCP_SERVER_MEMORY_READ_WAIT", &c.Bounds.ReadWait, false},
	} {
		v := env.Getenv(k.name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			c.keep(fmt.Errorf("%s=%q: want a positive duration such as 500ms", k.name, v), k.opening)
			continue
		}
		*k.dst = d
	}
	emb, err := readEmbeddings(env)
	c.Embeddings, c.embeddingsErr = emb, err
	c.keep(err, false)
	limit, err := answerLimit(env.Getenv("MEMORY_ANSWER_LIMIT"))
	c.AnswerLimit = limit
	c.AnswerLimitSet = err == nil && strings.TrimSpace(env.Getenv("MEMORY_ANSWER_LIMIT")) != ""
	c.keep(err, false)
	c.History, err = historyLimits(env)
	c.keep(err, true)
	c.Bounds, err = readBounds(env, c.Bounds)
	c.keep(err, false)
	return c
}

// Bounds are the server's bounds on tool calls as the environment sets
// them (docs/bounds.md); 0 is unset.
type Bounds struct {
	Calls, Reads, AnswerMB int
	// ReadWait is how long a read waits for a place before it is refused
	// (MCP_SERVER_MEMORY_READ_WAIT, a knob for tests).
	ReadWait time.Duration
}

// readBounds reads MEMORY_MAX_CALLS, MEMORY_MAX_READS and
// MEMORY_MAX_ANSWER_MB: whole numbers of at least 1.
func readBounds(env Environment, b Bounds) (Bounds, error) {
	for _, v := range []struct {
		name, example string
		dst           *int
	}{
		{"MEMORY_MAX_CALLS", "64", &b.Calls},
		{"MEMORY_MAX_READS", "4", &b.Reads},
		{"MEMORY_MAX_ANSWER_MB", "256", &b.AnswerMB},
	} {
		s := strings.TrimSpace(env.Getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1<<20 {
			return b, fmt.Errorf("%s=%q: want a whole number of at least 1, such as %s", v.name, s, v.example)
		}
		*v.dst = n
	}
	return b, nil
}

// historyLimits reads MEMORY_HISTORY_DAYS and MEMORY_HISTORY_MAX_MB
// (docs/history.md): whole numbers, 0 days keeping no history.
func historyLimits(env Environment) (history.Limits, error) {
	lim := history.Default
	if v := strings.TrimSpace(env.Getenv("MEMORY_HISTORY_DAYS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100000 {
			return history.Default, fmt.Errorf("MEMORY_HISTORY_DAYS=%q: want a number of days such as 90 (0 keeps no history)", v)
		}
		lim.MaxAge = time.Duration(n) * 24 * time.Hour
	}
	if v := strings.TrimSpace(env.Getenv("MEMORY_HISTORY_MAX_MB")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<20 {
			return history.Default, fmt.Errorf("MEMORY_HISTORY_MAX_MB=%q: want a size in megabytes of at least 1, such as 50 (to keep no history, set MEMORY_HISTORY_DAYS=0)", v)
		}
		lim.MaxBytes = int64(n) << 20
	}
	return lim, nil
}

// keep remembers err if it is the first of its kind.
func (c *Config) keep(err error, opening bool) {
	if c.err == nil {
		c.err = err
	}
	if opening && c.openErr == nil {
		c.openErr = err
	}
}

// Err returns the first malformed value of any variable, naming the
// variable and what it wants; nil when every value is good. The server
// refuses to start on it (exit 2); a command sees only the malformed
// values of what it uses, from Open.
func (c Config) Err() error { return c.err }

// EmbeddingsErr returns what is wrong with the MEMORY_EMBEDDINGS_*
// variables, naming the variable and the fix, never the key; nil when
// they are good or unset. Embeddings is then off.
func (c Config) EmbeddingsErr() error { return c.embeddingsErr }

// answerLimit reads MEMORY_ANSWER_LIMIT (docs/design.md §8).
func answerLimit(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return answer.DefaultLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || 0 < n && n < answer.MinLimit {
		return answer.DefaultLimit, fmt.Errorf("MEMORY_ANSWER_LIMIT=%q: want 0 (no limit) or a number of bytes of at least %d, such as 60000", v, answer.MinLimit)
	}
	return n, nil
}
