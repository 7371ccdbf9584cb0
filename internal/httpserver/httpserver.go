// Package httpserver serves the memory server over MCP Streamable HTTP, so
// that many clients, on this machine or others, share one memory file.
//
// One URL, /mcp, speaks both protocol generations: 2026-07-28 statelessly
// (per-request _meta, server/discover, subscriptions/listen streams) and the
// 2025 generation with sessions (initialize, Mcp-Session-Id, the GET event
// stream that carries resources/updated). GET /healthz answers 200 without
// authentication and says nothing else.
//
// Security is on by default:
//
//   - A bare port binds 127.0.0.1. Any other address binds what it says, and
//     is refused without a bearer token.
//   - A configured token is required on every /mcp request (401 otherwise),
//     loopback included.
//   - Host and Origin are checked against DNS rebinding (403).
//   - Request bodies are limited in size (413) and must arrive within 30 s;
//     headers within 10 s; idle connections close after 2 minutes. Each
//     write of a response must complete within 30 s, but a response as a
//     whole has no deadline: event streams live as long as their client.
//   - What clients can make the server hold is bounded: 2025 sessions per
//     token and in all (sessions.go), sessions silent after initialize are
//     closed, and named memories are closed when unused and capped
//     (memories.go).
//   - Error responses are fixed texts: no stack traces, no file paths; MCP
//     error messages name no directory (internal/server sees to that for
//     every request that arrives over HTTP).
//
// With the grants of a tokens file (Config.Grants) the server serves named
// memories instead: memory NAME at /mcp/NAME and its web page at
// /page/NAME/, each behind the grants of the file. Either way there is one
// way in: a server of one memory is the server of named memories with one
// memory and one grant, and every request for a memory, MCP or page,
// passes the same gate (admit, gate.go) and page login (page.go); what
// differs follows from the grants (shape.go).
//
// Serve shuts down gracefully when its context ends: it stops accepting,
// ends event streams, lets in-flight tool calls finish (so every write a
// client saw acknowledged is in the file and the file lock is released),
// then closes the sessions.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// Defaults for Config's zero values.
const (
	DefaultMaxBodyBytes       = 4 << 20
	DefaultShutdownTimeout    = 5 * time.Second
	DefaultIdleSessionTimeout = 30 * time.Minute
	// A 2025 session must make a request within DefaultSessionStartTimeout
	// of its initialize (a client sends notifications/initialized at once).
	DefaultSessionStartTimeout = time.Minute
	// Session caps: far above what a team uses (a client holds one session
	// per server, a few while it reconnects), far below what exhausts
	// memory (a session costs about 20 KiB).
	DefaultMaxSessions         = 4096
	DefaultMaxSessionsPerToken = 256
	// Stream caps: a client listens on one or two streams per memory, a
	// page on one per open tab.
	DefaultMaxStreams         = 1024
	DefaultMaxStreamsPerToken = 64

	maxHeaderBytes = 64 << 10
	// drainGrace is how long tool calls still running after a forced
	// shutdown get to finish their save.
	drainGrace = 2 * time.Second
)

// Config configures a Server: what it serves, to whom, and how. Addr,
// Grants and Memories are required.
type Config struct {
	// Addr is the --http address: a port ("8080" or ":8080", which bind
	// 127.0.0.1) or HOST:PORT ("0.0.0.0:8080", "[::1]:8080", "myhost:8080").
	Addr string
	// AllowedHosts are host names (ports ignored) accepted in the Host and
	// Origin headers besides loopback names and the bound host: the names
	// clients use to reach the server, e.g. behind a reverse proxy.
	AllowedHosts []string
	// Limits bound what clients can make the server hold, and how long
	// it waits; zero values mean the defaults.
	Limits
	// Logf receives the access log and notices; nil discards them (the
	// command hands down its one logger).
	Logf func(format string, args ...any)
	// Grants say who may do what with which memory (docs/design.md §11),
	// and so where the memories are:
	//
	//   - a tokens file's (access.File, read again by ReloadTokens): named
	//     memories, memory NAME at /mcp/NAME and the memory "default" at
	//     /mcp, and memory NAME's web page at /page/NAME/ (page.go);
	//   - the grants of a server of one memory (SingleGrants: its token's,
	//     or on a loopback address without a token everyone's): that memory
	//     at /mcp, and its page at every other path.
	//
	// Every credential is checked against them, on every /mcp request and
	// every page request (the page also takes its cookie).
	Grants access.Source
	// Memories returns memory NAME (a name access.ValidName accepts), the
	// first time a request granted that memory arrives; the Server keeps
	// it. An error answers that request with 503. The memory of a server
	// of one memory is opened by New, and kept open (One).
	Memories func(ctx context.Context, name string) (Memory, error)
}

