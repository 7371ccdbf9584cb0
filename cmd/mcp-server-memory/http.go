package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

// --http serves one memory, at /mcp and its page at /, or with --tokens
// FILE named memories (docs/design.md §11): memory NAME at /mcp/NAME and
// the memory "default" at /mcp, and memory NAME's web page at /page/NAME/,
// each from DIR/NAME.jsonl (--memories DIR) or from the database of
// MEMORY_DATABASE_URL.

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

// serveHTTP serves o's memories on Streamable HTTP until ctx ends: the
// named memories of the tokens file (--tokens), reading it again on SIGHUP,
// or the one memory, at /mcp and its page at /, behind the token of
// MEMORY_HTTP_TOKEN or --http-token-file (none on a loopback address). Both
// are one httpserver.Config, made once: only its grants and memories
// differ.
func serveHTTP(ctx context.Context, logger *log.Logger, o options) (status int) {
	o.limiter = newLimiter(o.env.Bounds)
	cfg := httpserver.Config{Addr: o.addr, AllowedHosts: hostList(o.allowedHosts), Limits: o.limits, Logf: logger.Printf}
	var s served
	if o.tokens != "" {
		s = o.namedMemories(ctx, logger, &cfg)
	} else {
		s = o.oneMemory(ctx, logger, &cfg)
	}
	if s.close != nil {
		defer func() {
			if err := s.close(); err != nil && status == 0 {
				status = 1
			}
		}()
	}
	if s.status != 0 {
		return s.status
	}
	hs, err := httpserver.New(cfg)
	if err != nil {
		logger.Print(err)
		return 2
	}
	ln, err := hs.Listen()
	if err != nil {
		logger.Print(err)
		return 1
	}
	if s.tokens != nil {
		// Listening before the first line of the log, which tells a
		// test or a script that SIGHUP may come.
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		go reloadOnHangUp(ctx, hup, hs, s.tokens, o.tokens, logger)
	}
	logger.Print(s.announce(ln.Addr()))
	if err := hs.Serve(ctx, ln); err != nil {
		logger.Print(err)
		return 1
	}
	logger.Print("stopped")
	return 0
}

// served is what serveHTTP serves, as oneMemory and namedMemories set it up.
type served struct {
	tokens   *access.File // the tokens file, read again on SIGHUP; nil for one memory
	announce func(addr net.Addr) string
	close    func() error // an error: the exit status is 1
	status   int          // the exit status when it could not be set up; 0 when it was
}

// oneMemory opens the one memory, and sets in cfg its token's grants (or
// everyone's, without a token) and the memory with its page.
func (o options) oneMemory(ctx context.Context, logger *log.Logger, cfg *httpserver.Config) served {
	m, status := o.open(ctx, logger)
	if m == nil {
		return served{status: status}
	}
	token, err := httpserver.Token(o.env.HTTPToken, o.tokenFile)
	if err == nil {
		cfg.Grants, err = httpserver.SingleGrants(token)
	}
	if err != nil {
		logger.Print(err)
		return served{close: m.Close, status: 2}
	}
	// The page names the memory by its file or database: it is the
	// owner's, as the token is.
	byMeaning := openMeaning(o.env, m, nil, logger.Printf)
	o.logMeaning(logger, byMeaning != nil)
	cfg.Memories = httpserver.One(o.httpMemory(logger, m.Store, "", m.Where, m.HidePaths, byMeaning))
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	stopIndexing := buildIndexes(ctx, m.Store, logger.Printf)
	closeMemory := func() error {
		stopIndexing()
		return m.Close()
	}
	return served{close: closeMemory, announce: func(addr net.Addr) string {
		return fmt.Sprintf("serving MCP Streamable HTTP at http://%s/mcp (%s), the memory's page at http://%s/; %s", addr, auth, addr, m.Where)
	}}
}

// namedMemories reads the tokens file and sets in cfg the grants and the
// memories they reach, each opened when a request first needs it.
func (o options) namedMemories(ctx context.Context, logger *log.Logger, cfg *httpserver.Config) served {
	tokens, err := access.OpenWith(o.tokens, access.Options{Logf: logger.Printf})
	if err != nil {
		logger.Print(err)
		return served{status: 2}
	}
	memories, err := o.env.OpenMemories(ctx, o.memories, logger.Printf)
	if err != nil {
		logger.Print(err)
		return served{status: exitStatus(err)}
	}
	if o.env.FilePath != "" {
		if o.memories != "" {
			logger.Print("MEMORY_FILE_PATH is not used: --memories is set")
		} else {
			logger.Print("MEMORY_FILE_PATH is not used: MEMORY_DATABASE_URL is set")
		}
	}
	o.logMeaning(logger, o.env.Embeddings.On())
	// One outage is logged once, and the recent queries' vectors are
	// bounded, for all the memories together.
	shared := meaning.NewShared()
	cfg.Grants = tokens
	cfg.Memories = func(ctx context.Context, name string) (httpserver.Memory, error) {
		m, err := memories.Open(ctx, name)
		if err != nil {
			return httpserver.Memory{}, err
		}
		// "memory NAME", not the file's path: the page is for the team,
		// the server's directories are not.
		hm := o.httpMemory(logger, m.Store, name, "memory "+name, m.HidePaths, openMeaning(o.env, m, shared, logger.Printf))
		// A memory nobody wrote has no file or row, and is kept open
		// only while it is used.
		hm.Exists = m.Exists
		return hm, nil
	}
	return served{tokens: tokens, close: func() error { memories.Close(); return nil }, announce: func(addr net.Addr) string {
		return fmt.Sprintf("serving named memories over MCP Streamable HTTP at http://%s/mcp/NAME (the memory %q at /mcp), memory NAME's page at http://%s/page/NAME/ (open /page/NAME/?token=TOKEN once); %d tokens from %s (SIGHUP reads it again); %s",
			addr, access.DefaultMemory, addr, tokens.Len(), o.tokens, memories.Where)
	}}
}

// httpMemory is a memory's MCP server and web page, which share its store:
// its Watch reports every write, so each hears the other's. name is the memory's name ("" for the
// one memory), where how its page names it, hide its file (none in a
// database), whose directories error messages to clients leave out, and
// byMeaning its search by meaning (nil: by words only).
func (o options) httpMemory(logger *log.Logger, store graph.Store, name, where string, hide []string, byMeaning *meaning.Index) httpserver.Memory {
	opts := o.serverOptions(logger, name, hide)
	opts.Meaning = byMeaning
	page := ui.Options{MayEdit: httpserver.MayEdit, Client: httpserver.Client, WatchInterval: o.env.WatchInterval, Logf: logger.Printf, HidePaths: hide}
	if byMeaning != nil {
		page.Vectors = func() (int, int) {
			_, have, want := byMeaning.Status()
			return have, want
		}
	}
	return httpserver.Memory{
		Server: server.New(store, opts),
		Page:   ui.NewHandler(store, where, page),
	}
}

// reloadOnHangUp reads the tokens file again on each SIGHUP (hup) until
// ctx ends.
func reloadOnHangUp(ctx context.Context, hup <-chan os.Signal, hs *httpserver.Server, tokens *access.File, path string, logger *log.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := hs.ReloadTokens(); err != nil {
				logger.Printf("SIGHUP: %v; the grants in force stay as they were", err)
			} else {
				logger.Printf("SIGHUP: tokens file %s read again: %d tokens", path, tokens.Len())
			}
		}
	}
}

// hostList splits --http-allowed-hosts.
func hostList(allowedHosts string) []string {
	if allowedHosts == "" {
		return nil
	}
	return strings.Split(allowedHosts, ",")
}
