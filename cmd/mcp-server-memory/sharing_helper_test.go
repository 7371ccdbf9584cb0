package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// Helpers of the sharing and interop tests, which run several server
// processes (ours and the Node reference) against one memory file.

// sharingVersion is the protocol the multi-process tests speak unless they
// test the generations themselves.
const sharingVersion = "2025-11-25"

// serverProcess is one server child process and the client session talking to it.
type serverProcess struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *testlog.Buffer
}

// startServer starts our server on memoryFile with extra environment (the
// internal timing knobs) and connects at the given protocol version. The
// process is stopped when the test ends.
func startServer(t *testing.T, memoryFile, version string, opts *mcp.ClientOptions, env ...string) *serverProcess {
	t.Helper()
	p, err := startProcess(t, serverCmd(memoryFile, env...), version, opts, 30*time.Second)
	if err != nil {
		t.Fatalf("starting the server at %s: %v\nstderr:\n%s", version, err, p.stderr)
	}
	return p
}

// startProcess runs cmd as an MCP server over stdio and connects to it. On
// error the returned process still carries the stderr collected so far.
func startProcess(t *testing.T, cmd *exec.Cmd, version string, opts *mcp.ClientOptions, connectTimeout time.Duration) (*serverProcess, error) {
	t.Helper()
	p := &serverProcess{cmd: cmd, stderr: &testlog.Buffer{}}
	cmd.Stderr = p.stderr
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		p.reap()
		return p, err
	}
	p.cs = cs
	t.Cleanup(func() {
		p.close()
		if t.Failed() {
			t.Logf("stderr of %s (pid %d):\n%s", filepath.Base(cmd.Path), cmd.Process.Pid, p.stderr)
		}
	})
	return p, nil
}

// close ends the session and waits for the process to exit, so that its pid
// is reaped (a zombie still counts as a live lock holder) and its stderr is
// complete.
func (p *serverProcess) close() {
	if p.cs != nil {
		p.cs.Close()
	}
	p.reap()
}

func (p *serverProcess) reap() {
	// CommandTransport's Close waits for the process, except when closing
	// its stdin fails; make sure it is gone either way.
	if p.cmd.Process != nil && p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// call runs a tool and fails the test on a protocol error; a tool error
// (isError) is returned for the caller to judge. Safe for concurrent use;
// it reports failures with t.Errorf and returns nil then.
func (p *serverProcess) call(ctx context.Context, t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return nil
	}
	return res
}

// mustCall runs a tool that must succeed. Safe for concurrent use (it
// reports with t.Errorf and returns false on failure).
func (p *serverProcess) mustCall(ctx context.Context, t *testing.T, name string, args any) bool {
	t.Helper()
	res := p.call(ctx, t, name, args)
	if res == nil {
		return false
	}
	if res.IsError {
		t.Errorf("%s: tool error: %s", name, toolText(res))
		return false
	}
	return true
}

// readGraph returns read_graph's structuredContent as plain JSON values, so
// that two servers' answers compare exactly, extra or missing keys included.
//
// A graph bigger than the answer limit comes in parts: readGraph follows
// nextCursor as a client does and puts the parts together, which must give
// the whole graph in graph order, exactly as one unlimited answer would.
func (p *serverProcess) readGraph(ctx context.Context, t *testing.T) any {
	t.Helper()
	var whole map[string]any
	args := map[string]any{}
	for part := 1; ; part++ {
		res := p.call(ctx, t, "read_graph", args)
		if res == nil || res.IsError {
			t.Fatalf("read_graph failed: %v", res)
		}
		page, ok := plainJSON(t, res.StructuredContent).(map[string]any)
		if !ok {
			t.Fatalf("read_graph result %v", res.StructuredContent)
		}
		next, _ := page["nextCursor"].(string)
		delete(page, "nextCursor")
		if whole == nil {
			whole = page
		} else {
			whole["entities"] = joinEntities(t, whole["entities"].([]any), page["entities"].([]any))
			whole["relations"] = append(whole["relations"].([]any), page["relations"].([]any)...)
		}
		if next == "" {
			return whole
		}
		if part > 10000 {
			t.Fatal("read_graph's cursors do not end")
		}
		args = map[string]any{"cursor": next}
	}
}

