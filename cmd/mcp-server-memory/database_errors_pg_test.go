//go:build !windows

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// dbProxy forwards TCP connections to a database until stop, after which
// its port is closed: the database, as the server sees it, has gone away.
type dbProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *dbProxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestHTTPDatabaseErrorsSayNotWhere: when the database goes away under
// --http, with one memory and with named memories, clients are told that
// the database failed, not its user, host and port; the server's log
// keeps them.
func TestHTTPDatabaseErrorsSayNotWhere(t *testing.T) {
	url, _ := databaseURL(t)
	u, err := neturl.Parse(url)
	if err != nil || u.Host == "" {
		t.Skipf("the test database's URL names no TCP host: %v", err)
	}
	const token = "dberr-token-0123456789abcdef0123"
	t.Run("one memory", func(t *testing.T) {
		proxy := startDBProxy(t, u.Host)
		cmd := exec.Command(binary, "--http", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+proxy.url(u), "MEMORY_HTTP_TOKEN="+token, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "unused.jsonl"))
		server := startChild(t, cmd)
		base := waitLog(t, server.stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory "default" in PostgreSQL database`))[1]
		databaseGone(t, proxy, server, base+"/mcp", base, token, u.User.Username())
	})
	t.Run("named memories", func(t *testing.T) {
		proxy := startDBProxy(t, u.Host)
		tokens := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(tokens, []byte(token+" * write\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens)
		cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+proxy.url(u), "MEMORY_HTTP_TOKEN=", "MEMORY_FILE_PATH=")
		server := startChild(t, cmd)
		base := "http://" + waitLog(t, server.stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
		name := "dberr-" + pgtest.MemoryName(t)
		databaseGone(t, proxy, server, base+"/mcp/"+name, base+"/page/"+name, token, u.User.Username())
	})
}

// url is the database URL u through the proxy.
func (p *dbProxy) url(u *neturl.URL) string {
	v := *u
	v.Host = p.ln.Addr().String()
	return v.String()
}

// databaseGone connects to the memory at mcpURL, closes the database's
// port, and checks what the MCP tools and the page at pageBase tell their
// clients then.
func databaseGone(t *testing.T, proxy *dbProxy, server *child, mcpURL, pageBase, token, user string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(proxy.ln.Addr().String())
	ctx := context.Background()
	transport := &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dberr", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("read_graph with the database up: %v %+v", err, res)
	}
	proxy.stop()

	var told []string
	for i := range 3 { // the first call may find the old connection broken, later ones fail to connect
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{
			"entities": []any{map[string]any{"name": fmt.Sprintf("dberr-%d", i), "entityType": "t", "observations": []string{}}}}})
		if err != nil || !res.IsError {
			t.Fatalf("create_entities with the database gone: %v %+v, want a tool error", err, res)
		}
		told = append(told, res.Content[0].(*mcp.TextContent).Text)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}); err == nil && res.IsError {
		told = append(told, res.Content[0].(*mcp.TextContent).Text)
	}
	status, answer, _ := pageCall(t, "POST", pageBase+"/api/edit", `{"op":"createEntity","entity":"dberr-page","entityType":"t"}`, "Authorization", "Bearer "+token)
	if status < 500 {
		t.Fatalf("a page edit with the database gone: %d %v", status, answer)
	}
	told = append(told, fmt.Sprint(answer["error"]))

	for _, msg := range told {
		for _, secret := range []string{":" + port, "user=", user + "@", "dial "} {
			if strings.Contains(msg, secret) {
				t.Errorf("a client was told %q, which shows %q", msg, secret)
			}
		}
	}
	if !strings.Contains(told[2], "the database failed") {
		t.Errorf("create_entities with the database gone: %q, want it to say the database failed", told[2])
	}
	if !strings.Contains(server.stderr.String(), ":"+port) {
		t.Errorf("the server's log lost where the database is:\n%s", server.stderr)
	}
}
