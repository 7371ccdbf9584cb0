package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Server is the page served on a loopback address with a fresh secret, as
// `mcp-server-memory ui` runs it.
type Server struct {
	// URL is the page's address, secret included.
	URL string

	ln  net.Listener
	srv *http.Server
}

// Listen binds 127.0.0.1:port (0: a free port) and makes a random secret;
// the page shows store, named where (see NewHandler).
func Listen(store graph.Store, where string, port int, opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1:%d: %w", port, err)
	}
	b := make([]byte, 16)
	rand.Read(b)
	opts.Secret = hex.EncodeToString(b)
	h := NewHandler(store, where, opts)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(h.Close)
	return &Server{URL: fmt.Sprintf("http://%s/%s/", ln.Addr(), opts.Secret), ln: ln, srv: srv}, nil
}

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(shut); err != nil {
		s.srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// OpenBrowser asks the desktop to open url; it fails where there is none.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
