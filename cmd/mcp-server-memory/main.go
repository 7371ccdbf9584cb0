// Command mcp-server-memory is a knowledge-graph memory server for MCP
// clients: entities, relations and observations kept in a JSONL file that
// several clients (each running its own copy of this server) can share.
//
// It serves MCP on stdin/stdout, or with --http on Streamable HTTP; logs go
// to stderr. The memory file is MEMORY_FILE_PATH, or memory.jsonl beside the
// executable; with MEMORY_DATABASE_URL the memory is in PostgreSQL instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/kgmemory/mcp-server-memory/internal/cli"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/heapgoal"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

const usage = `mcp-server-memory: a knowledge-graph memory server for MCP clients.

Usage:
  mcp-server-memory              serve MCP on stdin/stdout (what MCP clients run)
  mcp-server-memory --http ADDR  serve MCP Streamable HTTP at http://ADDR/mcp
  mcp-server-memory --http ADDR --tokens FILE --memories DIR
                                 serve named memories to a team: memory NAME
                                 at http://ADDR/mcp/NAME ("default" at /mcp),
                                 its page at http://ADDR/page/NAME/
  mcp-server-memory --version    print the version
  mcp-server-memory --help       print this help

Commands, to see and correct the memory yourself (COMMAND --help for each;
mcp-server-memory help lists them with a line each):
  stats, search QUERY, show NAME..., export --format FORMAT, import FILE,
  check [--fix], rename OLD NEW, merge A B, history [NAME] (what changed,
  when, by whom), undo CHANGE | --since T, ui (the memory in your browser),
  embed (compute the vectors of search by meaning, with progress)

Memory option:
  --memory NAME               with MEMORY_DATABASE_URL: the memory in the
                              database to serve (default "default")

HTTP options (only with --http):
  --http ADDR                 a port (8080 or :8080) binds 127.0.0.1 only;
                              HOST:PORT binds that host (0.0.0.0:8080: every
                              IPv4 interface; [::]:8080: every interface, IPv4
                              and IPv6). Any non-loopback address requires a
                              token.
  --http-token-file PATH      read the bearer token from PATH (instead of
                              MEMORY_HTTP_TOKEN)
  --http-allowed-hosts NAMES  comma-separated host names clients use to reach
                              the server (Host/Origin check), e.g. behind a
                              reverse proxy
  --http-max-body BYTES       request body limit (default 4194304)
  --http-max-sessions N       2025-generation sessions open at once (default
                              4096); an initialize past it gets 503
  --http-max-sessions-per-token N
                              sessions one token may hold (default 256); past
                              it, 429. A session that sends nothing within a
                              minute of its initialize is closed.
  --http-max-streams N        event streams open at once (2025 GET streams,
                              2026 subscriptions/listen, the page's live
                              updates; default 1024); past it, 503
  --http-max-streams-per-token N
                              event streams one token may hold (default 64);
                              past it, 429

Named memories (with --http; see docs/teams.md):
  --tokens FILE               who may reach which memory, one grant a line:
                              TOKEN MEMORIES read|write, MEMORIES being
                              a,b,... or * (every memory). Read again on
                              SIGHUP. Replaces MEMORY_HTTP_TOKEN. A read
                              grant reads and subscribes; write tools are
                              refused.
  --memories DIR              memory NAME is the file DIR/NAME.jsonl; or set
                              MEMORY_DATABASE_URL: memory NAME is in the
                              database. NAME: 1-64 of a-z 0-9 - _ .
  --max-open-memories N       memories open at once (default 1000): one
                              unused for 5 minutes is closed, one nobody
                              wrote as soon as its request ends; past the
                              limit, with every memory in use, 503.

Environment:
  MEMORY_FILE_PATH   the memory file (JSONL). Absolute, ~/..., or relative to
                     the directory of this executable. Default: memory.jsonl
                     beside the executable.
  MEMORY_ANSWER_LIMIT  bytes of text one tool answer may hold (default
                     60000, about 15-20k tokens; less for hosts that cut
                     shorter, such as Claude Code); a bigger answer comes in
                     parts with a cursor. 0: no limit, as the reference.
  MEMORY_MAX_CALLS, MEMORY_MAX_READS, MEMORY_MAX_ANSWER_MB  tool calls in
                     progress per connection or token (64 reads, 64
                     writes), reads running at once (one per core), MB of
                     answers held (256); past them a call is refused
                     (docs/bounds.md).
  MEMORY_HTTP_TOKEN  with --http: clients must send Authorization: Bearer
                     <token> (at least 16 characters). Required unless the
                     address is loopback; enforced whenever set.
  MEMORY_DATABASE_URL  keep the memory in PostgreSQL instead of a file
                     (postgres://user:password@host:port/database); any
                     number of servers can share it. MEMORY_FILE_PATH is
                     then not used; --memory NAME picks the memory (default
                     "default", the one /mcp serves with --tokens). Every
                     command but check works on it too.
  MEMORY_MAX_CALLS   tool calls in progress per stdio connection or HTTP
                     token, reads and writes each (default 64); past it,
                     refused at once
  MEMORY_MAX_READS   reads running at once (default: one per core, at
                     least 2); the others wait up to 30 s
  MEMORY_MAX_ANSWER_MB  megabytes of answers held at once (default 256)
  MEMORY_HISTORY_DAYS  days the history of writes keeps (default 90; 0:
                     no history, and what there is is removed)
  MEMORY_HISTORY_MAX_MB  megabytes the history may take (default 50); past
                     it the oldest records go
  MEMORY_EMBEDDINGS_URL  search by meaning: an OpenAI-compatible API, e.g.
                     http://127.0.0.1:11434/v1 (Ollama). Unset: words only.
  MEMORY_EMBEDDINGS_MODEL  the embedding model (required with the URL)
  MEMORY_EMBEDDINGS_API_KEY, MEMORY_EMBEDDINGS_API_KEY_FILE
                     the API's key, or a file holding it (optional)
  See docs/bounds.md, docs/history.md and docs/embeddings.md.

Several copies of this server (one per client, or stdio and --http) can share
one memory file: every write takes <file>.lock. The published Node reference
server (@modelcontextprotocol/server-memory 2026.8.31) takes no lock and
rewrites the whole file, so sharing a file with it loses writes: run one or
the other on a file.
`