// joinEntities appends a part's entities to those before it; an entity
// split across parts (omittedObservations) is put back together.
func joinEntities(t *testing.T, before, part []any) []any {
	for _, e := range part {
		em := e.(map[string]any)
		if n := len(before); n > 0 {
			prev := before[n-1].(map[string]any)
			if omitted, ok := prev["omittedObservations"].(float64); ok && omitted > 0 && prev["name"] == em["name"] {
				obs := append(prev["observations"].([]any), em["observations"].([]any)...)
				prev["observations"] = obs
				if left := omitted - float64(len(em["observations"].([]any))); left > 0 {
					prev["omittedObservations"] = left
				} else {
					delete(prev, "omittedObservations")
				}
				continue
			}
		}
		before = append(before, em)
	}
	return before
}

func plainJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// wireGraph is read_graph's result, typed.
type wireGraph struct {
	Entities  []wireEntity   `json:"entities"`
	Relations []wireRelation `json:"relations"`
}

type wireEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type wireRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

func typedGraph(t *testing.T, v any) wireGraph {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var g wireGraph
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("read_graph result %s: %v", b, err)
	}
	return g
}

func assertSameGraph(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, indentJSON(got), indentJSON(want))
	}
}

func indentJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return b.String()
}

func toolText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// fileLine is one line of the memory file.
type fileLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

// decodeMemoryFile reads the memory file line by line and fails the test if
// any line is not a JSON object.
func decodeMemoryFile(t *testing.T, path string) []fileLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the memory file: %v", err)
	}
	var lines []fileLine
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" && len(data) == 0 {
			break
		}
		var l fileLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("memory file line %d is not JSON (%v): %q", i+1, err, line)
		}
		lines = append(lines, l)
	}
	return lines
}

// waitForFile waits, up to 30 s, for the memory file to hold want (a
// server compacts its journal into it when idle; times written by the
// test's calls count as "T", see stampTimes), and returns what it
// holds at the end.
func waitForFile(t *testing.T, path, want string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && string(stampTimes(data)) == want || time.Now().After(deadline) {
			return data
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// entitiesIn maps entity names to their observations.
func entitiesIn(lines []fileLine) map[string][]string {
	m := map[string][]string{}
	for _, l := range lines {
		if l.Type == "entity" {
			m[l.Name] = l.Observations
		}
	}
	return m
}

// leftovers lists lock, break, temporary and journal files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".lock") || strings.HasSuffix(n, ".break") || strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".journal") {
			names = append(names, n)
		}
	}
	return names
}

func entityArg(name, entityType string, observations ...string) map[string]any {
	if observations == nil {
		observations = []string{}
	}
	return map[string]any{"name": name, "entityType": entityType, "observations": observations}
}

func relationArg(from, to, relationType string) map[string]any {
	return map[string]any{"from": from, "to": to, "relationType": relationType}
}

func createEntitiesArgs(entities ...map[string]any) map[string]any {
	return map[string]any{"entities": entities}
}

func addObservationsArgs(entityName string, contents ...string) map[string]any {
	return map[string]any{"observations": []map[string]any{{"entityName": entityName, "contents": contents}}}
}

// writeUntilKilled streams one-entity create_entities calls (named
// round<round>-writeNNN, with a padded observation so that saves are slow
// enough to be killed during one) to srv, and SIGKILLs it a random few
// milliseconds after the killAfter-th acknowledged write. It returns the
// names of the acknowledged writes; the call in flight at the kill may or
// may not have landed.
func writeUntilKilled(ctx context.Context, t *testing.T, srv *serverProcess, rng *rand.Rand, round, killAfter int) []string {
	t.Helper()
	padding := strings.Repeat("x", 4096)
	killDelay := time.Duration(rng.IntN(3000)) * time.Microsecond
	reached := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		<-reached
		time.Sleep(killDelay)
		srv.cmd.Process.Kill()
	}()
	var acked []string
	n := 0
	for ; n < 1000; n++ {
		name := fmt.Sprintf("round%d-write%03d", round, n)
		res, err := srv.cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: createEntitiesArgs(entityArg(name, "note", padding))})
		if err != nil {
			break // the server died with this call in flight
		}
		if res.IsError {
			t.Fatalf("%s: tool error before the kill: %s", name, toolText(res))
		}
		acked = append(acked, name)
		if n+1 == killAfter {
			close(reached)
		}
	}
	if n < killAfter {
		close(reached) // let the killer finish
	}
	<-killed
	srv.close()
	t.Logf("round %d: killed after %d acknowledged writes (+%v)", round, n, killDelay)
	if n < killAfter {
		t.Fatalf("round %d: the server failed after %d writes, before it was killed", round, n)
	}
	return acked
}
