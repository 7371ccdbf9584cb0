//go:build !windows

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// bigMemory writes a generated memory of n entities and returns its path.
func bigMemory(t *testing.T, n int) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := testgraph.Generate(n, 1)
	if err := g.WriteJSONL(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return file
}

// TestStdioCallsBoundBinary: a client that sends reads faster than it
// reads their answers (whole answers, MEMORY_ANSWER_LIMIT=0, each bigger
// than the pipe holds) gets a JSON-RPC refusal past MEMORY_MAX_CALLS reads
// in progress, and its write sent after them is answered.
func TestStdioCallsBoundBinary(t *testing.T) {
	in, out := startStdioBinary(t, "MEMORY_FILE_PATH="+bigMemory(t, 2000), "MEMORY_ANSWER_LIMIT=0", "MEMORY_MAX_CALLS=2")
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for id := 1; id <= 3; id++ {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`+"\n", id)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"W","entityType":"t","observations":[]}]}}}`)
	// The first answer fills the pipe, so reads 1 and 2 stay in progress
	// while the server reads the lines after them.
	time.Sleep(500 * time.Millisecond)
	answers := map[string]string{}
	for range 4 {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		for id := 1; id <= 4; id++ {
			if strings.HasPrefix(line, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)) {
				answers[fmt.Sprint(id)] = line[:min(len(line), 300)]
			}
		}
	}
	for _, id := range []string{"1", "2", "4"} {
		if !strings.Contains(answers[id], `"result"`) {
			t.Errorf("call %s: %s", id, answers[id])
		}
	}
	if want := `"code":-32000,"message":"Too many calls: this connection has 2 reads in progress, the most it may have (MEMORY_MAX_CALLS)`; !strings.Contains(answers["3"], want) {
		t.Errorf("read past the bound: %s\nwant %s", answers["3"], want)
	}
}
