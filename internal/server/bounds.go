package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What tool calls can make the server hold, and how it refuses past that
// (docs/bounds.md). A client that sends calls faster than it reads their
// answers, or many big reads at once, would otherwise grow the server
// without end: with no answer limit, 100 whole answers of a big memory are
// gigabytes. Three bounds:
//
//   - calls in progress per connection (stdio, stdio.go) and per token
//     (HTTP, internal/httpserver), reads and writes counted apart, so a
//     write is never refused because of reads: past it a call is refused at
//     once;
//   - reads running at once, in the whole process (CPU): a read past it
//     waits for a place, at most ReadWait and in a queue of at most
//     maxWaiting, then is refused; writes take no place, so a write never
//     waits behind reads here;
//   - bytes of answers held at once, in the whole process: a read answer is
//     counted from when it is built until it is written (stdio), or until
//     the HTTP request that carried it ends (ScopeHeader), over HTTP with
//     the go-sdk's copies of it (httpCopies). A
//     read starts only while the answers held are under the bound, and
//     waits like a read for a place otherwise; so the bound is exceeded by
//     at most the answers of the reads running.

// Defaults of Bounds' zero values.
const (
	DefaultMaxCalls       = 64
	DefaultMaxAnswerBytes = 256 << 20
	DefaultReadWait       = 30 * time.Second
)

// maxWaiting bounds the reads waiting for a place; one past it is refused
// at once.
const maxWaiting = 64

// DefaultMaxReads is the reads running at once by default: one per core,
// at least 2.
func DefaultMaxReads() int { return max(2, runtime.GOMAXPROCS(0)) }

// Bounds are the bounds above; zero values are the defaults.
type Bounds struct {
	// Calls is the tool calls in progress one connection (stdio) or one
	// token (HTTP) may have, reads and writes each (MEMORY_MAX_CALLS).
	Calls int
	// Reads is the reads running at once (MEMORY_MAX_READS).
	Reads int
	// AnswerBytes is the bytes of answers held at once
	// (MEMORY_MAX_ANSWER_MB).
	AnswerBytes int64
	// ReadWait is how long a read waits for a place or for room for its
	// answer before it is refused.
	ReadWait time.Duration
}

func (b Bounds) withDefaults() Bounds {
	if b.Calls <= 0 {
		b.Calls = DefaultMaxCalls
	}
	if b.Reads <= 0 {
		b.Reads = DefaultMaxReads()
	}
	if b.AnswerBytes <= 0 {
		b.AnswerBytes = DefaultMaxAnswerBytes
	}
	if b.ReadWait <= 0 {
		b.ReadWait = DefaultReadWait
	}
	return b
}

// Limiter enforces the bounds of reads running and of answer bytes held,
// for every Server given it (Options.Limiter): the process's CPU and
// memory are shared by all the memories it serves.
type Limiter struct {
	bounds Bounds

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a place or bytes free up
	running int           // reads running
	waiting int           // reads waiting for a place or for room
	held    int64         // bytes of answers held
	// scopes are the HTTP requests open (OpenScope), by id, with the
	// releases of the answers they hold.
	scopes    map[string][]func()
	nextScope uint64
	// refusals are the refusals by the bounds above of calls the scopes
	// carry, by scope id (Refusal).
	refusals map[string]*jsonrpc.Error
}

// NewLimiter returns a Limiter of bounds (zero values: the defaults).
func NewLimiter(bounds Bounds) *Limiter {
	return &Limiter{bounds: bounds.withDefaults(), changed: make(chan struct{}), scopes: map[string][]func(){}, refusals: map[string]*jsonrpc.Error{}}
}

// ScopeHeader is the request header under which the HTTP transport names
// the scope (OpenScope) of a request it hands to the go-sdk. The transport
// sets it itself, over whatever a client sent; the go-sdk hands the
// request's header to the tool calls as RequestExtra.Header.
const ScopeHeader = "X-Memory-Answer-Scope"

// OpenScope opens a scope for an HTTP request: the answers of the calls it
// carries stay counted as held until CloseScope, when the transport has
// written them. It returns the scope's id.
func (l *Limiter) OpenScope() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nextScope++
	id := strconv.FormatUint(l.nextScope, 10)
	l.scopes[id] = nil
	return id
}

// CloseScope lets go of the answers of scope id.
func (l *Limiter) CloseScope(id string) {
	l.mu.Lock()
	releases := l.scopes[id]
	delete(l.scopes, id)
	delete(l.refusals, id)
	l.mu.Unlock()
	for _, release := range releases {
		release()
	}
}

// keepUntilClosed leaves release to the scope id, and reports whether the
// scope is open; the caller runs release otherwise.
func (l *Limiter) keepUntilClosed(id string, release func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	releases, open := l.scopes[id]
	if open {
		l.scopes[id] = append(releases, release)
	}
	return open
}

// Refusal returns the refusal, by the reads running or the answers held,
// of a call that scope id carries, or nil. The HTTP transport answers a
// request so refused with 503 rather than 200 when it still can.
func (l *Limiter) Refusal(id string) *jsonrpc.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refusals[id]
}

// noteRefusal records the refusal e of a call scope id carries, if the
// scope is open.
func (l *Limiter) noteRefusal(id string, e *jsonrpc.Error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.scopes[id]; open {
		l.refusals[id] = e
	}
}

