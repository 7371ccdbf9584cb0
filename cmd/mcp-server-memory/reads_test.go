//go:build !windows

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// startStdioBinary starts the binary on stdio with env (and no
// PostgreSQL), and returns its input and its output.
func startStdioBinary(t *testing.T, env ...string) (io.Writer, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = append(append(os.Environ(), "MEMORY_DATABASE_URL="), env...)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	in, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); io.Copy(io.Discard, stdout); cmd.Wait() })
	return in, bufio.NewReaderSize(stdout, 1<<20)
}

// TestWriteBeforeWholeReadsBinary sends two whole reads of a big memory
// (MEMORY_ANSWER_LIMIT=0) over stdio, and a write once they run, in both
// protocol generations: the write is answered before the reads are (the
// test asks only that it not come last, the write's fsync on a busy
// machine taking a while), for a read lets go of the memory before it
// encodes its answer, which takes far longer than the write. When the
// reads encoded while they held the memory, the write's answer came after
// both of theirs. Each read shows the whole memory.
func TestWriteBeforeWholeReadsBinary(t *testing.T) {
	file := bigMemory(t, 20000)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			in, out := startStdioBinary(t, "MEMORY_FILE_PATH="+file, "MEMORY_ANSWER_LIMIT=0", "MEMORY_MAX_READS=2")
			answer := func() string {
				t.Helper()
				line, err := out.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				return line
			}
			meta := ""
			if version == "2025-11-25" {
				fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				answer()
				fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			} else {
				meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},`
			}
			call := func(id int, tool, args string) {
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`+"\n", id, meta, tool, args)
			}
			// The memory is loaded first: a load holds it alone.
			call(1, "open_nodes", `{"names":["nobody"]}`)
			answer()
			call(2, "read_graph", `{}`)
			call(3, "read_graph", `{}`)
			time.Sleep(50 * time.Millisecond) // the reads hold the memory, or are past it
			call(4, "create_entities", `{"entities":[{"name":"written `+version+`","entityType":"t","observations":[]}]}`)
			var order []string
			for range 3 {
				line := answer()
				id := strings.TrimSuffix(strings.TrimPrefix(line[:min(len(line), 30)], `{"jsonrpc":"2.0","id":`), ",")
				id, _, _ = strings.Cut(id, ",")
				order = append(order, id)
				if id != "4" && (!strings.Contains(line[:min(len(line), 200)], `"result"`) || strings.Count(line, `\"entityType\"`) < 20000) {
					t.Errorf("read %s is not the whole memory: %.300s", id, line)
				}
			}
			if order[2] == "4" {
				t.Errorf("answers in the order %v: the write came after the whole reads", order)
			}
		})
	}
}

// longObservations writes a memory of n entities, each with one long
// observation ("observation i " repeated), and returns its path.
func longObservations(t *testing.T, n, repeat int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	var memory strings.Builder
	for i := range n {
		obs, _ := json.Marshal([]string{strings.Repeat(fmt.Sprintf("observation %d ", i), repeat)})
		fmt.Fprintf(&memory, `{"type":"entity","name":"e%d","entityType":"t","observations":%s}`+"\n", i, obs)
	}
	if err := os.WriteFile(file, []byte(memory.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestHTTPAnswerCountsItsCopiesBinary runs the binary with a 16 MB bound
// on the answers held and a memory whose whole answer counts 6 MB: over
// stdio, with one answer unread, a second read is served; over HTTP, with
// one answer unread, a second read is refused (503), for an answer there
// counts five times its size, the go-sdk's copies of it.
func TestHTTPAnswerCountsItsCopiesBinary(t *testing.T) {
	const token = "copies-token-0123456789abcdef"
	file := longObservations(t, 20, 10_000)
	env := []string{"MEMORY_FILE_PATH=" + file, "MEMORY_ANSWER_LIMIT=0", "MEMORY_MAX_ANSWER_MB=16", "MCP_SERVER_MEMORY_READ_WAIT=10ms"}

	in, out := startStdioBinary(t, env...)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`)
	time.Sleep(500 * time.Millisecond) // its answer is built, and held unread
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`)
	for range 2 {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line[:min(len(line), 100)], `"result"`) {
			t.Errorf("over stdio, a read with one answer held: %.300s", line)
		}
	}

	cmd := serverCmd(file, append(env, "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")...)
	cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0")
	base := waitLog(t, startChild(t, cmd).stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:(\d+))/; memory file `))[1]
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	readGraph := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + meta + `,"name":"read_graph","arguments":{}}}`
	header := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_graph"}
	stallRead(t, strings.TrimPrefix(base, "http://"), token, readGraph, header)
	var resp *http.Response
	var data []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, data = postRaw(t, base+"/mcp", token, readGraph, header)
		if resp.StatusCode != http.StatusOK || time.Now().After(deadline) {
			break // until the stalled answer is held
		}
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(data), "fill its bound of 16 MB (MEMORY_MAX_ANSWER_MB)") {
		t.Errorf("over HTTP, a read with one answer held: %d %.300s", resp.StatusCode, data)
	}
}