// Page is a memory's web page (internal/ui's Handler). Its Close ends its
// event streams at shutdown.
type Page interface {
	http.Handler
	Close()
}

// Memory is one memory: its MCP server and, when it has one, its web page
// (none: no page, 404). Page learns the grant of each request from
// MayEdit; the two share
// the memory's store, whose Watch reports every write, so that each hears
// the other's.
type Memory struct {
	Server *server.Server
	Page   Page
	// Exists reports whether the memory holds anything stored (its file,
	// its database row). A memory that does not is closed as soon as its
	// last request ends, so reads of names nobody wrote keep nothing open.
	// nil: it always does.
	Exists func() bool
}

// Server is the memory server on Streamable HTTP.
type Server struct {
	cfg  Config
	addr listenAddr
	// one is the memory of a server of one memory (Config.Grants), ""
	// for named memories: what differs between them follows from it
	// (shape.go).
	one     string
	handler http.Handler
	// The go-sdk handlers' options, for each memory's endpoint.
	sessionsOpts, statelessOpts mcp.StreamableHTTPOptions

	mu        sync.Mutex
	endpoints map[string]*endpoint // open memories, by name
	opening   map[string]*opening  // memories being opened, by name
	sessions  *sessionLimits
	// streamCaps bounds long-lived responses, MCP and page alike.
	streamCaps *streamLimits
	// callCaps bounds the tool calls in progress of each token.
	callCaps *callLimits
	// background is Serve's context for the memories' Watch; nil before
	// Serve.
	background context.Context
	// open are the requests to named memories being served.
	open map[*openRequest]struct{}

	// streams ends long-lived responses at shutdown (stopStreams).
	streams     context.Context
	stopStreams context.CancelFunc
}

// endpoint serves one memory: its server, and the go-sdk handlers of both
// protocol generations behind the router.
type endpoint struct {
	name     string
	mem      *server.Server
	page     Page        // the memory's web page, if any
	exists   func() bool // Memory.Exists
	router   *generationRouter
	activity *sessionActivity
	// readOnly serves a read grant: the router, with token information
	// that write tools refuse (readOnlyInfo).
	readOnly http.Handler

	// Guarded by Server.mu (memories.go).
	pinned    bool      // the memory of a server of one memory: never closed
	users     int       // requests using it
	lastUsed  time.Time // when the last request ended
	stopWatch context.CancelFunc
}

// New returns a Server for the memories of Config.Memories behind
// Config.Grants. It refuses a configuration that would expose a memory: a
// non-loopback address whose grants need no token.
//
// A server of one memory is the server of named memories with one memory,
// always open, and its grants: the same gate (admit) and the same page
// login for both; only the addresses and the refusals' words differ
// (shape.go).
func New(cfg Config) (*Server, error) {
	addr, err := resolveAddr(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if err := cfg.check(addr); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	s := &Server{cfg: cfg, addr: addr, one: cfg.Grants.Grants().Only(), endpoints: map[string]*endpoint{}, opening: map[string]*opening{}}
	s.sessions = newSessionLimits(cfg.MaxSessions, cfg.MaxSessionsPerToken, s.liveSessions)
	s.streamCaps = newStreamLimits(cfg.MaxStreams, cfg.MaxStreamsPerToken)
	s.callCaps = newCallLimits(cfg.MaxCallsPerToken)
	s.streams, s.stopStreams = context.WithCancel(context.Background())
	s.sessionsOpts, s.statelessOpts = sdkOptions(cfg)
	if s.one != "" {
		ep, err := s.openMemory(context.Background(), s.one)
		if err != nil {
			return nil, err
		}
		ep.pinned = true
		s.endpoints[s.one] = ep
	}
	s.handler = accessLog(cfg.Logf, closeUnreadBodies(s.routes()))
	return s, nil
}

// check refuses a Config that does not say what to serve, or that would
// expose a memory.
func (cfg *Config) check(addr listenAddr) error {
	switch {
	case cfg.Grants == nil:
		return errors.New("httpserver: no grants (Config.Grants): nobody could reach a memory")
	case cfg.Memories == nil:
		return errors.New("httpserver: no memory to serve")
	case cfg.Grants.Grants().Open() && !addr.loopback:
		return fmt.Errorf("refusing to serve on %s without a token: anyone who can reach it could read and change the memory. Set MEMORY_HTTP_TOKEN or --http-token-file, or bind a loopback address (a bare port such as 8080 binds 127.0.0.1)", addr.hostPort)
	}
	return nil
}

// setDefaults fills in the zero values.
func (cfg *Config) setDefaults() {
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
}

// sdkOptions are the options of the go-sdk's handlers of each memory: for
// 2025 sessions and for stateless 2026-07-28 requests.
func sdkOptions(cfg Config) (sessions, stateless mcp.StreamableHTTPOptions) {
	sdkLog := slog.New(slog.NewTextHandler(logfWriter(cfg.Logf), &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // Logf stamps the time
			}
			return a
		},
	}))
	common := mcp.StreamableHTTPOptions{
		// The Host and Origin checks (hostPolicy) cover this, and also
		// allow the names in AllowedHosts (a reverse proxy on this machine).
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        cfg.MaxBodyBytes,
		Logger:                     sdkLog,
	}
	sessions, stateless = common, common
	// 2025 clients can resume a dropped event stream (Last-Event-ID) and
	// still get the result of a tool call. The store keeps at most 10 MiB
	// of recent events across all sessions.
	sessions.EventStore = mcp.NewMemoryEventStore(nil)
	stateless.Stateless = true
	// A 2026 client that goes away cancels its request: a write still
	// waiting for the file lock is abandoned, never half-done.
	stateless.PropagateRequestCancellation = true
	return sessions, stateless
}

