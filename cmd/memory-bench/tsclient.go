package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// The TypeScript SDK client (--client ts): a Node script, tsclient/client.mjs,
// whose package.json and package-lock.json pin @modelcontextprotocol/sdk.
//
//go:embed tsclient/client.mjs tsclient/package.json tsclient/package-lock.json
var tsclientFiles embed.FS

// tsSDK describes the installed TypeScript client.
type tsSDK struct {
	dir      string // holds client.mjs and its node_modules
	version  string // of @modelcontextprotocol/sdk
	protocol string // the protocol version its client asks for by default
}

// installTSClient makes sure the TypeScript client and its dependencies are
// installed (npm ci, once per version of the embedded files) in the user's
// cache directory, and asks it what it is.
func installTSClient(ctx context.Context, progress func(string, ...any)) (tsSDK, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tsSDK{}, fmt.Errorf("--client ts runs the TypeScript SDK's client in Node.js and installs it with npm: %s is not on PATH (install Node.js 18 or newer)", tool)
		}
	}
	names := []string{"client.mjs", "package.json", "package-lock.json"}
	h := sha256.New()
	for _, name := range names {
		b, err := tsclientFiles.ReadFile("tsclient/" + name)
		if err != nil {
			return tsSDK{}, err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	parent := filepath.Join(base, "mcp-server-memory", "memory-bench-tsclient")
	dir := filepath.Join(parent, hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		progress("installing the TypeScript SDK client (npm ci) in %s", dir)
		if err := npmInstall(ctx, parent, dir, names); err != nil {
			return tsSDK{}, err
		}
	}
	out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), "--describe").Output()
	if err != nil {
		return tsSDK{}, fmt.Errorf("node %s --describe: %w%s", filepath.Join(dir, "client.mjs"), err, exitStderr(err))
	}
	var d struct{ SDK, Protocol string }
	if err := json.Unmarshal(out, &d); err != nil || d.SDK == "" {
		return tsSDK{}, fmt.Errorf("node %s --describe said %q", filepath.Join(dir, "client.mjs"), out)
	}
	return tsSDK{dir: dir, version: d.SDK, protocol: d.Protocol}, nil
}

// npmInstall writes the embedded files into a new directory beside dir,
// installs their dependencies there and renames it to dir, so that dir is
// either complete or absent, whatever runs at the same time.
func npmInstall(ctx context.Context, parent, dir string, names []string) error {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range names {
		b, _ := tsclientFiles.ReadFile("tsclient/" + name)
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--omit=dev", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("installing the TypeScript SDK client with npm ci in %s: %w\n%s", tmp, err, indent(strings.TrimSpace(string(out)), "  "))
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "node_modules")); statErr == nil {
			return nil // installed meanwhile by another run
		}
		return err
	}
	return nil
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + indent(strings.TrimSpace(string(ee.Stderr)), "  ")
	}
	return ""
}

// tsSession is a running TypeScript client, connected to one server: its
// stdout is the server's stdin, its stdin what memory-bench reads from the
// server's stdout, and memory-bench gives it commands on a third pipe (see
// client.mjs).
type tsSession struct {
	cmd      *exec.Cmd
	commands *os.File // the client's fd 3
	replies  chan tsReply
	stderr   *serverproc.TailBuffer
	exited   chan struct{}
	waitErr  error
	lastID   int
	protocol string // negotiated
}

type tsReply struct {
	ID       int             `json:"id"`
	Ms       float64         `json:"ms"`
	Result   json.RawMessage `json:"result"`
	Error    string          `json:"error"`
	Protocol string          `json:"protocol"`
}