func main() {
	if len(os.Args) > 1 && cli.IsCommand(os.Args[1]) {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp-server-memory", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, in one line
	fs.Usage = func() {}     // --help prints usage to stdout, below
	showVersion := fs.Bool("version", false, "print the version")
	o := defineFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		return usageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	o.env = memoryconfig.FromOS()
	if problem := o.problem(fs); problem != "" {
		return usageError(stderr, problem)
	}
	if *showVersion {
		fmt.Fprintf(stdout, "mcp-server-memory %s\n", version())
		return 0
	}

	logger := log.New(stderr, "mcp-server-memory: ", log.LstdFlags)
	if err := o.env.Err(); err != nil {
		logger.Print(err)
		return 2
	}
	o.limitsFromEnv()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.addr != "" {
		return serveHTTP(ctx, logger, *o)
	}
	return serveStdio(ctx, logger, *o, stdin, stdout)
}

// options are what the command line and the environment ask the server to
// serve.
type options struct {
	addr, tokenFile, allowedHosts string            // --http, --http-token-file, --http-allowed-hosts
	limits                        httpserver.Limits // the --http-max-... flags and the environment's
	tokens, memories              string            // --tokens, --memories: named memories
	memory                        string            // --memory: the memory in the database
	env                           memoryconfig.Config
	// limiter bounds the reads running and the answers held, for every
	// memory the process serves; serveStdio and serveHTTP make it from env.
	limiter *server.Limiter
}

// defineFlags defines the server's flags in fs, which fill in the options
// it returns.
func defineFlags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.addr, "http", "", "serve Streamable HTTP on this address")
	fs.StringVar(&o.tokenFile, "http-token-file", "", "file holding the HTTP bearer token")
	fs.StringVar(&o.allowedHosts, "http-allowed-hosts", "", "comma-separated host names accepted in Host and Origin")
	fs.Int64Var(&o.limits.MaxBodyBytes, "http-max-body", httpserver.DefaultMaxBodyBytes, "HTTP request body limit in bytes")
	fs.IntVar(&o.limits.MaxSessions, "http-max-sessions", httpserver.DefaultMaxSessions, "2025 sessions open at once")
	fs.IntVar(&o.limits.MaxSessionsPerToken, "http-max-sessions-per-token", httpserver.DefaultMaxSessionsPerToken, "2025 sessions one token may hold")
	fs.IntVar(&o.limits.MaxStreams, "http-max-streams", httpserver.DefaultMaxStreams, "event streams open at once")
	fs.IntVar(&o.limits.MaxStreamsPerToken, "http-max-streams-per-token", httpserver.DefaultMaxStreamsPerToken, "event streams one token may hold")
	fs.IntVar(&o.limits.MaxOpenMemories, "max-open-memories", httpserver.DefaultMaxOpenMemories, "named memories open at once (with --tokens)")
	fs.StringVar(&o.tokens, "tokens", "", "tokens file granting named memories (with --http)")
	fs.StringVar(&o.memories, "memories", "", "directory of named memories, NAME.jsonl each (with --tokens)")
	fs.StringVar(&o.memory, "memory", "", "the memory in the database to serve (with MEMORY_DATABASE_URL)")
	return o
}

