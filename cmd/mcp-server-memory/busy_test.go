//go:build !windows

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// TestBusyReadsHTTPStatus runs the binary with a 1 MB bound on the answers
// held and holds one big answer unread: a read refused by that bound is
// answered 503 with Retry-After and the JSON-RPC refusal, in both
// generations (the 2025-11-25 session's stream opens with a priming event,
// which is held back so that the status can still change).
func TestBusyReadsHTTPStatus(t *testing.T) {
	const token = "busy-token-0123456789abcdef"
	file := longObservations(t, 40, 20_000)
	cmd := serverCmd(file, "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=", "MEMORY_ANSWER_LIMIT=0", "MEMORY_MAX_ANSWER_MB=1", "MCP_SERVER_MEMORY_READ_WAIT=10ms")
	cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0")
	c := startChild(t, cmd)
	base := waitLog(t, c.stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:(\d+))/; memory file `))[1]

	// A session, opened before the bound is full.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	readGraph := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + meta + `,"name":"read_graph","arguments":{}}}`
	stateless := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_graph"}
	stallRead(t, strings.TrimPrefix(base, "http://"), token, readGraph, stateless)

	for _, c := range []struct {
		name, body string
		header     map[string]string
	}{
		{"2026-07-28", readGraph, stateless},
		{"2025-11-25", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": cs.ID()}},
	} {
		var resp *http.Response
		var data []byte
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, data = postRaw(t, base+"/mcp", token, c.body, c.header)
			if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond) // the stalled answer is not held yet
		}
		var msg struct {
			Error *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &msg)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || msg.Error == nil ||
			msg.Error.Code != -32000 || !strings.Contains(msg.Error.Message, "Server busy: the answers it holds for its clients fill its bound of 1 MB (MEMORY_MAX_ANSWER_MB)") {
			t.Errorf("%s: a read past the answers' bound: %d, Retry-After %q, %.300s", c.name, resp.StatusCode, resp.Header.Get("Retry-After"), data)
		}
	}
}

// stallRead sends body to /mcp on a connection that reads almost nothing
// of the answer, so that the server holds it until the connection closes
// at the end of the test.
func stallRead(t *testing.T, hostPort, token, body string, header map[string]string) {
	t.Helper()
	conn, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n", hostPort, token, len(body))
	for k, v := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("the stalled read: %q %v", status, err)
	}
}

// postRaw posts body with the bearer token and header, and returns the
// response and its body.
func postRaw(t *testing.T, url, token, body string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}
