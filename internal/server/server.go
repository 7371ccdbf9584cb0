// Package server wires the knowledge graph to MCP with the official go-sdk:
// the nine tools, the memory://knowledge-graph resource, change
// notifications for both protocol generations, and the pinning of each
// connection to the protocol it opened with. It translates between MCP and
// the graph; the graph and the file store decide.
//
// Every transport gets the same results from the same code. What differs by
// transport is decided in one place each: RunStdio adds the line checks
// stdio needs (stdio.go, with the protocol rules of internal/protocol) and
// writes big results past the go-sdk's own encoding (wire.go); requests
// that arrive over HTTP get error messages without file paths (paths.go).
// What calls may make the server hold is bounded on every transport
// (bounds.go). The JSON-RPC codes of errors are decided in errors.go.
package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/protocol"
	"github.com/kgmemory/mcp-server-memory/internal/redact"
)

// Options tune a Server.
type Options struct {
	// Name and Version identify the server to clients.
	Name, Version string
	// WatchInterval is how often the memory file is checked for changes by
	// other processes; 0 means one second, negative disables watching.
	WatchInterval time.Duration
	// Logf writes diagnostics; nil discards them (the command hands
	// down its one logger).
	Logf func(format string, args ...any)
	// AnswerLimit caps the bytes of text of one tool result (docs/design.md
	// §8; answer.DefaultLimit is the server's default); a longer answer
	// comes in parts. 0: no limit, as the reference.
	AnswerLimit int
	// AnswerLimitByHost sizes the answers of hosts known to cut results
	// shorter to what they take (hosts.go); AnswerLimit is everyone
	// else's. For an AnswerLimit the environment did not set.
	AnswerLimitByHost bool
	// Memory names the memory in messages (a named memory served over
	// HTTP); "" is the memory "default".
	Memory string
	// HidePaths are the memory files whose paths, and the directories
	// above them, error messages sent over HTTP leave out (paths.go). The
	// caller that opened the store knows them; the server never guesses.
	HidePaths []string
	// Meaning, when not nil, is search by meaning (internal/meaning): the
	// search tool fuses word ranking with it, and writes wake it. Watch
	// runs it, and releases its vectors when it ends (the memory is
	// closed); nil is word ranking only.
	Meaning *meaning.Index
	// Limiter bounds the reads running and the answer bytes held
	// (bounds.go), shared by every Server of a process; nil: one of the
	// default bounds for this Server alone.
	Limiter *Limiter
}

// Server is the memory server: one store served to any number of MCP
// sessions.
type Server struct {
	mcp   *mcp.Server
	store graph.Store
	opts  Options
	pins  protocol.Pins // the protocol version each live session is pinned to
	hide  redact.Rules  // what error messages over HTTP leave out (paths.go)
	// standing keeps the standing facts of the graph last searched
	// (standing.go).
	standing standingCache

	limiter  *Limiter        // bounds.go
	writes   map[string]bool // the names of the write tools
	notified notified        // what Watch told subscribers (notified.go)
	// encoding, when a test sets it, runs as a read begins to encode its
	// page, the graph let go (Server.page).
	encoding func()

	// toolCalls counts tool calls running; stopCalls ends them.
	toolCalls atomic.Int64
	stop      context.Context
	stopCalls context.CancelFunc
}

// New returns a Server for store.
func New(store graph.Store, opts Options) *Server {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.WatchInterval == 0 {
		opts.WatchInterval = time.Second
	}
	if opts.Name == "" {
		opts.Name = "mcp-server-memory"
	}
	if opts.Limiter == nil {
		opts.Limiter = NewLimiter(Bounds{})
	}
	s := &Server{store: store, opts: opts, hide: redact.Paths(opts.HidePaths...), limiter: opts.Limiter, writes: map[string]bool{}}
	s.stop, s.stopCalls = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "Knowledge Graph Memory", Version: opts.Version}, &mcp.ServerOptions{
		// No logging capability: the server never sends log messages.
		// The instructions and the prompt are in assistant.go.
		Capabilities:       &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{}},
		Instructions:       instructions,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable:       setCacheable,
	})
	s.mcp.AddReceivingMiddleware(s.receive)
	s.addTools()
	s.addPrompts()
	s.mcp.AddResource(&mcp.Resource{
		URI:         answer.ResourceURI,
		Name:        "knowledge-graph",
		Title:       "Knowledge Graph",
		Description: "The full knowledge graph with all entities and relations",
		MIMEType:    "application/json",
	}, s.readResource)
	s.addStandingResource()
	return s
}

// MCP returns the go-sdk server, for transports that serve it (Streamable
// HTTP). It is complete as New built it: transports add nothing to it.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ToolCalls returns how many tool calls are running, for a transport that
// shuts down to wait on.
func (s *Server) ToolCalls() int64 { return s.toolCalls.Load() }

// CancelToolCalls cancels the tool calls running and every later one: a
// write still waiting for the file lock is abandoned, never half-done. For
// a shutdown that ran out of time.
func (s *Server) CancelToolCalls() { s.stopCalls() }

func (s *Server) logf(format string, args ...any) { s.opts.Logf(format, args...) }

