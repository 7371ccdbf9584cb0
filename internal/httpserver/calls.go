package httpserver

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// callLimits caps the tool calls in progress of each token
// (Config.MaxCallsPerToken, MEMORY_MAX_CALLS), reads and writes counted
// apart so that reads never keep a write out. A call is in progress from
// when its POST arrives until its answer is written; a client that sends
// calls faster than it reads their answers cannot make the server hold
// more. The reads running and the answers held in the whole process are
// bounded by internal/server (bounds.go).
type callLimits struct {
	perToken int

	mu    sync.Mutex
	count map[callKey]int
}

type callKey struct {
	token string // tokenKey: "" for every client without a token
	write bool
}

func newCallLimits(perToken int) *callLimits {
	return &callLimits{perToken: perToken, count: map[callKey]int{}}
}

// start counts the reads and writes of a request of token key as in
// progress, returning the func that ends them, or the refusal of the first
// kind past the cap.
func (l *callLimits) start(key string, reads, writes int) (done func(), refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, w := callKey{key, false}, callKey{key, true}
	switch {
	case writes > 0 && l.count[w]+writes > l.perToken:
		return nil, server.ErrTooManyCalls("this token", true, l.perToken).Message
	case reads > 0 && l.count[r]+reads > l.perToken:
		return nil, server.ErrTooManyCalls("this token", false, l.perToken).Message
	}
	l.add(r, reads)
	l.add(w, writes)
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.add(r, -reads)
			l.add(w, -writes)
		})
	}, ""
}

func (l *callLimits) add(k callKey, n int) {
	if l.count[k] += n; l.count[k] <= 0 {
		delete(l.count, k)
	}
}

// startCalls counts a request as one the server is running (for
// shutdown) and its calls as in progress (callLimits), returning the
// writer to answer it with and the func that ends both; past the cap it
// answers the request with 429 and a JSON-RPC error, and returns a nil
// func.
func (rt *generationRouter) startCalls(w http.ResponseWriter, r *http.Request, msgs peeked) (_ http.ResponseWriter, done func()) {
	rt.calls.Add(1)
	ended := func() { rt.calls.Add(-1) }
	reads, writes := 0, 0
	for _, tool := range msgs.calls {
		if rt.isWrite(tool) {
			writes++
		} else {
			reads++
		}
	}
	if rt.callCaps == nil || reads+writes == 0 {
		return w, ended
	}
	inProgress, refusal := rt.callCaps.start(tokenKey(r), reads, writes)
	if inProgress == nil {
		ended()
		w.Header().Set("Retry-After", "1")
		writeRPCStatus(w, http.StatusTooManyRequests, msgs.firstID, rpcCodeUnavailable, refusal)
		return w, nil
	}
	// The answers of its reads stay counted as held until it is written.
	var closeScope func()
	if reads > 0 && rt.limiter != nil {
		scope := rt.limiter.OpenScope()
		r.Header.Set(server.ScopeHeader, scope)
		if msgs.messages == 1 {
			bw := &busyWriter{ResponseWriter: w, id: msgs.firstID, refusal: func() *jsonrpc.Error { return rt.limiter.Refusal(scope) }}
			w, closeScope = bw, bw.end
		}
		closeScope = then(closeScope, func() { rt.limiter.CloseScope(scope) })
	}
	return w, func() {
		if closeScope != nil {
			closeScope()
		}
		inProgress()
		ended()
	}
}

// then returns a func that runs first, if not nil, then next.
func then(first, next func()) func() {
	if first == nil {
		return next
	}
	return func() { first(); next() }
}

// busyWriter answers a POST of one read whose call the server's bounds
// refused (the reads running, the answers held: Limiter.Refusal) with 503,
// Retry-After and the refusal as a JSON-RPC error, instead of the go-sdk's
// 200. It decides at the go-sdk's first write of the answer, when the call
// has been refused or not. A 2025-11-25 session's stream opens with a
// priming event before the call runs: busyWriter holds it back until the
// answer, so that the status can still change. Once the go-sdk has written
// anything else, the status is 200 whatever follows.
type busyWriter struct {
	http.ResponseWriter
	id      string // the request's id, as JSON
	refusal func() *jsonrpc.Error

	decided, refused bool
	held             []byte // the priming event, held back
}

// decide answers with the refusal, if there is one, the first time it is
// called, and reports whether it did.
func (b *busyWriter) decide() (refused bool) {
	if b.decided {
		return b.refused
	}
	b.decided = true
	if e := b.refusal(); e != nil {
		b.refused = true
		b.Header().Set("Retry-After", "1")
		writeRPCStatus(b.ResponseWriter, http.StatusServiceUnavailable, b.id, e.Code, e.Message)
		return true
	}
	if b.held != nil {
		_, _ = b.ResponseWriter.Write(b.held)
		b.held = nil
	}
	return false
}

func (b *busyWriter) WriteHeader(status int) {
	if status != http.StatusOK {
		b.decided = true
	}
	if !b.decide() {
		b.ResponseWriter.WriteHeader(status)
	}
}

func (b *busyWriter) Write(p []byte) (int, error) {
	if !b.decided && b.held == nil && bytes.HasPrefix(p, []byte("event: prime\n")) {
		b.held = append([]byte(nil), p...)
		return len(p), nil
	}
	if b.decide() {
		return len(p), nil // the go-sdk's answer, replaced by the refusal
	}
	return b.ResponseWriter.Write(p)
}

func (b *busyWriter) Flush() {
	if b.decided && !b.refused {
		_ = http.NewResponseController(b.ResponseWriter).Flush()
	}
}

func (b *busyWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// end writes what is still held back when the request ends.
func (b *busyWriter) end() {
	if b.held != nil && !b.decided {
		b.decided = true
		_, _ = b.ResponseWriter.Write(b.held)
	}
}