// startTSClient starts the client with serverStdin as its stdout; the
// caller keeps no copy of serverStdin after this. The client starts before
// the server does, as in a host, so that Node's start-up is not counted in
// the server's.
func startTSClient(sdk tsSDK, askProtocol string, serverStdin *os.File) (s *tsSession, stdin *os.File, err error) {
	defer serverStdin.Close()
	args := []string{filepath.Join(sdk.dir, "client.mjs")}
	if askProtocol != "" {
		args = append(args, "--protocol", askProtocol)
	}
	cmd := exec.Command("node", args...)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		cmdR.Close()
		cmdW.Close()
		return nil, nil, err
	}
	s = &tsSession{cmd: cmd, commands: cmdW, replies: make(chan tsReply, 1), stderr: serverproc.NewTailBuffer(16 << 10), exited: make(chan struct{})}
	cmd.Stdin = stdinR
	cmd.Stdout = serverStdin
	cmd.Stderr = s.stderr
	cmd.ExtraFiles = []*os.File{cmdR, repW} // fds 3, 4
	err = cmd.Start()
	stdinR.Close()
	cmdR.Close()
	repW.Close()
	if err != nil {
		stdinW.Close()
		cmdW.Close()
		repR.Close()
		return nil, nil, fmt.Errorf("starting the TypeScript client: %w", err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	go s.readReplies(repR)
	// Wait for Node and the SDK to load.
	select {
	case rep, ok := <-s.replies:
		if ok && rep.ID == 0 {
			return s, stdinW, nil
		}
	case <-time.After(time.Minute):
	}
	stdinW.Close()
	s.close()
	return nil, nil, fmt.Errorf("the TypeScript client did not start (%v)%s", s.waitErr, s.stderrNote())
}

// readReplies passes the client's answers on, in order, until it closes
// fd 4.
func (s *tsSession) readReplies(f *os.File) {
	defer close(s.replies)
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rep tsReply
			if jerr := json.Unmarshal(line, &rep); jerr != nil {
				rep = tsReply{ID: -1, Error: fmt.Sprintf("unreadable answer from the TypeScript client: %v", jerr)}
			}
			s.replies <- rep
		}
		if err != nil {
			return
		}
	}
}

// feed copies the server's stdout (through the arrival timer) to the
// client's stdin until the server closes it. It reads the server as fast
// as it writes, holding what the client has not taken yet, so that the
// last byte is timed as the server sends it: the SDK's client takes a big
// message slowly (it joins the pieces read so far on every read), and a
// pipe to it would hold the server back by that much, which the go-sdk
// client, reading through a large buffer, does not.
func feed(clientStdin *os.File, serverStdout io.ReadCloser) {
	var (
		mu     sync.Mutex
		more   = sync.NewCond(&mu)
		queue  [][]byte
		closed bool
	)
	go func() {
		defer serverStdout.Close()
		for {
			buf := make([]byte, 64<<10) // a pipe's capacity
			n, err := serverStdout.Read(buf)
			mu.Lock()
			if n > 0 {
				queue = append(queue, buf[:n])
			}
			closed = err != nil
			more.Signal()
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	defer clientStdin.Close()
	broken := false // the client is gone: drain the server, write nothing
	for {
		mu.Lock()
		for len(queue) == 0 && !closed {
			more.Wait()
		}
		chunks, done := queue, closed
		queue = nil
		mu.Unlock()
		for _, b := range chunks {
			if !broken {
				_, err := clientStdin.Write(b)
				broken = err != nil
			}
		}
		if done && len(chunks) == 0 {
			return
		}
	}
}

// connect runs the MCP handshake and tools/list.
func (s *tsSession) connect(ctx context.Context) error {
	rep, err := s.request(ctx, map[string]any{"op": "connect"})
	if err != nil {
		return err
	}
	s.protocol = rep.Protocol
	return nil
}

// request sends one command and waits for its answer; an "error" in it is
// returned as err, with the answer.
func (s *tsSession) request(ctx context.Context, cmd map[string]any) (tsReply, error) {
	s.lastID++
	cmd["id"] = s.lastID
	timeout := 10 * time.Minute
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	cmd["timeoutMs"] = max(timeout.Milliseconds(), 1)
	line, err := json.Marshal(cmd)
	if err != nil {
		return tsReply{}, err
	}
	if _, err := s.commands.Write(append(line, '\n')); err != nil {
		return tsReply{}, fmt.Errorf("TypeScript client: %w%s", err, s.stderrNote())
	}
	for {
		select {
		case rep, ok := <-s.replies:
			switch {
			case !ok:
				<-s.exited
				return tsReply{}, fmt.Errorf("the TypeScript client exited (%v)%s", s.waitErr, s.stderrNote())
			case rep.ID == -1:
				return rep, errors.New(rep.Error)
			case rep.ID < s.lastID:
				continue // the answer to a command given up on
			case rep.Error != "":
				return rep, errors.New(rep.Error)
			}
			return rep, nil
		case <-ctx.Done():
			return tsReply{}, ctx.Err()
		}
	}
}

func (s *tsSession) callTool(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, time.Duration, error) {
	if args == nil {
		args = map[string]any{}
	}
	rep, err := s.request(ctx, map[string]any{"op": "call", "tool": tool, "args": args})
	waited := time.Duration(rep.Ms * float64(time.Millisecond))
	if err != nil {
		return nil, waited, err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		return nil, waited, fmt.Errorf("the TypeScript client's result of %s: %w", tool, err)
	}
	return &res, waited, nil
}

// close ends the client's input; it closes its MCP client and exits, which
// closes the server's stdin, as a host does.
func (s *tsSession) close() {
	s.commands.Close()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *tsSession) stderrNote() string { return stderrNote("TypeScript client", s.stderr) }
