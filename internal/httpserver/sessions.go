package httpserver

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
)

// rpcCodeUnavailable is the JSON-RPC error code of a refusal by one of the
// server's limits (too many sessions, too many memories open): an
// implementation-defined server error, which trying again later may cure.
const rpcCodeUnavailable = -32000

// sessionLimits caps the 2025-generation sessions of the whole server and
// of each token (Config.MaxSessions, MaxSessionsPerToken). A session costs
// memory until its client ends it or it is closed idle, so without a cap
// one read token could open sessions until the server runs out of memory.
//
// An initialize reserves a place before the go-sdk opens the session; the
// place is the session's once its id is known (opened), or freed when none
// was opened (cancel). Sessions that ended (DELETE, closed idle) are
// forgotten by forgetEnded, which the idle sweep calls and a reservation
// calls when it finds a cap reached.
type sessionLimits struct {
	max, perToken int
	live          func() map[string]bool // the ids of the sessions open now

	mu      sync.Mutex
	owners  map[string]sessionOwner // by session id
	count   map[string]int          // sessions and reservations, by token key
	total   int
	nextSeq uint64
}

type sessionOwner struct {
	key string // the token's key (tokenKey)
	seq uint64 // when it was bound, against forgetting it before it was live
}

func newSessionLimits(max, perToken int, live func() map[string]bool) *sessionLimits {
	return &sessionLimits{max: max, perToken: perToken, live: live, owners: map[string]sessionOwner{}, count: map[string]int{}}
}

// tokenKey is what sessions are counted by: a digest of the request's
// bearer token (of its Authorization header as sent when that holds none;
// "" without one), so the map holds no token, and one token written two
// ways ("bearer", spaces) still counts once.
func tokenKey(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if h == "" {
		return ""
	}
	if token, ok := bearerToken(h); ok {
		h = token
	}
	sum := sha256.Sum256([]byte(h))
	return string(sum[:])
}

// reserve takes a place for a new session of token key, or returns the
// HTTP status and the sentence that refuse it.
func (l *sessionLimits) reserve(key string) (status int, refusal string) {
	for retried := false; ; retried = true {
		l.mu.Lock()
		switch {
		case l.count[key] < l.perToken && l.total < l.max:
			l.count[key]++
			l.total++
			l.mu.Unlock()
			return 0, ""
		case !retried:
			l.mu.Unlock()
			l.forgetEnded()
			continue
		case l.count[key] >= l.perToken:
			l.mu.Unlock()
			return http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: this token has %d sessions open, the most one token may have (--http-max-sessions-per-token); end the sessions you no longer use (HTTP DELETE with their Mcp-Session-Id), or wait until idle ones are closed", l.perToken)
		default:
			l.mu.Unlock()
			return http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: this server has %d sessions open, the most it allows (--http-max-sessions); try again later, or use protocol 2026-07-28, which needs no session", l.max)
		}
	}
}

// opened makes key's reservation the place of session id.
func (l *sessionLimits) opened(key, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.owners[id]; dup {
		l.freeLocked(key)
		return
	}
	l.nextSeq++
	l.owners[id] = sessionOwner{key: key, seq: l.nextSeq}
}

// cancel frees key's reservation: no session was opened.
func (l *sessionLimits) cancel(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.freeLocked(key)
}

func (l *sessionLimits) freeLocked(key string) {
	l.total--
	if l.count[key]--; l.count[key] <= 0 {
		delete(l.count, key)
	}
}

// forgetEnded frees the places of sessions that are no longer open.
func (l *sessionLimits) forgetEnded() {
	l.mu.Lock()
	seq := l.nextSeq
	l.mu.Unlock()
	live := l.live()
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, o := range l.owners {
		if o.seq <= seq && !live[id] {
			delete(l.owners, id)
			l.freeLocked(o.key)
		}
	}
}