// problem says what is wrong with how the options combine, or returns "".
func (o *options) problem(fs *flag.FlagSet) string {
	if o.addr == "" {
		if misplaced := httpOnlyFlags(fs); misplaced != "" {
			return misplaced
		}
	}
	if problem := namedFlagsProblem(o.env, o.addr, o.tokens, o.memories, o.tokenFile); problem != "" {
		return problem
	}
	if problem := memoryFlagProblem(o.env, o.memory, o.tokens); problem != "" {
		return problem
	}
	return limitFlagsProblem(fs, o.tokens, o.limits)
}

// open opens the one memory (on stdio, or --http without --tokens) and
// logs what its user should know of it; on failure it logs why and
// returns nil and the exit status.
func (o options) open(ctx context.Context, logger *log.Logger) (*memoryconfig.Memory, int) {
	m, err := o.env.Open(ctx, memoryconfig.Choice{Memory: o.memory, Logf: logger.Printf, Journal: true})
	if err != nil {
		logger.Print(err)
		return nil, exitStatus(err)
	}
	if m.File != nil {
		if problem := filestore.CheckPath(m.File.Path()); problem != nil {
			logger.Printf("warning: %v", problem)
		}
	} else if o.env.FilePath != "" {
		logger.Print("MEMORY_FILE_PATH is not used: MEMORY_DATABASE_URL is set")
	}
	return m, 0
}

// indexLogMin is the size of memory, in entities, from which the server
// logs how long its background index build took.
const indexLogMin = 10_000

// buildIndexes reads the memory store holds and builds its search
// indexes in the background, so the first search does not wait for them
// (graph.BuildIndexes), and logs how long that took for a memory of
// indexLogMin entities or more; stop ends the build and waits for it,
// before the store closes. Once the memory is read, and until stop, a
// big memory's heap grows by a fifth of what is live between collections
// rather than by as much again (heapgoal): set before, it would make the
// load's collections come more often as the graph grows, for no garbage.
func buildIndexes(ctx context.Context, store graph.Store, logf func(string, ...any)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stopHeapGoal := func() {}
	go func() {
		defer close(done)
		if err := store.View(ctx, func(*graph.Graph) error { return nil }); err != nil {
			return // the first tool call says why
		}
		stopHeapGoal = heapgoal.Keep()
		defer spareProcessor()()
		start := time.Now()
		if n, built := graph.BuildIndexes(ctx, store); built && n >= indexLogMin {
			logf("search indexes built in the background in %s (%d entities)", time.Since(start).Round(time.Millisecond), n)
		}
	}()
	return func() {
		cancel()
		<-done
		stopHeapGoal()
	}
}

