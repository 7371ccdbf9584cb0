package httpserver

import (
	"context"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"
)

type logEntryKey struct{}

// logEntry is what inner handlers add to a request's access log line.
type logEntry struct {
	rpc string // JSON-RPC method of a POST
}

// noteRPC records the JSON-RPC method for the access log line.
func noteRPC(ctx context.Context, method string) {
	if e, ok := ctx.Value(logEntryKey{}).(*logEntry); ok {
		e.rpc = method
	}
}

// statusRecorder remembers the status a handler sent. It unwraps for
// http.ResponseController, which the go-sdk uses to flush event streams.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// accessLog writes one line per request when it ends: client address,
// method, path, status, duration and the JSON-RPC method. Headers, and so
// the token, are never logged; nor is the query string.
//
// It also turns a panic into a bare 500: the panic and its stack go to the
// log, never to the client.
func accessLog(logf func(string, ...any), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		entry := &logEntry{}
		rec := &statusRecorder{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), logEntryKey{}, entry))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logf("panic serving %s %s: %v\n%s", r.Method, r.URL.EscapedPath(), v, debug.Stack())
				if rec.status == 0 {
					http.Error(rec, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			rpc := ""
			if entry.rpc != "" {
				rpc = " rpc=" + strconv.Quote(entry.rpc)
			}
			// EscapedPath and Quote: request data cannot forge log lines.
			logf("http: %s %s %s %d %s%s", r.RemoteAddr, r.Method, r.URL.EscapedPath(), status, time.Since(start).Round(100*time.Microsecond), rpc)
		}()
		next.ServeHTTP(rec, r)
	})
}
