package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/sharedstore"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

// Named memories (docs/design.md §11): --http with --tokens FILE serves
// memory NAME at /mcp/NAME and the memory "default" at /mcp, and memory
// NAME's web page at /page/NAME/, each from DIR/NAME.jsonl (--memories DIR)
// or from the database of MEMORY_DATABASE_URL.

// namedFlagsProblem checks how --tokens and --memories combine with the
// other options, and returns the usage error, or "".
func namedFlagsProblem(httpAddr, tokens, memories, tokenFile string) string {
	database := strings.TrimSpace(os.Getenv("MEMORY_DATABASE_URL")) != ""
	switch {
	case tokens == "" && memories == "":
		return ""
	case httpAddr == "":
		return "--tokens and --memories only apply with --http ADDR"
	case tokens == "":
		return "--memories needs --tokens FILE: the tokens file says who may reach which memory"
	case os.Getenv("MEMORY_HTTP_TOKEN") != "" || tokenFile != "":
		return "--tokens replaces MEMORY_HTTP_TOKEN and --http-token-file; use one"
	case memories != "" && database:
		return "--memories and MEMORY_DATABASE_URL are both set; keep the memories in one place"
	case memories == "" && !database:
		return "--tokens needs where the memories are: --memories DIR, or MEMORY_DATABASE_URL"
	}
	return ""
}

// memoryFlagProblem says what is wrong with --memory NAME, or returns "".
// It picks a memory in the database; a memory file is chosen by
// MEMORY_FILE_PATH, and with --tokens every memory has its own URL.
func memoryFlagProblem(name, tokens string) string {
	switch {
	case name == "":
		return ""
	case tokens != "":
		return "--memory does not apply with --tokens: memory NAME is served at /mcp/NAME"
	case strings.TrimSpace(os.Getenv("MEMORY_DATABASE_URL")) == "":
		return "--memory picks a memory in a database: set MEMORY_DATABASE_URL (for a memory file, set MEMORY_FILE_PATH)"
	}
	if err := access.ValidName(name); err != nil {
		return err.Error()
	}
	return ""
}

type namedConfig struct {
	addr, tokens, memories, allowedHosts string
	maxBody                              int64
	lock                                 filestore.LockOptions
	watch                                time.Duration
	answerLimit                          int
	limits                               httpLimits
}

// serveNamed serves the named memories until ctx ends, reading the tokens
// file again on SIGHUP.
func serveNamed(ctx context.Context, logger *log.Logger, c namedConfig) int {
	tokens, err := access.OpenWith(c.tokens, access.Options{Logf: logger.Printf})
	if err != nil {
		logger.Print(err)
		return 2
	}
	// A memory's MCP server and its web page share its store, each hearing
	// the other's writes (as under --http with one memory).
	// hide is the memory's file (none in a database), whose directories
	// error messages to the team leave out.
	memory := func(store graph.Store, name string, hide []string) httpserver.Memory {
		shared := sharedstore.New(store)
		return httpserver.Memory{
			Server: server.New(shared.Part(), server.Options{Version: strings.Fields(version())[0], Logf: logger.Printf, WatchInterval: c.watch, AnswerLimit: c.answerLimit, Memory: name, HidePaths: hide}),
			// "memory NAME", not the file's path: the page is for the team,
			// the server's directories are not.
			Page: ui.NewHandler(shared.Part(), "memory "+name, ui.Options{MayEdit: httpserver.MayEdit, WatchInterval: c.watch, Logf: logger.Printf, HidePaths: hide}),
		}
	}
	var (
		open  func(ctx context.Context, name string) (httpserver.Memory, error)
		where string
	)
	if c.memories != "" {
		dir, err := filepath.Abs(c.memories)
		if err != nil {
			logger.Print(err)
			return 1
		}
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			logger.Printf("--memories %s is not a directory", dir)
			return 1
		}
		if os.Getenv("MEMORY_FILE_PATH") != "" {
			logger.Print("MEMORY_FILE_PATH is not used: --memories is set")
		}
		where = "memory files NAME.jsonl in " + dir
		open = func(_ context.Context, name string) (httpserver.Memory, error) {
			path := filepath.Join(dir, name+".jsonl")
			m := memory(filestore.Open(path, filestore.Options{Logf: logger.Printf, Lock: c.lock}), name, hiddenPaths(path))
			// A memory nobody wrote has no file, and is kept open only
			// while it is used.
			m.Exists = func() bool { _, err := os.Lstat(path); return err == nil }
			return m, nil
		}
	} else {
		url := strings.TrimSpace(os.Getenv("MEMORY_DATABASE_URL"))
		desc, ok := describeDatabase(url, logger)
		if !ok {
			return 2
		}
		opts, err := databaseOptions(c.lock.Timeout, logger.Printf)
		if err != nil {
			logger.Print(err)
			return 2
		}
		db, err := pgstore.Connect(ctx, url, opts)
		if err != nil {
			msg := strings.NewReplacer(":\n\t", ": ", "\n\t", "; ", "\n", "; ").Replace(err.Error())
			logger.Printf("cannot use the %s: %s", desc, msg)
			return 1
		}
		defer db.Close()
		if os.Getenv("MEMORY_FILE_PATH") != "" {
			logger.Print("MEMORY_FILE_PATH is not used: MEMORY_DATABASE_URL is set")
		}
		where = "memories in " + desc
		open = func(ctx context.Context, name string) (httpserver.Memory, error) {
			store, err := db.Memory(ctx, name)
			if err != nil {
				return httpserver.Memory{}, err
			}
			m := memory(store, name, nil)
			m.Exists = store.Exists // a memory nobody wrote has no row
			return m, nil
		}
	}
	cfg := httpserver.Config{Addr: c.addr, AllowedHosts: hostList(c.allowedHosts), MaxBodyBytes: c.maxBody, Logf: logger.Printf, Tokens: tokens, Memories: open}
	c.limits.apply(&cfg)
	hs, ln, status := listenHTTP(nil, cfg, logger)
	if hs == nil {
		return status
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := hs.ReloadTokens(); err != nil {
					logger.Printf("SIGHUP: %v; the grants in force stay as they were", err)
				} else {
					logger.Printf("SIGHUP: tokens file %s read again: %d tokens", c.tokens, tokens.Len())
				}
			}
		}
	}()

	logger.Printf("serving named memories over MCP Streamable HTTP at http://%s/mcp/NAME (the memory %q at /mcp), memory NAME's page at http://%s/page/NAME/ (open /page/NAME/?token=TOKEN once); %d tokens from %s (SIGHUP reads it again); %s",
		ln.Addr(), access.DefaultMemory, ln.Addr(), tokens.Len(), c.tokens, where)
	return serveUntilDone(ctx, hs, ln, logger)
}