// newEndpoint builds the handlers that serve mem.
func (s *Server) newEndpoint(mem *server.Server) *endpoint {
	getServer := func(*http.Request) *mcp.Server { return mem.MCP() }
	ep := &endpoint{mem: mem, activity: &sessionActivity{sessions: map[string]*activity{}}}
	ep.router = &generationRouter{
		sessions:     mcp.NewStreamableHTTPHandler(getServer, &s.sessionsOpts),
		stateless:    mcp.NewStreamableHTTPHandler(getServer, &s.statelessOpts),
		maxBody:      s.cfg.MaxBodyBytes,
		bodyTimeout:  bodyReadTimeout,
		writeTimeout: writeTimeout,
		streams:      s.streams,
		activity:     ep.activity,
		limits:       s.sessions,
		streamCaps:   s.streamCaps,
		callCaps:     s.callCaps,
		isWrite:      mem.IsWrite,
		limiter:      mem.Limiter(),
		live:         ep.liveSession,
	}
	ep.readOnly = auth.RequireBearerToken(readOnlyInfo, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(ep.router)
	return ep
}

// all returns the endpoints opened so far.
func (s *Server) all() []*endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	eps := make([]*endpoint, 0, len(s.endpoints))
	for _, ep := range s.endpoints {
		eps = append(eps, ep)
	}
	return eps
}

// every reports whether cond holds for every endpoint.
func (s *Server) every(cond func(*endpoint) bool) bool {
	for _, ep := range s.all() {
		if !cond(ep) {
			return false
		}
	}
	return true
}

// Listen opens the listening socket on the configured address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen(s.addr.network, s.addr.hostPort)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", s.addr.hostPort, err)
	}
	return ln, nil
}

// Serve serves on ln until ctx ends, then shuts down gracefully (see the
// package comment). While it runs it watches each memory it serves, so
// that subscribers learn of writes by other processes. It returns nil after a
// graceful shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleConnTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          log.New(logfWriter(s.cfg.Logf), "http: ", 0),
	}
	background, stopBackground := context.WithCancel(context.Background())
	defer stopBackground()
	s.mu.Lock()
	s.background = background
	for _, ep := range s.endpoints {
		s.startWatchLocked(ep)
	}
	s.mu.Unlock()
	go s.closeIdleSessions(background)

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		s.stopStreams()
		s.closePages()
		return err
	case <-ctx.Done():
	}
	s.shutdown(hs)
	<-served
	return nil
}

// closePages ends the web pages' event streams.
func (s *Server) closePages() {
	for _, ep := range s.all() {
		if ep.page != nil {
			ep.page.Close()
		}
	}
}

