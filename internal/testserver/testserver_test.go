package testserver_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// echo answers every request with its Authorization header.
type echo struct{ serveErr error }

func (e *echo) Listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func (e *echo) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization"))
	})}
	go func() { <-ctx.Done(); hs.Close() }()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return e.serveErr
}

func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeAndBearerClient(t *testing.T) {
	addr, stop := testserver.Serve(t, &echo{})
	url := "http://" + addr + "/"
	if got := get(t, testserver.BearerClient("tok"), url); got != "Bearer tok" {
		t.Errorf("with a token the server sees Authorization %q, want %q", got, "Bearer tok")
	}
	if got := get(t, testserver.BearerClient(""), url); got != "" {
		t.Errorf("without a token the server sees Authorization %q, want none", got)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := stop(); err != nil {
		t.Errorf("stop again: %v", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("the server still answers after stop")
	}
}

// A Serve that fails fails the test that started it, when it ends.
func TestServeFailureFailsTheTest(t *testing.T) {
	failed := false
	t.Run("inner", func(t *testing.T) {
		inner := &fakeT{TB: t}
		testserver.Serve(inner, &echo{serveErr: errors.New("broken")})
		inner.runCleanups()
		failed = inner.failed
	})
	if !failed {
		t.Errorf("a Serve that returned an error did not fail the test")
	}
}

// fakeT records failures and cleanups instead of acting on them.
type fakeT struct {
	testing.TB
	failed   bool
	cleanups []func()
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Cleanup(c func())      { f.cleanups = append(f.cleanups, c) }
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