// spare counts the callers of spareProcessor that have not restored.
var spare struct {
	sync.Mutex
	n int
}

// spareProcessor runs the process with one processor more than the
// runtime gives it (runtime.GOMAXPROCS) until every function it returned
// has been called; with GOMAXPROCS in the environment it changes nothing.
// A background index build keeps every processor busy, and then a tool
// call waits 10-20 ms before it runs: the goroutine that read it from stdin
// keeps its processor through its next blocking read, with the call queued
// on it, until the runtime takes the processor back; and no other
// processor is idle to take the call. A spare one is (writes during the
// build, p50: 15-21 ms before, 2-3 ms after, at 100k and 1M entities).
func spareProcessor() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	spare.Lock()
	defer spare.Unlock()
	if spare.n == 0 {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
	spare.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			spare.Lock()
			defer spare.Unlock()
			if spare.n--; spare.n == 0 {
				runtime.SetDefaultGOMAXPROCS()
			}
		})
	}
}

// serverOptions are the options of the MCP server of memory name ("" for
// the one memory); hide are its files, which error messages leave out.
func (o options) serverOptions(logger *log.Logger, name string, hide []string) server.Options {
	return server.Options{Version: strings.Fields(version())[0], Logf: logger.Printf, WatchInterval: o.env.WatchInterval, AnswerLimit: o.env.AnswerLimit, AnswerLimitByHost: !o.env.AnswerLimitSet, Memory: name, HidePaths: hide, Limiter: o.limiter}
}

// serveStdio serves the one memory on stdin and stdout until the client
// goes or ctx ends.
func serveStdio(ctx context.Context, logger *log.Logger, o options, stdin io.ReadCloser, stdout io.WriteCloser) (status int) {
	o.limiter = newLimiter(o.env.Bounds)
	m, status := o.open(ctx, logger)
	if m == nil {
		return status
	}
	defer func() {
		// A clean exit whose last compaction failed says so by its status.
		if err := m.Close(); err != nil && status == 0 {
			status = 1
		}
	}()
	defer buildIndexes(ctx, m.Store, logger.Printf)()
	opts := o.serverOptions(logger, "", m.HidePaths)
	opts.Meaning = openMeaning(o.env, m, nil, logger.Printf)
	o.logMeaning(logger, opts.Meaning != nil)
	srv := server.New(m.Store, opts)
	logger.Printf("serving MCP on stdio; %s", m.Where)
	if isTerminal(stdin) {
		logger.Print(terminalHint())
	}
	err := srv.RunStdio(ctx, stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		logger.Print(err)
		return 1
	}
	return 0
}

// exitStatus is the exit status for a memory that cannot be opened: 2 for
// a setting the user must change, 1 otherwise.
func exitStatus(err error) int {
	var setting *memoryconfig.SettingError
	if errors.As(err, &setting) {
		return 2
	}
	return 1
}

// usageError reports a command-line mistake in one line, with where to find
// help, and returns the usage exit status.
func usageError(stderr io.Writer, problem string) int {
	fmt.Fprintf(stderr, "mcp-server-memory: %s\nRun 'mcp-server-memory --help' for usage.\n", problem)
	return 2
}

// httpOnlyFlags names the HTTP options given without --http, or returns
// "". Ignoring them would mislead: a token file given for nothing leaves
// its user believing the memory is protected.
func httpOnlyFlags(fs *flag.FlagSet) string {
	var names []string
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "http-") {
			names = append(names, "--"+f.Name)
		}
	})
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + " only applies with --http ADDR"
	default:
		return strings.Join(names, ", ") + " only apply with --http ADDR"
	}
}

