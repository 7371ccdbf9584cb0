package httpserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// shortLimits shortens the connection limits for one test.
func shortLimits(t *testing.T, d time.Duration) {
	saved := [...]time.Duration{readHeaderTimeout, bodyReadTimeout, writeTimeout, idleConnTimeout}
	readHeaderTimeout, bodyReadTimeout, writeTimeout, idleConnTimeout = d, d, d, d
	t.Cleanup(func() {
		readHeaderTimeout, bodyReadTimeout, writeTimeout, idleConnTimeout = saved[0], saved[1], saved[2], saved[3]
	})
}

// serveForLimits serves a fresh memory file on a loopback port and returns
// the address.
func serveForLimits(t *testing.T, token string) string {
	t.Helper()
	quiet := func(string, ...any) {}
	store := filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{Logf: quiet})
	grants, err := SingleGrants(token)
	if err != nil {
		t.Fatal(err)
	}
	mem := Memory{Server: server.New(store, server.Options{Version: "test", Logf: quiet})}
	hs, err := New(Config{Addr: "127.0.0.1:0", Grants: grants, Memories: One(mem), Logf: quiet})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := testserver.Serve(t, hs)
	return addr
}

// Whatever a client sends, or fails to send, the server answers what can be
// answered and closes the connection within its documented limits: a
// client that stalls must not hold a connection (and its memory) forever.
func TestEveryConnectionEndsWithinTheLimits(t *testing.T) {
	const limit = 300 * time.Millisecond
	shortLimits(t, limit)
	const token = "0123456789abcdef0123456789abcdef"
	stalledBody := "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: 1000\r\n\r\n{\"jsonrpc\""
	for _, tc := range []struct {
		name, token, send string
		wantStatus        int // 0: the connection ends with no answer
	}{
		{"body never completes, no token needed", "", fmtReq(stalledBody, "/mcp", ""), http.StatusRequestTimeout},
		{"body never completes, right token", token, fmtReq(stalledBody, "/mcp", "Authorization: Bearer "+token+"\r\n"), http.StatusRequestTimeout},
		{"body never completes, no token sent", token, fmtReq(stalledBody, "/mcp", ""), http.StatusUnauthorized},
		{"body never completes, wrong Host", "", strings.Replace(fmtReq(stalledBody, "/mcp", ""), "Host: 127.0.0.1", "Host: evil.example", 1), http.StatusForbidden},
		{"body never completes, unknown path", "", fmtReq(stalledBody, "/elsewhere", ""), http.StatusNotFound},
		{"body too large, never sent", "", strings.Replace(fmtReq(stalledBody, "/mcp", ""), "Content-Length: 1000", "Content-Length: 999999999", 1), http.StatusRequestEntityTooLarge},
		{"chunked body never completes", "", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"jso", http.StatusRequestTimeout},
		{"100-continue, body never sent", "", strings.Replace(fmtReq(stalledBody, "/mcp", "Expect: 100-continue\r\n"), "{\"jsonrpc\"", "", 1), http.StatusContinue},
		{"headers never complete", "", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", 0},
		{"nothing sent", "", "", 0},
		{"a complete request, then silence", "", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serveForLimits(t, tc.token)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.send); err != nil {
				t.Fatal(err)
			}
			// Far past every limit: a connection still open then is
			// held forever.
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(conn)
			if tc.wantStatus != 0 {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.wantStatus {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
				}
				if resp.StatusCode == http.StatusContinue {
					// Then the body never comes: 408.
					if resp, err = http.ReadResponse(r, nil); err != nil || resp.StatusCode != http.StatusRequestTimeout {
						t.Fatalf("after 100 Continue: %v, %v; want 408", resp, err)
					}
					io.Copy(io.Discard, resp.Body)
				}
			}
			rest, err := io.ReadAll(r)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the connection was still open after 10 s (limits %v)", limit)
			}
			if len(rest) > 0 {
				t.Errorf("then %q", rest)
			}
		})
	}
}

func fmtReq(format, path, header string) string {
	return strings.Replace(strings.Replace(format, "%s", path, 1), "%s", header, 1)
}
