package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverProcess is one started server command with an MCP client session
// on its stdio.
type serverProcess struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *tailBuffer
}

// startServer runs command with sh -c and MEMORY_FILE_PATH set to
// memoryFile, and connects the go-sdk client to it over its stdio. The
// command leads its own process group so that close can end whatever sh
// started (npx and the node it spawns).
func startServer(ctx context.Context, command, memoryFile, protocol string) (*serverProcess, error) {
	cmd := exec.Command("sh", "-c", command)
	// The last value of a repeated key wins, so this overrides the caller's.
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+memoryFile)
	newProcessGroup(cmd)
	p := &serverProcess{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}}
	cmd.Stderr = p.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "memory-eval", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		signalProcessGroup(cmd, killSignal)
		return nil, fmt.Errorf("connecting to %q: %w%s", command, err, p.stderrNote())
	}
	p.session = session
	return p, nil
}

// search calls search_nodes with the query as its only argument, which every
// server of this family accepts. A tool error comes back as err.
func (p *serverProcess) search(ctx context.Context, query string) (*mcp.CallToolResult, error) {
	res, err := p.session.CallTool(ctx, &mcp.CallToolParams{
		Name:      "search_nodes",
		Arguments: map[string]any{"query": query},
	})
	if err != nil {
		return nil, fmt.Errorf("search_nodes: %w%s", err, p.stderrNote())
	}
	if res.IsError {
		return nil, fmt.Errorf("search_nodes: tool error: %s", strings.TrimSpace(answerText(res)))
	}
	return res, nil
}

// close ends the session as an MCP host does (close stdin, wait, then
// signals), then ends anything left in the process group.
func (p *serverProcess) close() {
	p.session.Close()
	signalProcessGroup(p.cmd, killSignal)
}

func (p *serverProcess) stderrNote() string {
	tail := strings.TrimSpace(p.stderr.String())
	if tail == "" {
		return ""
	}
	return "\nserver stderr (tail):\n  " + strings.ReplaceAll(tail, "\n", "\n  ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
