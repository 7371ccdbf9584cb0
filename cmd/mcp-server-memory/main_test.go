package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// binary is the server built once for the end-to-end tests, which drive it
// the way an MCP client does: as a child process over stdio.
var binary string

// TestMain either runs the tests, after building the server, or, when a
// testscript script runs "mcp-server-memory", is that command: the scripts
// run this test binary as the server, so their runs count toward coverage.
func TestMain(m *testing.M) {
	testscript.Main(buildFirst{m}, map[string]func(){"mcp-server-memory": main})
}

type buildFirst struct{ m *testing.M }

func (b buildFirst) Run() int {
	dir, err := os.MkdirTemp("", "mcp-server-memory-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "mcp-server-memory")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the server:", err)
		return 1
	}
	return runTests(b.m)
}

// runTests runs the tests; page_pg_test.go makes it pgtest.Main where
// pgtest builds, so the tests of a memory in PostgreSQL have a database.
var runTests = (*testing.M).Run

// serverCmd returns a command running the server on the memory file.
func serverCmd(memoryFile string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+memoryFile, "MCP_SERVER_MEMORY_WATCH_INTERVAL=100ms")
	cmd.Env = append(cmd.Env, extraEnv...)
	return cmd
}

// connect starts the server on memoryFile and opens a session of the given
// protocol version (2026-07-28 opens with server/discover; older versions
// with initialize).
func connect(t *testing.T, memoryFile, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	cmd := serverCmd(memoryFile)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
