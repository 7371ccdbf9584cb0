// Command mcp-server-memory is a knowledge-graph memory server for MCP
// clients: entities, relations and observations kept in a JSONL file that
// several clients, and the Node reference server, can share.
//
// It serves MCP on stdin/stdout, or with --http on Streamable HTTP; logs go
// to stderr. The memory file is MEMORY_FILE_PATH, or memory.jsonl beside the
// executable.
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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

const usage = `mcp-server-memory: a knowledge-graph memory server for MCP clients.

Usage:
  mcp-server-memory              serve MCP on stdin/stdout (what MCP clients run)
  mcp-server-memory --http ADDR  serve MCP Streamable HTTP at http://ADDR/mcp
  mcp-server-memory --version    print the version
  mcp-server-memory --help       print this help

HTTP options:
  --http ADDR                 a port (8080 or :8080) binds 127.0.0.1 only;
                              HOST:PORT binds that host (0.0.0.0:8080: every
                              interface). Any non-loopback address requires
                              a token.
  --http-token-file PATH      read the bearer token from PATH (instead of
                              MEMORY_HTTP_TOKEN)
  --http-allowed-hosts NAMES  comma-separated host names clients use to reach
                              the server (Host/Origin check), e.g. behind a
                              reverse proxy
  --http-max-body BYTES       request body limit (default 4194304)

Environment:
  MEMORY_FILE_PATH   the memory file (JSONL). Absolute, ~/..., or relative to
                     the directory of this executable. Default: memory.jsonl
                     beside the executable.
  MEMORY_HTTP_TOKEN  with --http: clients must send Authorization: Bearer
                     <token> (at least 16 characters). Required unless the
                     address is loopback; enforced whenever set.

The memory file can be shared by several clients and with the Node reference
server @modelcontextprotocol/server-memory: writes take <file>.lock.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp-server-memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below: --help to stdout, mistakes to stderr
	showVersion := fs.Bool("version", false, "print the version")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this address")
	tokenFile := fs.String("http-token-file", "", "file holding the HTTP bearer token")
	allowedHosts := fs.String("http-allowed-hosts", "", "comma-separated host names accepted in Host and Origin")
	maxBody := fs.Int64("http-max-body", httpserver.DefaultMaxBodyBytes, "HTTP request body limit in bytes")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprint(stderr, "\n"+usage)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcp-server-memory: unexpected argument %q\n\n%s", fs.Arg(0), usage)
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "mcp-server-memory %s\n", version())
		return 0
	}

	logger := log.New(stderr, "mcp-server-memory: ", log.LstdFlags)
	dir, err := filestore.ServerDir()
	if err != nil {
		logger.Print(err)
		return 1
	}
	path, err := filestore.ResolvePath(os.Getenv("MEMORY_FILE_PATH"), dir, logger.Printf)
	if err != nil {
		logger.Print(err)
		return 1
	}
	lockOpts, watch, err := tuning()
	if err != nil {
		logger.Print(err)
		return 2
	}
	store := filestore.Open(path, filestore.Options{Logf: logger.Printf, Lock: lockOpts})
	srv := server.New(store, server.Options{Version: version(), Logf: logger.Printf, WatchInterval: watch})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *httpAddr != "" {
		return serveHTTP(ctx, srv, logger, path, *httpAddr, *tokenFile, *allowedHosts, *maxBody)
	}
	logger.Printf("serving MCP on stdio; memory file %s", path)
	err = srv.RunStdio(ctx, stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		logger.Print(err)
		return 1
	}
	return 0
}

// serveHTTP serves srv on Streamable HTTP until ctx ends.
func serveHTTP(ctx context.Context, srv *server.Server, logger *log.Logger, path, addr, tokenFile, allowedHosts string, maxBody int64) int {
	token, err := httpserver.Token(os.Getenv("MEMORY_HTTP_TOKEN"), tokenFile)
	if err != nil {
		logger.Print(err)
		return 2
	}
	var hosts []string
	if allowedHosts != "" {
		hosts = strings.Split(allowedHosts, ",")
	}
	hs, err := httpserver.New(srv, httpserver.Config{Addr: addr, Token: token, AllowedHosts: hosts, MaxBodyBytes: maxBody, Logf: logger.Printf})
	if err != nil {
		logger.Print(err)
		return 2
	}
	ln, err := hs.Listen()
	if err != nil {
		logger.Print(err)
		return 1
	}
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	logger.Printf("serving MCP Streamable HTTP at http://%s/mcp (%s); memory file %s", ln.Addr(), auth, path)
	if err := hs.Serve(ctx, ln); err != nil {
		logger.Print(err)
		return 1
	}
	logger.Print("stopped")
	return 0
}

// tuning reads the internal timing knobs that tests use to shorten SPEC's
// lock timeouts and the file watch interval. Unset means SPEC's defaults.
func tuning() (filestore.LockOptions, time.Duration, error) {
	var lock filestore.LockOptions
	var watch time.Duration
	for _, k := range []struct {
		env string
		dst *time.Duration
	}{
		{"MCP_SERVER_MEMORY_LOCK_TIMEOUT", &lock.Timeout},
		{"MCP_SERVER_MEMORY_LOCK_STALE_AFTER", &lock.StaleAfter},
		{"MCP_SERVER_MEMORY_LOCK_REFRESH", &lock.RefreshInterval},
		{"MCP_SERVER_MEMORY_WATCH_INTERVAL", &watch},
	} {
		v := os.Getenv(k.env)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return lock, 0, fmt.Errorf("%s=%q: want a positive duration such as 500ms", k.env, v)
		}
		*k.dst = d
	}
	return lock, watch, nil
}

// version is the module version stamped by `go install …@vX`, or the VCS
// revision of a source build.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}