// Watch tells subscribers, and search by meaning, when the memory changes
// (a write of this server, of the page beside it, or of another process:
// the store's Watch reports them all), and runs search by meaning's
// background embedding (Options.Meaning), until ctx ends. Without it
// (Options.WatchInterval negative) they hear only this server's writes.
func (s *Server) Watch(ctx context.Context) {
	if ix := s.opts.Meaning; ix != nil {
		go func() {
			ix.Run(ctx, s.store)
			ix.Release()
		}()
	}
	if s.opts.WatchInterval < 0 {
		return
	}
	s.notified.watching.Add(1)
	defer s.notified.watching.Add(-1)
	s.store.Watch(ctx, s.opts.WatchInterval, func() {
		s.memoryChanged(ctx)
		s.notified.told()
	})
}

// memoryChanged tells search by meaning and the subscribers that the
// memory changed.
func (s *Server) memoryChanged(ctx context.Context) {
	if s.opts.Meaning != nil {
		s.opts.Meaning.Changed()
	}
	s.graphChanged(ctx)
}

func (s *Server) graphChanged(ctx context.Context) {
	for _, uri := range []string{answer.ResourceURI, StandingURI} {
		if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.logf("notifying subscribers: %v", err)
		}
	}
}

// receive is the server's one receiving middleware: it pins each session
// to its protocol (internal/protocol), counts tool calls and lets CancelToolCalls end
// them, bounds the reads running and the answers held (bounds.go), lists
// to a read-only token only the tools it may call (access.go), gives
// every error a JSON-RPC code (errors.go), sends no caching hints where
// the session's protocol has none (cache.go), keeps file paths out of what
// HTTP clients see (paths.go), and has tool results written in one pass
// (wire.go).
func (s *Server) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		version, decides := protocol.RequestVersion(method, req)
		if err := s.pins.Check(req.GetSession(), method, version, decides); err != nil {
			return nil, err
		}
		if method == "tools/call" {
			var done func()
			ctx, done = s.startToolCall(ctx)
			defer done()
		}
		if s.isRead(method, req) {
			done, err := s.limiter.startRead(ctx)
			if err != nil {
				s.refusedInRequest(req, err)
				return nil, wireError(method, err)
			}
			defer done()
		}
		res, err := next(ctx, method, req)
		return s.finish(ctx, method, req, version, res, err)
	}
}

// startToolCall counts a tool call as running until done, and lets
// CancelToolCalls end it.
func (s *Server) startToolCall(ctx context.Context) (context.Context, func()) {
	s.toolCalls.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stop, cancel)
	return ctx, func() {
		stop()
		cancel()
		s.toolCalls.Add(-1)
	}
}

// isRead reports whether req is a read of the memory: a read tool's call,
// or resources/read.
func (s *Server) isRead(method string, req mcp.Request) bool {
	switch method {
	case "resources/read":
		return true
	case "tools/call":
		call, ok := req.(*mcp.CallToolRequest)
		return ok && call.Params != nil && !s.writes[call.Params.Name]
	}
	return false
}

// heldByRequest leaves release to the HTTP request that carries req, when
// it has a scope open (ScopeHeader), and reports whether it did.
func (s *Server) heldByRequest(req mcp.Request, release func()) bool {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return false
	}
	id := extra.Header.Get(ScopeHeader)
	return id != "" && s.limiter.keepUntilClosed(id, release)
}

// Limiter returns the server's limiter, for a transport that holds answers
// until it has written them (OpenScope).
func (s *Server) Limiter() *Limiter { return s.limiter }

// IsWrite reports whether tool is one of the write tools, for a transport
// that counts reads and writes apart.
func (s *Server) IsWrite(tool string) bool { return s.writes[tool] }

// finish makes what next returned the message the go-sdk sends.
func (s *Server) finish(ctx context.Context, method string, req mcp.Request, version string, res mcp.Result, err error) (mcp.Result, error) {
	if method == "initialize" && err == nil {
		if ir, ok := res.(*mcp.InitializeResult); ok {
			s.pins.Pin(req.GetSession(), ir.ProtocolVersion)
		}
	}
	if method == "tools/list" && err == nil && !mayWrite(req) {
		res = readToolsOnly(res)
	}
	if err != nil {
		err = wireError(method, err)
	}
	if overHTTP(req) {
		res, err = hide(s.hide, res, err)
	}
	if err != nil {
		return res, err
	}
	size := resultSize(res)
	release := s.limiter.hold(heldBytes(req, size))
	out, kept := encodedOnce(ctx, withoutCacheHints(res, version), size, release)
	if !kept && !s.heldByRequest(req, release) {
		release()
	}
	return out, nil
}

func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI != answer.ResourceURI && req.Params.URI != StandingURI {
		return errUnknownResource(req.Params.URI)
	}
	return nil
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var text string
	if err := s.store.View(ctx, func(g *graph.Graph) error { text = answer.Graph(g); return nil }); err != nil {
		return nil, errInternal(s.clientError(req, err))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      answer.ResourceURI,
		MIMEType: "application/json",
		Text:     text,
	}}}, nil
}
