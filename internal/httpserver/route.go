package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kgmemory/mcp-server-memory/internal/protocol"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerSessionID       = "Mcp-Session-Id"
	// maxSessionIDLength bounds the Mcp-Session-Id a request may carry; the
	// go-sdk's ids are 26 characters.
	maxSessionIDLength = 128
)

// generationRouter serves both protocol generations at one URL. The go-sdk
// speaks 2026-07-28 only on a stateless handler and the 2025 generation's
// sessions (Mcp-Session-Id, the GET event stream) only on a stateful one, so
// each request goes to the handler of its generation:
//
//   - a request in a live 2025 session (it carries Mcp-Session-Id) stays in
//     that session: the session is pinned to the version it negotiated, and
//     a 2026-07-28 request in it is refused (-32600) with a message that
//     says so. Only live sessions are tracked; an unknown id (or one over
//     maxSessionIDLength) gets the go-sdk's 404 and leaves nothing behind;
//   - a request that declares 2026-07-28 or later (Mcp-Protocol-Version, or
//     for a client that sent no header, the body's _meta or server/discover)
//     is served statelessly: each request is its own short session, so the
//     generation pinning in internal/server sees one request per session;
//   - initialize opens a session; any other request without a session is
//     refused with 400, as the transport specification asks.
//
// It also reads POST bodies whole, under the size limit and a read
// deadline, before any handler sees them, and refuses what the go-sdk would
// answer wrongly: an id with a fraction (answered as another id) and
// server/discover without the protocol version in _meta (-32601 instead of
// -32602).
type generationRouter struct {
	sessions, stateless http.Handler
	maxBody             int64
	bodyTimeout         time.Duration
	writeTimeout        time.Duration
	// streams ends when the server shuts down: long-lived responses (the
	// GET event stream, subscriptions/listen) are bound to it so they end
	// instead of holding shutdown up.
	streams context.Context
	// activity records, per session, when it last had a request open.
	activity *sessionActivity
	// limits caps the sessions an initialize may open; nil: no cap.
	limits *sessionLimits
	// streamCaps caps the long-lived streams (streams.go); nil: no cap.
	streamCaps *streamLimits
	// callCaps caps the tool calls in progress of a token (calls.go), which
	// isWrite tells apart; nil: no cap.
	callCaps *callLimits
	isWrite  func(tool string) bool
	// limiter holds the answers of a request's reads until it has been
	// written (server.Limiter.OpenScope); nil: not held past the go-sdk.
	limiter *server.Limiter
	// live returns the protocol version of a live 2025 session, and
	// whether the session exists.
	live func(id string) (version string, ok bool)
	// For shutdown: requests in flight, and those of them that are not
	// long-lived streams.
	requests, calls atomic.Int64
}

func (rt *generationRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.requests.Add(1)
	defer rt.requests.Add(-1)
	w = newDeadlineWriter(w, rt.writeTimeout)
	// No client sets the scope: it is the transport's (startCalls).
	r.Header.Del(server.ScopeHeader)
	var msgs peeked
	if r.Method == http.MethodPost {
		var ok bool
		if msgs, ok = rt.readPost(w, r); !ok {
			return
		}
	}
	var done func()
	if r.Method == http.MethodGet || msgs.listen {
		r, done = rt.openStream(w, r, msgs)
	} else {
		w, done = rt.startCalls(w, r, msgs)
	}
	if done == nil {
		return // refused
	}
	defer done()
	id := r.Header.Get(headerSessionID)
	if rt.refused(w, id, msgs) {
		return
	}
	if id != "" {
		// Only a session that exists is tracked; the go-sdk answers the
		// others with 404.
		if version, live := rt.live(id); live {
			if msgs.sessionless {
				writeRPCError(w, msgs.firstID, protocol.ErrPinnedToHandshake(protocol.Session, version, msgs.method, msgs.version))
				return
			}
			defer rt.activity.open(id)()
		}
	}
	rt.dispatch(w, r, id, msgs)
}

