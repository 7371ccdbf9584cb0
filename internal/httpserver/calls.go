package httpserver

import (
	"net/http"
	"sync"

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
// shutdown) and its calls as in progress (callLimits), returning the func
// that ends both; past the cap it answers the request with 429 and a
// JSON-RPC error, and returns nil.
func (rt *generationRouter) startCalls(w http.ResponseWriter, r *http.Request, msgs peeked) (done func()) {
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
		return ended
	}
	inProgress, refusal := rt.callCaps.start(tokenKey(r), reads, writes)
	if inProgress == nil {
		ended()
		w.Header().Set("Retry-After", "1")
		writeRPCStatus(w, http.StatusTooManyRequests, msgs.firstID, rpcCodeUnavailable, refusal)
		return nil
	}
	return func() {
		inProgress()
		ended()
	}
}
