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
	session clientSession
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
	// ts, when set, is the TypeScript SDK client (--client ts) that
	// connects instead of the go-sdk's; askProtocol is the protocol it asks
	// for when --protocol says so ("": the SDK's default, ts.protocol).
	ts          *tsSDK
	askProtocol string
}

// describe is the client, its transport and protocol, for the report.
func (o clientOptions) describe() string {
	if o.ts != nil {
		return fmt.Sprintf("TypeScript SDK client @modelcontextprotocol/sdk %s, stdio, protocol %s", o.ts.version, o.protocol)
	}
	return "go-sdk client, stdio, protocol " + o.protocol
}

// clientSession is an MCP client connected to a server: the go-sdk's or
// the TypeScript SDK's. callTool returns how long the client waited for
// the answer.
type clientSession interface {
	callTool(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, time.Duration, error)
	close()
}

// goSession is the go-sdk client.
type goSession struct{ s *mcp.ClientSession }

func (g goSession) callTool(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, time.Duration, error) {
	start := time.Now()
	res, err := g.s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return res, time.Since(start), err
}

func (g goSession) close() { g.s.Close() }

// startServer runs command with sh -c, its environment with env added
// (where the memory is: see memoryCopy), and connects an MCP client to it.
// The clock for start-up time starts just before the process does (see
// serverProcess.started).
func startServer(ctx context.Context, command string, env []string, opts clientOptions) (*serverProcess, error) {
	cmd := serverCommand(command, env)
	// Own the pipes (rather than mcp.CommandTransport) so the client can use
	// IOTransport with no frame size cap: read_graph of a 100k-entity graph
	// is one JSON-RPC line of well over the SDK's default 16 MiB.
	pp, err := openPipes()
	if err != nil {
		return nil, err
	}
	p := &serverProcess{
		cmd:    cmd,
		stderr: serverproc.NewTailBuffer(16 << 10),
		exited: make(chan struct{}),
	}
	cmd.Stdin = pp.stdinR
	cmd.Stdout = pp.stdoutW
	cmd.Stderr = p.stderr

	// The TypeScript client runs before the server starts, as in a host;
	// it takes the server's stdin (stdinW) as its stdout.
	var ts *tsSession
	var tsStdin *os.File
	if opts.ts != nil {
		if ts, tsStdin, err = startTSClient(*opts.ts, opts.askProtocol, pp.stdinW); err != nil {
			pp.stdinR.Close()
			pp.stdoutR.Close()
			pp.stdoutW.Close()
			return nil, err
		}
	}
	if err := p.launch(pp); err != nil {
		if ts != nil {
			tsStdin.Close()
			ts.close()
		}
		return nil, fmt.Errorf("starting %q: %w", command, err)
	}
	if ts != nil {
		go feed(tsStdin, p.arrival)
		p.session = ts
		err = ts.connect(ctx)
		if err != nil {
			ts.close()
		}
	} else {
		err = p.connectGo(ctx, pp, opts.protocol)
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("connecting to %q: %w%s", command, err, p.stderrNote())
	}
	return p, nil
}

// serverCommand is the server's command line, not started yet, in a
// process group of its own.
func serverCommand(command string, env []string) *exec.Cmd {
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
	return cmd
}

// pipes are the server's stdin and stdout, both ends.
type pipes struct {
	stdinR, stdinW, stdoutR, stdoutW *os.File
}

func openPipes() (*pipes, error) {
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
	return &pipes{stdinR, stdinW, stdoutR, stdoutW}, nil
}

// launch starts the process, keeping only the client's ends of the pipes,
// and starts watching its exit and its memory.
func (p *serverProcess) launch(pp *pipes) error {
	p.started = time.Now()
	err := p.cmd.Start()
	pp.stdinR.Close()
	pp.stdoutW.Close()
	if err != nil {
		pp.stdinW.Close()
		pp.stdoutR.Close()
		return err
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	p.memory = watchTreeMemory(p.cmd.Process.Pid, time.Second)
	p.arrival = &arrivalReader{f: pp.stdoutR}
	return nil
}

// connectGo connects the go-sdk's client on the pipes.
func (p *serverProcess) connectGo(ctx context.Context, pp *pipes, protocol string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "memory-bench", Version: "1"}, nil)
	transport := &mcp.IOTransport{Reader: p.arrival, Writer: pp.stdinW, MaxLineLength: -1}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		pp.stdinW.Close()
		pp.stdoutR.Close()
		return err
	}
	p.session = goSession{session}
	return nil
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
	start, before := time.Now(), p.arrival.bytesRead()
	res, t.client, err = p.session.callTool(ctx, tool, args)
	t.bytes = p.arrival.bytesRead() - before
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

// timing is one call's latency two ways (see serverProcess.call), and
// the bytes the server wrote meanwhile: the answer, and any notification.
type timing struct {
	client, wire time.Duration
	bytes        int64
}

// arrivalReader notes when the server's stdout last delivered the end of a
// line (a JSON-RPC message). Calls are made one at a time, so the last line
// end seen before a call returns is the end of its answer.
type arrivalReader struct {
	f     *os.File
	mu    sync.Mutex
	last  time.Time
	total int64 // bytes read
}

func (a *arrivalReader) Read(b []byte) (int, error) {
	n, err := a.f.Read(b)
	if n > 0 && bytes.IndexByte(b[:n], '\n') >= 0 {
		now := time.Now()
		a.mu.Lock()
		a.last = now
		a.mu.Unlock()
	}
	a.mu.Lock()
	a.total += int64(n)
	a.mu.Unlock()
	return n, err
}

func (a *arrivalReader) bytesRead() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
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
		p.session.close()
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

func (p *serverProcess) stderrNote() string { return stderrNote("server", p.stderr) }

// stderrNote is the tail of a process's stderr, for an error message.
func stderrNote(who string, stderr fmt.Stringer) string {
	tail := strings.TrimSpace(stderr.String())
	if tail == "" {
		return ""
	}
	return "\n" + who + " stderr (tail):\n" + indent(tail, "  ")
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

// work is what the client does with an answer after its last byte has
// arrived, for the report.
func (o clientOptions) work() string {
	if o.ts != nil {
		return "the TypeScript SDK client's JSON parsing and schema checks"
	}
	return "the go-sdk client's JSON decoding"
}

// markdownName names the client in the markdown report's method sentence.
func (o clientOptions) markdownName() string {
	if o.ts != nil {
		return fmt.Sprintf("the TypeScript SDK's MCP client (`@modelcontextprotocol/sdk` %s, in Node.js)", o.ts.version)
	}
	return "a go-sdk MCP client"
}

// tsStdioMaxMessage is the largest message the TypeScript SDK's stdio
// transports take by default (STDIO_DEFAULT_MAX_BUFFER_SIZE): on a longer
// one StdioClientTransport reports an error and closes the connection.
const tsStdioMaxMessage = 10 << 20

// tsClientNote says how the TypeScript client was run.
const tsClientNote = "The TypeScript client is the SDK's Client over its own stdio framing, with two differences from a host on StdioClientTransport's defaults: " +
	"memory-bench starts the server (and times the last byte on the pipe between them), and a message may be of any size " +
	"(StdioClientTransport stops at 10 MiB by default). It lists the tools once after connecting, as a host does, " +
	"and then checks each structuredContent against the tool's outputSchema; start to first answer includes that tools/list, " +
	"made by a fresh Node.js process each time (loaded, but its code not yet compiled by the JIT). " +
	"The last-byte clock starts when memory-bench hands the call to the client, a hop before the client's own clock starts."
