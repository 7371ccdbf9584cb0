package httpserver

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// The connection limits the README documents. Every connection ends within
// them whatever the client does: headers must arrive within
// readHeaderTimeout, a POST body within bodyReadTimeout, each write of a
// response must be taken within writeTimeout, and a connection with no
// request ends after idleConnTimeout. Variables only so tests can shorten
// them.
var (
	readHeaderTimeout = 10 * time.Second
	bodyReadTimeout   = 30 * time.Second
	writeTimeout      = 30 * time.Second // per write, not per response
	idleConnTimeout   = 2 * time.Minute
)

// closeUnreadBodies makes every response to a request whose body was not
// read to the end close the connection: a refusal (401, 403, 404, 408,
// 413) sent before the body arrived.
//
// Without it net/http, before it sends such a response and again when the
// handler returns, reads the rest of the body to keep the connection, with
// no deadline at all: a client that sent "Content-Length: 1000", ten bytes
// and then nothing was never answered and held its connection forever.
// Closing instead is what RFC 9112 §9.6 expects of a server that does not
// read a body.
func closeUnreadBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		bodyDeadline := time.Now().Add(bodyReadTimeout)
		body := &eofBody{ReadCloser: r.Body}
		r.Body = body
		cw := &closeIfUnread{ResponseWriter: w, body: body}
		next.ServeHTTP(cw, r)
		cw.decide() // a handler that wrote nothing: net/http writes the header now
		if !body.eof.Load() {
			// net/http still drains the body (up to 256 KiB) when the
			// handler returns, Connection: close or not, with no deadline
			// of its own. Give it the body's: an honest client that is
			// still sending finishes and then reads the refusal, rather
			// than have its upload cut by a reset that may also discard
			// the answer; a stalled one is cut off at the body limit.
			_ = http.NewResponseController(w).SetReadDeadline(bodyDeadline)
		}
	})
}

// eofBody records whether a request body was read to its end.
type eofBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *eofBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// closeIfUnread adds "Connection: close" to the response header when it is
// written before the request body was read to its end.
type closeIfUnread struct {
	http.ResponseWriter
	body    *eofBody
	decided bool
}

func (c *closeIfUnread) decide() {
	if c.decided {
		return
	}
	c.decided = true
	if !c.body.eof.Load() {
		c.Header().Set("Connection", "close")
	}
}

func (c *closeIfUnread) WriteHeader(code int) {
	c.decide()
	c.ResponseWriter.WriteHeader(code)
}

func (c *closeIfUnread) Write(p []byte) (int, error) {
	c.decide()
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (the go-sdk flushes event streams
// with it) reach the connection.
func (c *closeIfUnread) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Limits are the bounds and timeouts of a Server, read once from the
// command line and the environment and handed down as one value.
type Limits struct {
	// MaxBodyBytes limits a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ShutdownTimeout bounds how long shutdown waits for in-flight
	// requests; 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// IdleSessionTimeout closes 2025-generation sessions that had no request
	// open for this long (clients that vanished without ending their
	// session); 0 means DefaultIdleSessionTimeout.
	IdleSessionTimeout time.Duration
	// SessionStartTimeout closes 2025-generation sessions that made no
	// request within this time after their initialize; 0 means
	// DefaultSessionStartTimeout.
	SessionStartTimeout time.Duration
	// MaxSessions caps the 2025-generation sessions open at once on the
	// server, and MaxSessionsPerToken those opened with one token (without
	// a token, all clients count as one); 0 means DefaultMaxSessions and
	// DefaultMaxSessionsPerToken. An initialize past a cap is refused with
	// a JSON-RPC error that says which cap (HTTP 503 for the server's, 429
	// for a token's). 2026-07-28 requests open no session and count for
	// neither.
	MaxSessions, MaxSessionsPerToken int
	// MaxStreams caps the long-lived responses open at once on the server
	// (2025 GET event streams, 2026 subscriptions/listen, the pages'
	// /api/events), and MaxStreamsPerToken those of one token (of one
	// page login without a bearer token); 0 means DefaultMaxStreams and
	// DefaultMaxStreamsPerToken. A stream past a cap is refused (HTTP 503
	// for the server's, 429 for a token's) with a message naming the cap.
	MaxStreams, MaxStreamsPerToken int
	// MaxCallsPerToken caps the tool calls in progress of one token (of all
	// clients without a token together), reads and writes each; 0 means
	// server.DefaultMaxCalls. A call past it is refused with HTTP 429,
	// Retry-After and a JSON-RPC error naming MEMORY_MAX_CALLS.
	MaxCallsPerToken int
	// MaxOpenMemories caps the named memories open at once, and
	// MemoryIdleTimeout closes a named memory unused for that long (see
	// memories.go); 0 means DefaultMaxOpenMemories and
	// DefaultMemoryIdleTimeout.
	MaxOpenMemories   int
	MemoryIdleTimeout time.Duration
}

// withDefaults is l with its zero values replaced by the defaults.
func (l Limits) withDefaults() Limits {
	orDefault(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	orDefault(&l.ShutdownTimeout, DefaultShutdownTimeout)
	orDefault(&l.IdleSessionTimeout, DefaultIdleSessionTimeout)
	orDefault(&l.SessionStartTimeout, DefaultSessionStartTimeout)
	orDefault(&l.MaxSessions, DefaultMaxSessions)
	orDefault(&l.MaxSessionsPerToken, DefaultMaxSessionsPerToken)
	orDefault(&l.MaxStreams, DefaultMaxStreams)
	orDefault(&l.MaxStreamsPerToken, DefaultMaxStreamsPerToken)
	orDefault(&l.MaxCallsPerToken, server.DefaultMaxCalls)
	orDefault(&l.MaxOpenMemories, DefaultMaxOpenMemories)
	orDefault(&l.MemoryIdleTimeout, DefaultMemoryIdleTimeout)
	return l
}

// orDefault sets *v to def when it is not positive.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
