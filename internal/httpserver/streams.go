package httpserver

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
)

// streamLimits caps the long-lived responses open at once: 2025 GET event
// streams, 2026 subscriptions/listen streams and the page's /api/events
// (Config.MaxStreams, MaxStreamsPerToken). Each holds a connection and a
// goroutine for as long as its client keeps it, and none of them is a
// session, so the session caps do not bound them.
type streamLimits struct {
	max, perToken int

	mu    sync.Mutex
	count map[string]int // by credential key
	total int
}

func newStreamLimits(max, perToken int) *streamLimits {
	return &streamLimits{max: max, perToken: perToken, count: map[string]int{}}
}

// streamKey is what streams are counted by: the bearer token's key
// (tokenKey), or for a page without one a digest of its login cookie;
// "" for a request with neither, so clients without a credential (a
// server without a token) count as one.
func streamKey(r *http.Request) string {
	if key := tokenKey(r); key != "" {
		return key
	}
	if c, err := r.Cookie(pageCookie); err == nil {
		sum := sha256.Sum256([]byte("cookie\x00" + c.Value))
		return string(sum[:])
	}
	return ""
}

// open takes a place for a stream of r, returning the func that gives it
// back, or the HTTP status and the sentence that refuse it.
func (l *streamLimits) open(r *http.Request) (done func(), status int, refusal string) {
	key := streamKey(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.count[key] >= l.perToken:
		return nil, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: this token has %d event streams open, the most one token may have (--http-max-streams-per-token); close the streams you no longer listen to", l.perToken)
	case l.total >= l.max:
		return nil, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: this server has %d event streams open, the most it allows (--http-max-streams); try again later", l.max)
	}
	l.count[key]++
	l.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.count[key]--; l.count[key] <= 0 {
				delete(l.count, key)
			}
		})
	}, 0, ""
}