// readPost reads a POST's body whole, under the size limit and the read
// deadline, and gives it back to r for the go-sdk; ok is false when it was
// refused.
func (rt *generationRouter) readPost(w http.ResponseWriter, r *http.Request) (msgs peeked, ok bool) {
	body, code := rt.readBody(w, r)
	if code != 0 {
		e := protocol.ErrBody(code, rt.maxBody)
		writeRPCStatus(w, code, "", e.Code, e.Message)
		return peeked{}, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	msgs = peek(body)
	if msgs.notJSON != nil {
		writeRPCError(w, "", protocol.ErrParse("body", msgs.notJSON))
		return peeked{}, false
	}
	noteRPC(r.Context(), msgs.method)
	return msgs, true
}

// openStream takes a place for a long-lived response within the stream
// caps, and binds it to the server's streams so that shutdown ends it. It
// returns the request to serve and the func that ends the stream, or a
// nil func when it refused the stream (503 or 429).
func (rt *generationRouter) openStream(w http.ResponseWriter, r *http.Request, msgs peeked) (*http.Request, func()) {
	release := func() {}
	if rt.streamCaps != nil {
		var status int
		var refusal string
		if release, status, refusal = rt.streamCaps.open(r); release == nil {
			w.Header().Set("Retry-After", "60")
			writeRPCStatus(w, status, msgs.firstID, rpcCodeUnavailable, refusal)
			return r, nil
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(rt.streams, cancel)
	return r.WithContext(ctx), func() {
		stop()
		cancel()
		release()
	}
}

// refused answers what the go-sdk would answer wrongly, before it sees the
// request, and reports whether it did: a session id too long to be one
// (404, as for an unknown one), an id with a fraction, server/discover
// without the protocol version.
func (rt *generationRouter) refused(w http.ResponseWriter, id string, msgs peeked) bool {
	switch {
	case len(id) > maxSessionIDLength:
		http.Error(w, "session not found", http.StatusNotFound)
	case msgs.badID != "":
		writeRPCError(w, msgs.badID, protocol.ErrBadID(msgs.badID))
	case id == "" && msgs.discoverWithoutMeta:
		writeRPCError(w, msgs.firstID, protocol.ErrDiscoverWithoutMeta())
	default:
		return false
	}
	return true
}

// dispatch hands the request to the go-sdk handler of its generation.
func (rt *generationRouter) dispatch(w http.ResponseWriter, r *http.Request, id string, msgs peeked) {
	switch {
	case isSessionless(r, msgs):
		rt.stateless.ServeHTTP(w, r)
	case r.Method == http.MethodPost && id == "" && !msgs.initialize:
		// The go-sdk would open a session for the stray request and refuse
		// it with a JSON-RPC error of code 0. The transport spec: 400.
		writeRPCError(w, "null", protocol.ErrNoSession())
	case r.Method == http.MethodPost && id == "" && msgs.initialize:
		rt.openSession(w, r, msgs)
	default:
		rt.sessions.ServeHTTP(w, r)
	}
}

// openSession serves an initialize that opens a 2025 session, within the
// session caps: past one it is refused with a JSON-RPC error saying which.
func (rt *generationRouter) openSession(w http.ResponseWriter, r *http.Request, msgs peeked) {
	if rt.limits == nil {
		rt.sessions.ServeHTTP(w, r)
		return
	}
	key := tokenKey(r)
	if status, refusal := rt.limits.reserve(key); status != 0 {
		w.Header().Set("Retry-After", "60")
		writeRPCStatus(w, status, msgs.firstID, rpcCodeUnavailable, refusal)
		return
	}
	rt.sessions.ServeHTTP(w, r)
	if id := w.Header().Get(headerSessionID); id != "" {
		rt.limits.opened(key, id)
		rt.activity.started(id, time.Now())
	} else {
		rt.limits.cancel(key)
	}
}

func isSessionless(r *http.Request, msgs peeked) bool {
	if r.Header.Get(headerSessionID) != "" {
		return false
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" {
		return protocol.Sessionless(v)
	}
	return msgs.sessionless
}

// writeRPCError answers a request with a JSON-RPC error and 400; id is
// the request's id as JSON.
func writeRPCError(w http.ResponseWriter, id string, e *jsonrpc.Error) {
	writeRPCStatus(w, http.StatusBadRequest, id, e.Code, e.Message)
}

// writeRPCStatus answers a request with a JSON-RPC error and HTTP status;
// id "" (a GET, which carries no message) is null.
func writeRPCStatus(w http.ResponseWriter, status int, id string, code int64, message string) {
	if id == "" {
		id = "null"
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", json.RawMessage(id), &jsonrpc.Error{Code: code, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// readBody reads the whole request body, or returns the status to refuse it
// with: 413 over the size limit, 408 when the client sends too slowly.
func (rt *generationRouter) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int) {
	if r.ContentLength > rt.maxBody {
		return nil, http.StatusRequestEntityTooLarge
	}
	// A deadline for the body only: the response that follows may be a
	// stream that lives for hours, so the server has no overall timeout.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(rt.bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rt.maxBody))
	_ = rc.SetReadDeadline(time.Time{})
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return body, 0
	case errors.As(err, &tooLarge):
		return nil, http.StatusRequestEntityTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, http.StatusRequestTimeout
	default:
		return nil, http.StatusBadRequest
	}
}

// deadlineWriter gives each write of a response its own deadline. A
// stream may stay open for hours as long as the client keeps reading it,
// but a client that stops reading cannot block the server: notifications go
// to all subscribers one after another, and one stuck connection would
// delay every write's response behind it.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	// Writes land in a buffer that the go-sdk flushes right after; the
	// deadline covers both.
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	return d.ResponseWriter.Write(p)
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// peeked is what routing and the access log need to know about a POST body.
type peeked struct {
	method      string // of the first message
	firstID     string // of the first message, as JSON ("null" when none)
	sessionless bool   // server/discover, or _meta declaring 2026-07-28 or later
	version     string // the sessionless version declared, if any
	listen      bool   // subscriptions/listen: a long-lived stream
	initialize  bool   // opens a 2025 session
	// discoverWithoutMeta: a server/discover without the protocol version.
	discoverWithoutMeta bool
	// badID is an id that is a number with a fraction or an exponent, which
	// the go-sdk would answer as another id.
	badID string
	// calls are the reads and writes of the memory the body asks for: the
	// tool of each tools/call, "" for each resources/read.
	calls []string
	// messages is how many messages the body holds.
	messages int
	// notJSON is why the body is not JSON at all, or nil.
	notJSON error
}

// peek looks at a JSON-RPC message or batch without judging it: a body
// that is JSON but not a JSON-RPC message is the go-sdk's to refuse; one
// that is not JSON at all has notJSON set.
func peek(body []byte) peeked {
	var batch []peekedMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		var one peekedMessage
		if json.Unmarshal(body, &one) != nil {
			return peeked{notJSON: syntaxError(body)}
		}
		batch = []peekedMessage{one}
	}
	p := peeked{firstID: "null", messages: len(batch)}
	if len(batch) == 0 {
		return p
	}
	p.method = batch[0].Method
	if len(batch[0].ID) > 0 {
		p.firstID = string(batch[0].ID)
	}
	for _, m := range batch {
		p.add(m)
	}
	return p
}

// peekedMessage is one message of a POST body as peek decodes it.
type peekedMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]any `json:"_meta"`
		Name string         `json:"name"`
	} `json:"params"`
}

