// Package testserver holds what tests of the HTTP server share: serving an
// httpserver.Server in the test's process until the test ends, and an HTTP
// client that presents a bearer token, as MCP clients and scripts do.
//
// It imports nothing of this module (the server is an interface), so the
// httpserver package's own tests can use it too.
package testserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// Server is what Serve runs; *httpserver.Server is one.
type Server interface {
	Listen() (net.Listener, error)
	Serve(ctx context.Context, ln net.Listener) error
}

// Serve listens with srv and serves on its listener in the background. It
// returns the address served (host:port) and stop, which shuts the server
// down gracefully and returns what its Serve returned; later calls return
// the same. When t ends, stop is called and a failed Serve fails t.
func Serve(t testing.TB, srv Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	stop = func() error {
		once.Do(func() { cancel(); serveErr = <-served })
		return serveErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return ln.Addr().String(), stop
}

// BearerClient returns an HTTP client that sends token as a bearer token
// with every request, or no Authorization header when token is "".
func BearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer(token)}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}
