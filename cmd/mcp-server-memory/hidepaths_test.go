//go:build !windows

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// httpFailures makes every kind of request that fails on a broken memory
// file, through the MCP endpoint mcpURL and the page at pageBase, and
// returns what the client was told of each.
func httpFailures(t *testing.T, mcpURL, pageBase, token string) map[string]string {
	t.Helper()
	ctx := context.Background()
	told := map[string]string{}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		transport := &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: testserver.BearerClient(token), MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "paths", Version: "1"}, nil).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connecting at %s: %v", version, err)
		}
		for _, call := range []mcp.CallToolParams{
			{Name: "create_entities", Arguments: map[string]any{"entities": []any{map[string]any{"name": "A", "entityType": "t", "observations": []string{}}}}},
			{Name: "read_graph", Arguments: map[string]any{}},
		} {
			res, err := cs.CallTool(ctx, &call)
			if err != nil || !res.IsError {
				t.Fatalf("%s at %s on a broken memory: %v %+v, want a tool error", call.Name, version, err, res)
			}
			told[version+" "+call.Name] = res.Content[0].(*mcp.TextContent).Text
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://knowledge-graph"})
		if err == nil {
			t.Fatalf("resources/read at %s on a broken memory succeeded", version)
		}
		told[version+" resources/read"] = err.Error()
		cs.Close()
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/stats", ""},
		{"POST", "/api/edit", `{"op":"createEntity","entity":"A","entityType":"t"}`},
	} {
		status, answer, _ := pageCall(t, c.method, pageBase+c.path, c.body, "Authorization", "Bearer "+token)
		if status < 500 {
			t.Fatalf("page %s %s on a broken memory: %d %v, want a failure", c.method, c.path, status, answer)
		}
		told["page "+c.path] = fmt.Sprint(answer["error"])
	}
	return told
}

// checkNoDirectory fails if any answer names dir or a directory above it.
func checkNoDirectory(t *testing.T, told map[string]string, dir string) {
	t.Helper()
	for what, msg := range told {
		if strings.Contains(msg, dir) || strings.Contains(msg, filepath.Dir(dir)) {
			t.Errorf("%s told an HTTP client the server's directory: %q", what, msg)
		} else if msg == "" {
			t.Errorf("%s: an empty error", what)
		}
	}
}

// TestHTTPErrorsHideDirectories runs the binary as users do, over --http
// with one memory and with named memories, on a memory file whose write
// fails, and checks that no answer names the server's directories; over
// stdio the same failure keeps the whole path, for the person running it.
func TestHTTPErrorsHideDirectories(t *testing.T) {
	const token = "paths-token-0123456789abcdef0123"
	t.Run("one memory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "private-dir")
		file := filepath.Join(dir, "memory.jsonl")
		if err := os.MkdirAll(file, 0o700); err != nil { // the file is a directory
			t.Fatal(err)
		}
		cmd := exec.Command(binary, "--http", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file, "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")
		server := startChild(t, cmd)
		base := waitLog(t, server.stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]
		told := httpFailures(t, base+"/mcp", base, token)
		checkNoDirectory(t, told, dir)
		if !strings.Contains(server.stderr.String(), dir) {
			t.Errorf("the server's log lost the path:\n%s", server.stderr)
		}

		cs := connect(t, file, "2025-11-25", nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, dir) {
			t.Errorf("over stdio: %v %+v, want the whole path in the tool error", err, res)
		}
	})
	t.Run("named memories", func(t *testing.T) {
		root := t.TempDir()
		dir, tokens := filepath.Join(root, "private-memories"), filepath.Join(root, "tokens")
		if err := os.MkdirAll(filepath.Join(dir, "alpha.jsonl"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tokens, []byte(token+" alpha write\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens, "--memories", dir)
		cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=")
		server := startChild(t, cmd)
		base := "http://" + waitLog(t, server.stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
		told := httpFailures(t, base+"/mcp/alpha", base+"/page/alpha", token)
		checkNoDirectory(t, told, dir)
	})
}
