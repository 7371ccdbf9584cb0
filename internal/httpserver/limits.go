package httpserver

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
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
