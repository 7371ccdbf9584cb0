//go:build !windows

package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// waitLog waits until the server's stderr matches re and returns the match.
func waitLog(t *testing.T, stderr *testlog.Buffer, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no %q in the server's log:\n%s", re, stderr)
	return nil
}

// child is the binary started by a test, which the test's end kills.
type child struct {
	cmd    *exec.Cmd
	stderr *testlog.Buffer // shown when the test fails
	exited chan error      // how it exited; stop puts the value back
}

// startChild starts cmd, its stderr collected.
func startChild(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, stderr: testlog.OnFailure(t, cmd.Args[0]+" "+cmd.Args[1]+" stderr"), exited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// stop sends sig and fails the test unless the child exits with status 0
// within 20 seconds.
func (c *child) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	c.cmd.Process.Signal(sig)
	select {
	case err := <-c.exited:
		c.exited <- err
		if err != nil {
			t.Errorf("after %v: %v", sig, err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop after %v", c.cmd.Args[0], sig)
	}
}

// TestNamedMemoriesBinary runs the real binary with --tokens and
// --memories: grants, a read token's refused write, two memories kept
// apart, and SIGHUP revoking a token (and a broken file changing nothing).
func TestNamedMemoriesBinary(t *testing.T) {
	const (
		writer = "writer-0123456789abcdef01234567"
		reader = "reader-0123456789abcdef01234567"
	)
	dir := t.TempDir()
	mem, tokens := filepath.Join(dir, "mem"), filepath.Join(dir, "tokens")
	grants := writer + " alpha,beta write\n" + reader + " * read\n"
	if err := os.WriteFile(tokens, []byte(grants), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens, "--memories", mem)
	cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=")
	server := startChild(t, cmd)
	stderr := server.stderr
	base := "http://" + waitLog(t, stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME .*page at http://127\.0\.0\.1:\d+/page/NAME/`))[1]

	ctx := context.Background()
	session := func(memory, version, token string) *mcp.ClientSession {
		t.Helper()
		transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp/" + memory, HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "named", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%s at %s with %s: %v", memory, version, token[:6], err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	status := func(memory, token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp/"+memory, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	create := func(cs *mcp.ClientSession, name string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
			"entities": []any{map[string]any{"name": name, "entityType": "test", "observations": []string{}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	graphOf := func(cs *mcp.ClientSession) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("read_graph: %v %v", err, res)
		}
		return toolText(res)
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		if res := create(session("alpha", version, writer), "in-alpha-"+version); res.IsError {
			t.Fatalf("%s: the writer's write: %s", version, toolText(res))
		}
		r := session("alpha", version, reader)
		if g := graphOf(r); !strings.Contains(g, "in-alpha-"+version) {
			t.Errorf("%s: the reader does not see the write: %s", version, g)
		}
		if res := create(r, "by-reader-"+version); !res.IsError || toolText(res) != "this token may only read memory alpha" {
			t.Errorf("%s: the reader's write: %v %q", version, res.IsError, toolText(res))
		}
		if g := graphOf(session("beta", version, reader)); strings.Contains(g, "in-alpha") {
			t.Errorf("%s: beta holds alpha's entity: %s", version, g)
		}
	}
	// Memory alpha's page: a first visit with ?token= sets the cookie and
	// drops the token from the address; the page searches, a write grant
	// edits, and the page and alpha's MCP clients hear each other.
	code, _, header := pageCall(t, "GET", base+"/page/alpha/?token="+writer, "")
	cookie := (&http.Response{Header: header}).Cookies()
	if code != http.StatusSeeOther || !strings.HasPrefix(header.Get("Location"), "/page/alpha/#key=") || len(cookie) != 1 || strings.Contains(cookie[0].Value, writer) {
		t.Fatalf("the first visit to alpha's page: %d to %q, cookies %v", code, header.Get("Location"), cookie)
	}
	writerCookie := cookie[0].Name + "=" + cookie[0].Value
	_, key, _ := strings.Cut(header.Get("Location"), "#key=")
	if code, answer, _ := pageCall(t, "GET", base+"/page/alpha/api/search?q=in-alpha", "", "Cookie", writerCookie, "X-Memory-Page-Key", key); code != http.StatusOK || answer["total"] != 2.0 {
		t.Errorf("searching alpha's page: %d %v", code, answer)
	}
	pageAndMCPHearEachOther(t, base+"/page/alpha", base+"/mcp/alpha", writer, "heard-on-alpha")
	if code, answer, _ := pageCall(t, "POST", base+"/page/alpha/api/edit", `{"op":"createEntity","entity":"by-reader-page","entityType":"t"}`, "Authorization", "Bearer "+reader); code != http.StatusForbidden || answer["error"] != "this token may only read memory alpha" {
		t.Errorf("the reader's edit on alpha's page: %d %v", code, answer)
	}
	if code, _, _ := pageCall(t, "GET", base+"/page/gamma/?token="+writer, ""); code != http.StatusForbidden {
		t.Errorf("the writer on gamma's page: %d, want 403", code)
	}

	if got := status("gamma", writer); got != http.StatusForbidden {
		t.Errorf("the writer on gamma: %d, want 403", got)
	}
	if got := status("..", reader); got != http.StatusForbidden {
		t.Errorf("the reader on ..: %d, want 403", got)
	}

	// A broken tokens file: SIGHUP keeps the grants in force.
	if err := os.WriteFile(tokens, []byte("not a grant\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, stderr, regexp.MustCompile(`SIGHUP: tokens file .*line 1: .*the grants in force stay as they were`))
	if got := status("alpha", writer); got != http.StatusOK {
		t.Errorf("after a broken reload, the writer: %d, want 200", got)
	}
	// An empty file (an editor's save caught half-way, a failed redirect)
	// is a mistake too: it revokes nothing. A file others may read is
	// used with a warning.
	if err := os.WriteFile(tokens, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokens, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, stderr, regexp.MustCompile(`warning: tokens file .* has mode 0644: users other than the server's may read`))
	waitLog(t, stderr, regexp.MustCompile(`SIGHUP: tokens file .* grants no token \(to revoke every token, stop the server\); the grants in force stay as they were`))
	if got := status("alpha", writer); got != http.StatusOK {
		t.Errorf("after an empty tokens file, the writer: %d, want 200", got)
	}
	if err := os.Chmod(tokens, 0o600); err != nil {
		t.Fatal(err)
	}
	// The writer revoked.
	if err := os.WriteFile(tokens, []byte(reader+" * read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, stderr, regexp.MustCompile(`SIGHUP: tokens file .* read again: 1 tokens`))
	if got := status("alpha", writer); got != http.StatusForbidden {
		t.Errorf("a revoked token: %d, want 403", got)
	}
	if got := status("alpha", reader); got != http.StatusOK {
		t.Errorf("the reader after the reload: %d, want 200", got)
	}
	if code, _, _ := pageCall(t, "GET", base+"/page/alpha/api/stats", "", "Cookie", writerCookie); code != http.StatusForbidden {
		t.Errorf("the revoked writer's page cookie: %d, want 403", code)
	}

	entries, _ := os.ReadDir(mem)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if strings.Join(files, " ") != "alpha.jsonl alpha.jsonl.history" {
		t.Errorf("memory files %v, want only alpha.jsonl and its history", files)
	}
	data, _ := os.ReadFile(filepath.Join(mem, "alpha.jsonl"))
	if !bytes.Contains(data, []byte("edited on the page")) || bytes.Contains(data, []byte("by-reader")) {
		t.Errorf("alpha holds no page edit, or a reader's refused write:\n%s", data)
	}

	server.stop(t, syscall.SIGTERM)
	if strings.Contains(stderr.String(), writer) || strings.Contains(stderr.String(), reader) {
		t.Error("the log holds a token")
	}
}
