package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// serverProcess is one started server command with an MCP client session
// on its stdio.
type serverProcess struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *serverproc.TailBuffer
}

// startServer runs command with sh -c, MEMORY_FILE_PATH set to
// memoryFile and env added, and connects the go-sdk client to it over its stdio. The
// command leads its own process group so that close can end whatever sh
// started (npx and the node it spawns).
func startServer(ctx context.Context, command, memoryFile, protocol string, env []string) (*serverProcess, error) {
	cmd := exec.Command("sh", "-c", command)
	// The last value of a repeated key wins, so this overrides the caller's.
	cmd.Env = append(append(os.Environ(), "MEMORY_FILE_PATH="+memoryFile), env...)
	serverproc.NewProcessGroup(cmd)
	p := &serverProcess{cmd: cmd, stderr: serverproc.NewTailBuffer(16 << 10)}
	cmd.Stderr = p.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "memory-eval", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		serverproc.SignalGroup(cmd, serverproc.Kill)
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
	serverproc.SignalGroup(p.cmd, serverproc.Kill)
}

func (p *serverProcess) stderrNote() string {
	tail := strings.TrimSpace(p.stderr.String())
	if tail == "" {
		return ""
	}
	return "\nserver stderr (tail):\n  " + strings.ReplaceAll(tail, "\n", "\n  ")
}