// add notes what m says about the body.
func (p *peeked) add(m peekedMessage) {
	if protocol.BadID(m.ID) && p.badID == "" {
		p.badID = string(m.ID)
	}
	v, _ := protocol.MetaVersion(m.Params.Meta)
	if v != "" {
		p.version = v
	}
	p.discoverWithoutMeta = p.discoverWithoutMeta || protocol.DiscoverLacksMeta(m.Method, m.Params.Meta)
	p.sessionless = p.sessionless || m.Method == "server/discover" || v != ""
	p.listen = p.listen || m.Method == "subscriptions/listen"
	p.initialize = p.initialize || m.Method == "initialize"
	if len(m.ID) > 0 && string(m.ID) != "null" && (m.Method == "tools/call" || m.Method == "resources/read") {
		p.calls = append(p.calls, m.Params.Name)
	}
}

// sessionActivity tracks, per 2025 session, how many requests are open
// (the GET event stream counts for as long as it stays open) and when the
// last one ended, so that sessions whose clients vanished without a DELETE
// can be closed. The go-sdk's own SessionTimeout counts only POSTs and would
// close a quiet session whose client is listening on its event stream.
type sessionActivity struct {
	mu       sync.Mutex
	sessions map[string]*activity
}

type activity struct {
	open int
	last time.Time
	used bool // a request came after initialize
}

// open records a request of session id, returning the func that records
// its end.
func (a *sessionActivity) open(id string) (done func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		s = &activity{}
		a.sessions[id] = s
	}
	s.open++
	s.used = true
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		s.open--
		s.last = time.Now()
	}
}

// started records that session id was opened by an initialize at now.
func (a *sessionActivity) started(id string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[id] == nil {
		a.sessions[id] = &activity{last: now}
	}
}

// idle returns, among live, the sessions with nothing open for longer than
// timeout, or with no request at all within startTimeout after initialize,
// and forgets sessions no longer live. A session seen for the first time
// counts as started now.
func (a *sessionActivity) idle(live []string, timeout, startTimeout time.Duration, now time.Time) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	alive := make(map[string]bool, len(live))
	var idle []string
	for _, id := range live {
		alive[id] = true
		s := a.sessions[id]
		switch {
		case s == nil:
			a.sessions[id] = &activity{last: now}
		case s.open == 0 && now.Sub(s.last) > timeout,
			!s.used && now.Sub(s.last) > startTimeout:
			idle = append(idle, id)
		}
	}
	for id := range a.sessions {
		if !alive[id] {
			delete(a.sessions, id)
		}
	}
	return idle
}

// syntaxError is why body is not JSON, or nil when it is (JSON of another
// shape than a message's).
func syntaxError(body []byte) error {
	if json.Valid(body) {
		return nil
	}
	var v json.RawMessage
	return json.Unmarshal(body, &v)
}
