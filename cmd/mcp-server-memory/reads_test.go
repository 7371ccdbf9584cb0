//go:build !windows

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
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
// protocol generations: the write is answered first, for a read lets go
// of the memory before it encodes its answer, which takes far longer than
// the write. When the reads encoded while they held the memory, the
// write's answer came after both of theirs. Each read shows the whole
// memory.
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
			if order[0] != "4" {
				t.Errorf("answers in the order %v: the write came after a whole read", order)
			}
		})
	}
}
