package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
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
func namedFlagsProblem(cfg memoryconfig.Config, httpAddr, tokens, memories, tokenFile string) string {
	database := cfg.DatabaseURL != ""
	switch {
	case tokens == "" && memories == "":
		return ""
	case httpAddr == "":
		return "--tokens and --memories only apply with --http ADDR"
	case tokens == "":
		return "--memories needs --tokens FILE: the tokens file says who may reach which memory"
	case cfg.HTTPToken != "" || tokenFile != "":
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
func memoryFlagProblem(cfg memoryconfig.Config, name, tokens string) string {
	switch {
	case name == "":
		return ""
	case tokens != "":
		return "--memory does not apply with --tokens: memory NAME is served at /mcp/NAME"
	case cfg.DatabaseURL == "":
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
	env                                  memoryconfig.Config
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
			Server: server.New(shared.Part(), server.Options{Version: strings.Fields(version())[0], Logf: logger.Printf, WatchInterval: c.env.WatchInterval, AnswerLimit: c.env.AnswerLimit, Memory: name, HidePaths: hide}),
			// "memory NAME", not the file's path: the page is for the team,
			// the server's directories are not.
			Page: ui.NewHandler(shared.Part(), "memory "+name, ui.Options{MayEdit: httpserver.MayEdit, WatchInterval: c.env.WatchInterval, Logf: logger.Printf, HidePaths: hide}),
		}
	}
	memories, err := c.env.OpenMemories(ctx, c.memories, logger.Printf)
	if err != nil {
		logger.Print(err)
		return exitStatus(err)
	}
	defer memories.Close()
	if c.env.FilePath != "" {
		if c.memories != "" {
			logger.Print("MEMORY_FILE_PATH is not used: --memories is set")
		} else {
			logger.Print("MEMORY_FILE_PATH is not used: MEMORY_DATABASE_URL is set")
		}
	}
	open := func(ctx context.Context, name string) (httpserver.Memory, error) {
		m, err := memories.Open(ctx, name)
		if err != nil {
			return httpserver.Memory{}, err
		}
		hm := memory(m.Store, name, m.HidePaths)
		// A memory nobody wrote has no file or row, and is kept open
		// only while it is used.
		hm.Exists = m.Exists
		return hm, nil
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
		ln.Addr(), access.DefaultMemory, ln.Addr(), tokens.Len(), c.tokens, memories.Where)
	return serveUntilDone(ctx, hs, ln, logger)
}