// isTerminal reports whether stdin is a terminal: someone started the
// server by hand rather than an MCP client through a pipe.
func isTerminal(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalHint is the one line a person who started the server by hand
// needs: it is waiting for a client, and how to be one.
func terminalHint() string {
	exe, err := os.Executable()
	if err != nil {
		exe = "mcp-server-memory"
	}
	return fmt.Sprintf("waiting for an MCP client on stdin (an MCP host such as Claude Desktop starts this server itself); to try it by hand: npx @modelcontextprotocol/inspector %s", exe)
}

// Set at link time by the release scripts (scripts/release-lib.sh):
// -ldflags "-X main.releaseVersion=1.2.0 -X main.releaseCommit=<git commit>".
// A plain `go build` or `go install` leaves them empty.
var (
	releaseVersion string
	releaseCommit  string
)

// version names this build for --version and the MCP handshake: the release,
// the commit, and the Go toolchain and platform that built it, e.g.
// "1.2.0 (commit 0123456789ab, go1.26.8 linux/amd64)". A build that is not a
// release says "development build"; a source build starts with "devel".
func version() string {
	info, ok := debug.ReadBuildInfo()
	toolchain := "unknown Go"
	if ok {
		toolchain = toolchainOf(info)
	}
	if releaseVersion != "" {
		return releaseBuild(releaseVersion, releaseCommit, toolchain)
	}
	if !ok {
		return "devel (development build)"
	}
	// `go install …@v1.2.0` names the release in the module version; a source
	// build gets "(devel)" or, where Go stamps version control, a
	// pseudo-version such as v0.0.0-20261201135300-6ef091c1a2b3+dirty.
	if v := info.Main.Version; v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") && !isPseudoVersion(v) {
		return fmt.Sprintf("%s (go install, %s)", strings.TrimPrefix(v, "v"), toolchain)
	}
	return fmt.Sprintf("%s (development build, %s)", sourceBuild(info), toolchain)
}

// buildSetting is the value of build setting key in info, or "".
func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// toolchainOf names the Go toolchain and platform that built info, e.g.
// "go1.26.8 linux/amd64".
func toolchainOf(info *debug.BuildInfo) string {
	return info.GoVersion + " " + buildSetting(info, "GOOS") + "/" + buildSetting(info, "GOARCH")
}

// releaseBuild names a build stamped by the release scripts: version and
// commit as stamped (a commit ending in -dirty came from a modified tree).
func releaseBuild(version, commit, toolchain string) string {
	commit, dirty := strings.CutSuffix(commit, "-dirty")
	commit = shortCommit(commit)
	if commit == "" {
		commit = "unknown"
	}
	if dirty {
		commit += "-dirty"
	}
	// Packages stamped from an untagged or modified tree: 0.0.0-dev.<commit>.
	if strings.Contains(version, "-dev") || dirty {
		return fmt.Sprintf("%s (development build, commit %s, %s)", version, commit, toolchain)
	}
	return fmt.Sprintf("%s (commit %s, %s)", version, commit, toolchain)
}

// sourceBuild names a build from source: "devel", and the commit Go
// stamped when it did ("devel-0123456789ab", "-dirty" for a modified tree).
func sourceBuild(info *debug.BuildInfo) string {
	v := "devel"
	if rev := buildSetting(info, "vcs.revision"); rev != "" {
		v += "-" + shortCommit(rev)
		if buildSetting(info, "vcs.modified") == "true" {
			v += "-dirty"
		}
	}
	return v
}

// shortCommit is the first 12 digits of a commit, as git abbreviates it.
func shortCommit(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// isPseudoVersion reports whether v is a Go pseudo-version, which names an
// untagged commit rather than a release: it ends in a 14-digit timestamp and
// a 12-digit hexadecimal commit (v0.0.0-20261201135300-6ef091c1a2b3).
func isPseudoVersion(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	const n = len("20261201135300-6ef091c1a2b3")
	if len(v) <= n {
		return false
	}
	for i, c := range v[len(v)-n:] {
		switch {
		case i < 14 && (c < '0' || c > '9'),
			i == 14 && c != '-',
			i > 14 && !strings.ContainsRune("0123456789abcdef", c):
			return false
		}
	}
	return true
}

// newLimiter is the server's limiter for the bounds the environment set.
func newLimiter(b memoryconfig.Bounds) *server.Limiter {
	return server.NewLimiter(server.Bounds{Calls: b.Calls, Reads: b.Reads, AnswerBytes: int64(b.AnswerMB) << 20, ReadWait: b.ReadWait})
}
