// Command mcp-server-memory is a knowledge-graph memory server for MCP
// clients: entities, relations and observations kept in a JSONL file that
// several clients, and the Node reference server, can share.
//
// It serves MCP on stdin/stdout; logs go to stderr. The memory file is
// MEMORY_FILE_PATH, or memory.jsonl beside the executable.
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
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

const usage = `mcp-server-memory: a knowledge-graph memory server for MCP clients.

Usage:
  mcp-server-memory            serve MCP on stdin/stdout (what MCP clients run)
  mcp-server-memory --version  print the version
  mcp-server-memory --help     print this help

Environment:
  MEMORY_FILE_PATH  the memory file (JSONL). Absolute, ~/..., or relative to
                    the directory of this executable. Default: memory.jsonl
                    beside the executable.

The memory file can be shared by several clients and with the Node reference
server @modelcontextprotocol/server-memory: writes take <file>.lock.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp-server-memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	showVersion := fs.Bool("version", false, "print the version")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
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
	logger.Printf("serving MCP on stdio; memory file %s", path)
	err = srv.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		logger.Print(err)
		return 1
	}
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