// refusedInRequest records a refusal by the bounds with the scope of the
// HTTP request that carries req, if it has one (Limiter.Refusal).
func (s *Server) refusedInRequest(req mcp.Request, err error) {
	var refusal *jsonrpc.Error
	extra := req.GetExtra()
	if errors.As(err, &refusal) && extra != nil && extra.Header != nil {
		if id := extra.Header.Get(ScopeHeader); id != "" {
			s.limiter.noteRefusal(id, refusal)
		}
	}
}

// Bounds returns the limiter's bounds, defaults filled in.
func (l *Limiter) Bounds() Bounds { return l.bounds }

// wait waits, at most the limiter's ReadWait, until fits holds (called
// with l.mu held), then does take. It refuses at once when the queue is
// full, and with the refusal of refuse when the wait ran out.
func (l *Limiter) wait(ctx context.Context, fits func() bool, take func(), refuse func() *jsonrpc.Error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fits() {
		take()
		return nil
	}
	if l.waiting >= maxWaiting {
		return refuse()
	}
	l.waiting++
	defer func() { l.waiting-- }() // before the unlock: deferred calls run last first
	timer := time.NewTimer(l.bounds.ReadWait)
	defer timer.Stop()
	for !fits() {
		changed := l.changed
		l.mu.Unlock()
		var err error
		select {
		case <-changed:
		case <-timer.C:
			err = errWaitedOut
		case <-ctx.Done():
			err = ctx.Err()
		}
		l.mu.Lock()
		switch {
		case err == nil, fits():
		case err == errWaitedOut:
			return refuse()
		default:
			return err
		}
	}
	take()
	return nil
}

var errWaitedOut = errors.New("waited out")

// wake tells waiting reads that a place or bytes freed up; l.mu is held.
func (l *Limiter) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// startRead takes a place among the reads running, waiting for one, and
// for the answers held to leave room, if need be; it returns the func
// that gives the place back.
func (l *Limiter) startRead(ctx context.Context) (done func(), err error) {
	room := func() bool { return l.running < l.bounds.Reads && l.held < l.bounds.AnswerBytes }
	err = l.wait(ctx, room, func() { l.running++ }, func() *jsonrpc.Error {
		if l.running < l.bounds.Reads {
			return errBusyAnswers(l.bounds.AnswerBytes)
		}
		return errBusyReads(l.bounds.Reads, l.waiting)
	})
	if err != nil {
		return nil, err
	}
	return l.onceUnder(func() { l.running-- }), nil
}

// hold counts n bytes of a built answer as held, and returns the func that
// lets them go. It never waits: the read waited for room before it built
// the answer, so the bytes held exceed the bound by at most the answers of
// the reads running.
func (l *Limiter) hold(n int64) (release func()) {
	l.mu.Lock()
	l.held += n
	l.mu.Unlock()
	return l.onceUnder(func() { l.held -= n })
}

// httpCopies is how many times its size an answer sent over HTTP holds
// until its request ends: the go-sdk's HTTP path encodes the response
// around the result and writes it with copies of its own. Measured with
// the binary, one whole read_graph (MEMORY_ANSWER_LIMIT=0) of 19 and 78 MB
// at GOGC=10, in both protocol generations: the peak RSS grew by 4.6 to
// 4.8 times the answer over HTTP, and by 1.7 times over stdio, where the
// result is held once while the client reads it (docs/bounds.md).
const httpCopies = 5

// heldBytes is what an answer of size bytes for req counts as held: over
// HTTP its size times httpCopies, over stdio its size.
func heldBytes(req mcp.Request, size int64) int64 {
	if overHTTP(req) {
		return size * httpCopies
	}
	return size
}

// onceUnder returns a func that runs undo once, under l.mu, and wakes the
// reads waiting.
func (l *Limiter) onceUnder(undo func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			undo()
			l.wake()
			l.mu.Unlock()
		})
	}
}

// rpcCodeBusy is the JSON-RPC code of a refusal by one of the bounds: an
// implementation-defined server error that trying again later may cure
// (internal/httpserver refuses past its caps with the same code).
const rpcCodeBusy = -32000

func errBusyReads(reads, waiting int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: rpcCodeBusy, Message: fmt.Sprintf("Server busy: %d reads are running, the most it runs at once (MEMORY_MAX_READS), and %d are waiting; try again in a moment", reads, waiting)}
}

func errBusyAnswers(bytes int64) *jsonrpc.Error {
	return &jsonrpc.Error{Code: rpcCodeBusy, Message: fmt.Sprintf("Server busy: the answers it holds for its clients fill its bound of %d MB (MEMORY_MAX_ANSWER_MB); read the answers you asked for, or ask for less (leave MEMORY_ANSWER_LIMIT on, or use outline, search_nodes, open_nodes), then try again", bytes>>20)}
}

// ErrTooManyCalls is the refusal of a call past the calls in progress
// that one connection or token may have: what is the connection's or the
// token's, write or read, and the bound.
func ErrTooManyCalls(who string, write bool, calls int) *jsonrpc.Error {
	kind := "reads"
	if write {
		kind = "writes"
	}
	return &jsonrpc.Error{Code: rpcCodeBusy, Message: fmt.Sprintf("Too many calls: %s has %d %s in progress, the most it may have (MEMORY_MAX_CALLS); wait for their answers before sending more", who, calls, kind)}
}
