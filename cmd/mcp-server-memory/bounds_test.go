//go:build !windows

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawInitialize sends a 2025 initialize to memory at base with token and
// returns the status and the JSON-RPC error's code and message, if any.
func rawInitialize(t *testing.T, base, memory, token string) (int, int64, string) {
	t.Helper()
	return rawPost(t, base+"/mcp/"+memory, token, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
}

// rawPost posts one JSON-RPC message and returns the status and the
// JSON-RPC error's code and message, if any.
func rawPost(t *testing.T, url, token, body string, header map[string]string) (int, int64, string) {
	t.Helper()
	resp, data := postRaw(t, url, token, body, header)
	var msg struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &msg) == nil && msg.Error != nil {
		return resp.StatusCode, msg.Error.Code, msg.Error.Message
	}
	return resp.StatusCode, 0, ""
}

// TestNamedBoundsBinary runs the binary with small limits: an idle memory
// is closed and opens again with its data; reads of names nobody wrote
// create no file; past --max-open-memories, with every memory in use, a
// request is refused (503); past --http-max-sessions-per-token 429, past
// --http-max-sessions 503, each with a JSON-RPC error naming the flag; a
// session silent after its initialize is closed, freeing its place.
func TestNamedBoundsBinary(t *testing.T) {
	const other = "bounds-other-0123456789abcdef0"
	dir := t.TempDir()
	mem, tokens := filepath.Join(dir, "mem"), filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(boundsWriter+" alpha write\n"+boundsReader+" * read\n"+other+" * read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens, "--memories", mem,
		"--max-open-memories", "2", "--http-max-sessions-per-token", "2", "--http-max-sessions", "3")
	cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=",
		"MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT=200ms", "MCP_SERVER_MEMORY_SESSION_START_TIMEOUT=300ms")
	stderr := startChild(t, cmd).stderr
	base := "http://" + waitLog(t, stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]

	// Idle: alpha closes, and opens again with what it holds.
	if text, isErr := callTool(t, mcpSession(t, base, "alpha", "2026-07-28", boundsWriter), "create_entities", entityArgs("kept")); isErr {
		t.Fatal(text)
	}
	waitLog(t, stderr, regexp.MustCompile(`memory alpha closed: unused for 200ms`))
	if text, _ := callTool(t, mcpSession(t, base, "alpha", "2026-07-28", boundsReader), "read_graph", map[string]any{}); !strings.Contains(text, `"kept"`) {
		t.Errorf("alpha opened again without its entity: %s", text)
	}

	// Reads of names nobody wrote: empty, and no file.
	for i := range 30 {
		cs := mcpSession(t, base, fmt.Sprintf("new-%d", i), []string{"2025-11-25", "2026-07-28"}[i%2], other)
		if text, isErr := callTool(t, cs, "read_graph", map[string]any{}); isErr || strings.Contains(text, `"name"`) {
			t.Fatalf("new-%d: %v %s", i, isErr, text)
		}
		cs.Close()
	}
	// alpha's file and its history, nothing for the names only read.
	if entries, _ := os.ReadDir(mem); len(entries) != 2 || entries[0].Name() != "alpha.jsonl" || entries[1].Name() != "alpha.jsonl.history" {
		t.Errorf("memory files %v, want alpha.jsonl and its history only", entries)
	}

	// Two memories in use (a session each): a third is refused. (The
	// memory of a session just ended is closed by the next sweep, a moment
	// later: until then it may hold a place.)
	inUse := func(memory string) *mcp.ClientSession {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			// Any answer but 503: the memory opened.
			code, _, _ := rawPost(t, base+"/mcp/"+memory, boundsReader, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil)
			if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
				return mcpSession(t, base, memory, "2025-11-25", boundsReader)
			}
		}
	}
	m1 := inUse("m1")
	inUse("m2")
	if code, rpc, msg := rawPost(t, base+"/mcp/m3", other, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28"}); code != http.StatusServiceUnavailable || rpc != -32000 || !strings.Contains(msg, "--max-open-memories") {
		t.Errorf("a third memory past --max-open-memories 2: %d %d %q, want 503", code, rpc, msg)
	}
	// The reader holds its two sessions: a third is refused.
	if code, rpc, msg := rawInitialize(t, base, "m1", boundsReader); code != http.StatusTooManyRequests || rpc != -32000 || !strings.Contains(msg, "--http-max-sessions-per-token") {
		t.Errorf("a token's third session: %d %d %q, want 429", code, rpc, msg)
	}
	// The server's third session is the other token's; a fourth is refused.
	mcpSession(t, base, "m1", "2025-11-25", other).Close()
	if code, _, _ := rawInitialize(t, base, "m1", other); code != http.StatusOK {
		t.Fatalf("the server's third session: %d", code)
	}
	code, rpc, msg := rawInitialize(t, base, "m2", other)
	if code != http.StatusServiceUnavailable || rpc != -32000 || !strings.Contains(msg, "--http-max-sessions") {
		t.Errorf("the server's fourth session: %d %d %q, want 503", code, rpc, msg)
	}
	// That third session said nothing after its initialize: it is closed,
	// and its place is free again.
	deadline := time.Now().Add(20 * time.Second)
	for code != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		code, _, _ = rawInitialize(t, base, "m2", other)
	}
	if code != http.StatusOK {
		t.Errorf("a session silent after initialize kept its place: %d", code)
	}
	if err := m1.Ping(context.Background(), nil); err != nil {
		t.Errorf("a session in use was closed: %v", err)
	}
}

// TestStreamCapBinary: --http-max-streams-per-token bounds the event
// streams one token holds, the page's and MCP's together: past it a stream
// is refused with 429 and a message naming the flag, while calls go on.
func TestStreamCapBinary(t *testing.T) {
	const token = "streams-token-0123456789abcdef"
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--http-max-streams-per-token", "1")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"), "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")
	stderr := startChild(t, cmd).stderr
	base := waitLog(t, stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	openPageEvents(ctx, t, base, token)
	listen := `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["memory://knowledge-graph"]}}}`
	code, rpc, msg := rawPost(t, base+"/mcp", token, listen, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	if code != http.StatusTooManyRequests || rpc != -32000 || !strings.Contains(msg, "--http-max-streams-per-token") {
		t.Errorf("a second stream past --http-max-streams-per-token 1: %d %d %q, want 429", code, rpc, msg)
	}
	if code, _, msg := rawPost(t, base+"/mcp", token, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}); code != http.StatusOK {
		t.Errorf("a call beside the streams: %d %q", code, msg)
	}
}
