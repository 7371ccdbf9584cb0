package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// serveInProcess runs serveHTTP with o in this process, as run does, its
// log in the returned buffer; stop ends it and returns its exit status.
func serveInProcess(t *testing.T, o options) (logs *testlog.Buffer, stop func() int) {
	t.Helper()
	logs = testlog.OnFailure(t, "server log")
	ctx, cancel := context.WithCancel(context.Background())
	status := make(chan int, 1)
	go func() { status <- serveHTTP(ctx, log.New(logs, "", 0), o) }()
	stopped := false
	var code int
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			code = <-status
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return logs, stop
}

// call sends method path to addr with the given Authorization (none when
// ""), an MCP initialize for a POST, and returns the status and body.
func call(t *testing.T, method, url, authorization string) (int, string) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeHTTPOneMemory serves one memory in process, with its token
// from the environment: /mcp and the page at / behind the one grant, and a
// clean stop when the context ends.
func TestServeHTTPOneMemory(t *testing.T) {
	const token = "one-memory-token-0123456789abcdef"
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	env := memoryconfig.Read(memoryconfig.Vars{"MEMORY_FILE_PATH": file, "MEMORY_HTTP_TOKEN": token})
	logs, stop := serveInProcess(t, options{addr: "127.0.0.1:0", env: env})
	m := waitLog(t, logs, regexp.MustCompile(`(?m)serving MCP Streamable HTTP at http://(\S+)/mcp \(bearer token required\), the memory's page at http://\S+/; memory file (\S+)$`))
	base := "http://" + m[1]
	if m[2] != file {
		t.Errorf("the log names the memory %q, want %q", m[2], file)
	}
	for _, tc := range []struct {
		method, path, authorization string
		status                      int
	}{
		{http.MethodPost, "/mcp", "", http.StatusUnauthorized},
		{http.MethodPost, "/mcp", "Bearer " + token, http.StatusOK},
		{http.MethodGet, "/", "", http.StatusUnauthorized},
		{http.MethodGet, "/", "Bearer " + token, http.StatusOK},
		{http.MethodGet, "/page/default/", "Bearer " + token, http.StatusNotFound}, // the page is at /
	} {
		if status, body := call(t, tc.method, base+tc.path, tc.authorization); status != tc.status {
			t.Errorf("%s %s (%q): %d %.100q, want %d", tc.method, tc.path, tc.authorization, status, body, tc.status)
		}
	}
	if status := stop(); status != 0 {
		t.Errorf("exit status %d after the context ended, want 0", status)
	}
	waitLog(t, logs, regexp.MustCompile(`(?m)^stopped$`))
}

// TestServeHTTPNamedMemories serves named memories in process: each
// memory at its address behind its grants, SIGHUP reading the tokens file
// again (a revoked token refused from then on), and a clean stop.
func TestServeHTTPNamedMemories(t *testing.T) {
	const (
		writer = "named-writer-0123456789abcdef"
		other  = "named-other-0123456789abcdef0"
	)
	dir := t.TempDir()
	tokens, memories := filepath.Join(dir, "tokens"), filepath.Join(dir, "memories")
	if err := os.Mkdir(memories, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte(writer+" alpha write\n"+other+" beta write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := memoryconfig.Read(memoryconfig.Vars{})
	logs, stop := serveInProcess(t, options{addr: "127.0.0.1:0", tokens: tokens, memories: memories, env: env})
	m := waitLog(t, logs, regexp.MustCompile(`serving named memories over MCP Streamable HTTP at http://(\S+)/mcp/NAME .*; 2 tokens from `))
	base := "http://" + m[1]
	for _, tc := range []struct {
		method, path, authorization string
		status                      int
	}{
		{http.MethodPost, "/mcp/alpha", "", http.StatusUnauthorized},
		{http.MethodPost, "/mcp/alpha", "Bearer " + other, http.StatusForbidden},
		{http.MethodPost, "/mcp/alpha", "Bearer " + writer, http.StatusOK},
		{http.MethodGet, "/page/alpha/", "Bearer " + writer, http.StatusOK},
		{http.MethodPost, "/mcp/beta", "Bearer " + other, http.StatusOK},
	} {
		if status, body := call(t, tc.method, base+tc.path, tc.authorization); status != tc.status {
			t.Errorf("%s %s: %d %.100q, want %d", tc.method, tc.path, status, body, tc.status)
		}
	}

	// Revoke the other token and tell the server, as an operator does.
	if err := os.WriteFile(tokens, []byte(writer+" alpha write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, regexp.MustCompile(`SIGHUP: tokens file \S+ read again: 1 tokens`))
	if status, body := call(t, http.MethodPost, base+"/mcp/beta", "Bearer "+other); status != http.StatusForbidden {
		t.Errorf("a revoked token: %d %.100q, want 403", status, body)
	}
	if status := stop(); status != 0 {
		t.Errorf("exit status %d after the context ended, want 0", status)
	}
	waitLog(t, logs, regexp.MustCompile(`(?m)^stopped$`))
}