// shutdown stops accepting, lets requests in flight finish (tool calls
// run to the end of their save and their responses go out), then ends the
// event streams, which 2025 clients need until their last response is in,
// and closes the sessions. When that takes longer than ShutdownTimeout,
// tool calls still waiting for the file lock are cancelled.
func (s *Server) shutdown(hs *http.Server) {
	s.cfg.Logf("shutting down: finishing requests in flight")
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- hs.Shutdown(ctx) }() // stops accepting, closes idle connections
	s.waitFor(ctx, func() bool {
		return s.every(func(ep *endpoint) bool { return ep.router.calls.Load() == 0 && ep.mem.ToolCalls() == 0 })
	})
	s.stopStreams()
	s.closePages()
	s.waitFor(ctx, func() bool { return s.every(func(ep *endpoint) bool { return ep.router.requests.Load() == 0 }) })
	if ctx.Err() != nil {
		s.cfg.Logf("requests still running after %v; closing connections", s.cfg.ShutdownTimeout)
		for _, ep := range s.all() {
			ep.mem.CancelToolCalls()
		}
	}
	// What is left are connections without a request, which net/http would
	// wait seconds for; allow the last responses a moment to flush first.
	select {
	case <-stopped:
	case <-time.After(200 * time.Millisecond):
		hs.Close()
		<-stopped
	}
	// A tool call outlives its HTTP request when a 2025 client hung up
	// while waiting; give those a moment to finish saving.
	grace, cancelGrace := context.WithTimeout(context.Background(), drainGrace)
	defer cancelGrace()
	s.waitFor(grace, func() bool { return s.every(func(ep *endpoint) bool { return ep.mem.ToolCalls() == 0 }) })
	var running int64
	for _, ep := range s.all() {
		running += ep.mem.ToolCalls()
	}
	if running > 0 {
		s.cfg.Logf("%d tool calls still running at exit", running)
	}
	for _, ep := range s.all() {
		ep.mem.CancelToolCalls()
		for ss := range ep.mem.MCP().Sessions() {
			go ss.Close()
		}
	}
}

// waitFor polls done until it holds or ctx ends.
func (s *Server) waitFor(ctx context.Context, done func() bool) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// liveSession returns the protocol version of the live 2025 session id,
// and whether there is one.
func (ep *endpoint) liveSession(id string) (version string, ok bool) {
	for ss := range ep.mem.MCP().Sessions() {
		if ss.ID() == id {
			if p := ss.InitializeParams(); p != nil {
				version = p.ProtocolVersion
			}
			return version, true
		}
	}
	return "", false
}

// closeIdleSessions, until ctx ends, closes 2025 sessions idle for
// IdleSessionTimeout or silent for SessionStartTimeout after their
// initialize, forgets the sessions that ended, and closes named memories
// unused for MemoryIdleTimeout.
func (s *Server) closeIdleSessions(ctx context.Context) {
	every := min(s.cfg.IdleSessionTimeout, s.cfg.SessionStartTimeout, s.cfg.MemoryIdleTimeout) / 4
	t := time.NewTicker(min(every, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, ep := range s.all() {
				byID := map[string]*mcp.ServerSession{}
				var live []string
				for ss := range ep.mem.MCP().Sessions() {
					if id := ss.ID(); id != "" { // stateless sessions have no ID
						byID[id] = ss
						live = append(live, id)
					}
				}
				for _, id := range ep.activity.idle(live, s.cfg.IdleSessionTimeout, s.cfg.SessionStartTimeout, now) {
					go byID[id].Close()
				}
			}
			s.sessions.forgetEnded()
			s.closeIdleMemories(now)
		}
	}
}

// liveSessions returns the ids of the 2025 sessions open on every memory.
func (s *Server) liveSessions() map[string]bool {
	live := map[string]bool{}
	for _, ep := range s.all() {
		for ss := range ep.mem.MCP().Sessions() {
			if id := ss.ID(); id != "" {
				live[id] = true
			}
		}
	}
	return live
}

func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, `{"status":"ok"}`+"\n")
}

// logfWriter adapts Logf to the io.Writer that log.Logger and slog want.
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// SingleGrants are the grants of a server of one memory, the memory
// "default": its token may write it, or without a token (token "")
// everyone may, which New accepts on a loopback address only. It refuses
// a token too short to resist guessing.
func SingleGrants(token string) (access.Source, error) {
	switch {
	case token == "":
		return access.Everyone(access.DefaultMemory), nil
	case len(token) < access.MinTokenLength:
		return nil, fmt.Errorf("the HTTP token is %d characters; use at least %d (for example: openssl rand -hex 32)", len(token), access.MinTokenLength)
	}
	return access.Single(token, access.DefaultMemory), nil
}

// One is the Config.Memories of a server of one memory: m, which New
// opens once and never closes.
func One(m Memory) func(context.Context, string) (Memory, error) {
	return func(context.Context, string) (Memory, error) { return m, nil }
}

// Token returns the bearer token from the MEMORY_HTTP_TOKEN value or from
// the --http-token-file file (its content, surrounding white space removed),
// "" when neither is set. Setting both is an error, so that an old variable
// never silently overrides the file.
func Token(envValue, file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(envValue), nil
	}
	if envValue != "" {
		return "", errors.New("both MEMORY_HTTP_TOKEN and --http-token-file are set; use one")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading the HTTP token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("the HTTP token file %s is empty", file)
	}
	return token, nil
}
