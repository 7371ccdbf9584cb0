package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// serverProcess is one started server command and the MCP client session
// connected to it over its stdin and stdout.
type serverProcess struct {
	cmd     *exec.Cmd
	session *mcp.ClientSession
	stderr  *serverproc.TailBuffer
	memory  *treeMemory
	arrival *arrivalReader
	started time.Time

	exited  chan struct{} // closed when the sh process has exited
	waitErr error         // valid after exited is closed
}

// clientOptions are the client-side settings shared by every connection.
type clientOptions struct {
	protocol string // protocol version sent in initialize
}

// startServer runs command with sh -c, its environment with env added
// (where the memory is: see memoryCopy), and connects an MCP client to it. The clock for start-up time starts just
// before the process does (see serverProcess.started).
func startServer(ctx context.Context, command string, env []string, opts clientOptions) (*serverProcess, error) {
	cmd := exec.Command("sh", "-c", command)
	// The last value of a repeated key wins, so this overrides the caller's.
	cmd.Env = append(os.Environ(), env...)
	if _, set := os.LookupEnv("MEMORY_ANSWER_LIMIT"); !set {
		// The workload checks whole answers against the reference's, which
		// has no limit; by default this server would answer big reads in
		// parts of 60 kB (faster, but not comparable). Set
		// MEMORY_ANSWER_LIMIT for the benchmark to measure a limit.
		cmd.Env = append(cmd.Env, "MEMORY_ANSWER_LIMIT=0")
	}
	serverproc.NewProcessGroup(cmd)

	// Own the pipes (rather than mcp.CommandTransport) so the client can use
	// IOTransport with no frame size cap: read_graph of a 100k-entity graph
	// is one JSON-RPC line of well over the SDK's default 16 MiB.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	p := &serverProcess{
		cmd:    cmd,
		stderr: serverproc.NewTailBuffer(16 << 10),
		exited: make(chan struct{}),
	}
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	cmd.Stderr = p.stderr

	p.started = time.Now()
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fmt.Errorf("starting %q: %w", command, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	p.memory = watchTreeMemory(cmd.Process.Pid, time.Second)

	p.arrival = &arrivalReader{f: stdoutR}
	client := mcp.NewClient(&mcp.Implementation{Name: "memory-bench", Version: "1"}, nil)
	transport := &mcp.IOTransport{Reader: p.arrival, Writer: stdinW, MaxLineLength: -1}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: opts.protocol})
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		p.stop()
		return nil, fmt.Errorf("connecting to %q: %w%s", command, err, p.stderrNote())
	}
	p.session = session
	return p, nil
}

// alive reports whether the started process is still running.
func (p *serverProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// call runs one tools/call and returns how long the client waited for the
// answer, and how long until the answer's last byte arrived (wire: the
// server's time plus the pipe, without the go-sdk client's decoding, which
// for a large answer is a good part of the total). A protocol error and a
// tool error (isError) both come back as err; res is the answer when the
// call succeeded.
func (p *serverProcess) call(ctx context.Context, timeout time.Duration, tool string, args map[string]any) (res *mcp.CallToolResult, t timing, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err = p.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	t.client = time.Since(start)
	t.wire = t.client
	if last := p.arrival.lastLineEnd(); last.After(start) {
		t.wire = last.Sub(start)
	}
	if err != nil {
		if !p.alive() {
			return nil, t, fmt.Errorf("server exited (%v) during %s: %w%s", p.waitErr, tool, err, p.stderrNote())
		}
		return nil, t, err
	}
	if res.IsError {
		return res, t, fmt.Errorf("tool error: %s", firstText(res))
	}
	return res, t, nil
}

// timing is one call's latency two ways; see serverProcess.call.
type timing struct{ client, wire time.Duration }

// arrivalReader notes when the server's stdout last delivered the end of a
// line (a JSON-RPC message). Calls are made one at a time, so the last line
// end seen before a call returns is the end of its answer.
type arrivalReader struct {
	f    *os.File
	mu   sync.Mutex
	last time.Time
}

func (a *arrivalReader) Read(b []byte) (int, error) {
	n, err := a.f.Read(b)
	if n > 0 && bytes.IndexByte(b[:n], '\n') >= 0 {
		now := time.Now()
		a.mu.Lock()
		a.last = now
		a.mu.Unlock()
	}
	return n, err
}

func (a *arrivalReader) Close() error { return a.f.Close() }

func (a *arrivalReader) lastLineEnd() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// close ends the session the way an MCP host does (close stdin, wait), then
// escalates to signals for the process group if the server lingers. It
// returns the peak memory of the process tree, sampled one last time while
// the server was still running.
func (p *serverProcess) close() memoryPeak {
	p.memory.sampleNow()
	peak := p.memory.stopWatching()
	if p.session != nil {
		p.session.Close()
	}
	p.stop()
	return peak
}

// stop waits briefly for the process to exit, then terminates the process
// group it leads (sh and anything it started, such as npx and node).
func (p *serverProcess) stop() {
	if p.memory != nil {
		p.memory.stopWatching()
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		serverproc.SignalGroup(p.cmd, serverproc.Terminate)
		select {
		case <-p.exited:
		case <-time.After(3 * time.Second):
			serverproc.SignalGroup(p.cmd, serverproc.Kill)
			<-p.exited
		}
	}
	// Children that outlived sh (an npx wrapper's node) go with the group.
	serverproc.SignalGroup(p.cmd, serverproc.Kill)
}

func (p *serverProcess) stderrNote() string {
	tail := strings.TrimSpace(p.stderr.String())
	if tail == "" {
		return ""
	}
	return "\nserver stderr (tail):\n" + indent(tail, "  ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// firstText is the first text content of a result, for error messages.
func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "(no text content)"
}

// preRun starts command once against an empty memory and completes the
// MCP handshake, so that one-time costs (npx downloading and installing the
// package, a cold page cache, creating the database schema) are paid before
// anything is timed.
func preRun(ctx context.Context, command string, backend memoryBackend, dir string, opts clientOptions) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp(dir, "pre-run-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	mem, err := backend.fresh(ctx, "", dir)
	if err != nil {
		return 0, err
	}
	defer mem.remove()
	start := time.Now()
	p, err := startServer(ctx, command, mem.env, opts)
	if err != nil {
		return 0, err
	}
	d := time.Since(start)
	p.close()
	return d, nil
}
