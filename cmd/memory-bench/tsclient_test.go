package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needNode skips a test of --client ts where Node.js or npm is missing.
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("--client ts needs Node.js and npm: %s is not on PATH", tool)
		}
	}
}

// TestTSClientEndToEnd runs the benchmark with the TypeScript SDK's client
// (installed with npm on first use) against the real server on a small
// memory: every tool is timed both ways with right answers, the writes and
// the RSS are measured, and the report names the client.
func TestTSClientEndToEnd(t *testing.T) {
	ours := buildOurs(t)
	needNode(t)
	args := []string{"--sizes", "40", "--cmd", ours, "--client", "ts", "--iters", "2", "--min-iters", "1",
		"--warmups", "1", "--starts", "2", "--writes", "4", "--json"}
	var out struct {
		Client   string
		Protocol string
		Sizes    []struct {
			Runs map[string]struct {
				Error string
				Start jsonLatency `json:"startToFirstAnswer"`
				Tools []struct {
					ToolResult
					Latency jsonLatency
					Wire    jsonLatency
				}
				Writes *WritesResult
				Memory memoryPeak
			}
		}
	}
	stderr := runReport(t, args, &out)
	const client = "TypeScript SDK client @modelcontextprotocol/sdk 1.32.2, stdio, protocol 2025-11-25"
	if out.Client != client || out.Protocol != "2025-11-25" {
		t.Errorf("client %q, protocol %q; want %q", out.Client, out.Protocol, client)
	}
	if !strings.Contains(stderr.String(), "latencies in ms as the MCP client sees them ("+client+")") ||
		!strings.Contains(stderr.String(), "without the TypeScript SDK client's JSON parsing and schema checks") {
		t.Errorf("the table does not name the client:\n%s", stderr.String())
	}
	if len(out.Sizes) != 1 {
		t.Fatalf("sizes %+v", out.Sizes)
	}
	r := out.Sizes[0].Runs["ours"]
	if r.Error != "" || len(r.Tools) != 10 || r.Start.Count != 2 {
		t.Fatalf("run: error %q, %d tools, %d starts", r.Error, len(r.Tools), r.Start.Count)
	}
	for _, tool := range r.Tools {
		if tool.Errors > 0 || tool.WrongAnswers > 0 || tool.Checked == 0 {
			t.Errorf("%s: %d errors (%s), %d wrong of %d checked %v", tool.Label, tool.Errors, tool.FirstError, tool.WrongAnswers, tool.Checked, tool.Problems)
		}
		if tool.Latency.Count == 0 || tool.Latency.P50 <= 0 || tool.Wire.Count != tool.Latency.Count || tool.Wire.P50 <= 0 {
			t.Errorf("%s: latency %+v, last byte %+v", tool.Label, tool.Latency, tool.Wire)
		}
	}
	if r.Writes == nil || r.Writes.Errors > 0 || r.Writes.RSSKB == 0 || r.Writes.FreshRSSKB == 0 {
		t.Errorf("writes: %+v", r.Writes)
	}
	if r.Memory.ServerKB == 0 {
		t.Errorf("no peak RSS of the server: %+v", r.Memory)
	}
}

// TestTSClientErrors: what the TypeScript client reports as failed, a
// protocol error (no such tool) or a tool's error (isError), comes back as
// the call's error, as from the go-sdk client; --protocol makes it ask for
// that version.
func TestTSClientErrors(t *testing.T) {
	ours := buildOurs(t)
	needNode(t)
	ctx := context.Background()
	sdk, err := installTSClient(ctx, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
	p, err := startServer(ctx, ours, env, clientOptions{protocol: "2025-06-18", askProtocol: "2025-06-18", ts: &sdk})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if got := p.session.(*tsSession).protocol; got != "2025-06-18" {
		t.Errorf("negotiated protocol %q, want 2025-06-18 as asked", got)
	}
	if _, _, err := p.call(ctx, time.Minute, "no_such_tool", map[string]any{}); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("calling a tool that does not exist: %v", err)
	}
	res, _, err := p.call(ctx, time.Minute, "open_nodes", map[string]any{"names": 5})
	if err == nil || !strings.HasPrefix(err.Error(), "tool error: Invalid arguments for tool open_nodes") || res == nil || !res.IsError {
		t.Errorf("open_nodes of a number: result %+v, error %v; want a tool error", res, err)
	}
	res, tm, err := p.call(ctx, time.Minute, "read_graph", map[string]any{})
	if err != nil || countField(res, "entities") != 0 || tm.client <= 0 || tm.wire <= 0 || tm.bytes < int64(len(`{"entities":[],"relations":[]}`)) {
		t.Errorf("read_graph of an empty memory: %+v, %+v, %v", res, tm, err)
	}
}

// TestTSClientNotesBigAnswers: with the TypeScript client, a row whose
// answers are longer than the SDK's stdio transport takes by default says
// so; with the go-sdk client, or shorter answers, nothing is said.
func TestTSClientNotesBigAnswers(t *testing.T) {
	sz := &sizeResult{Runs: map[string]*RunResult{"ours": {Tools: []*ToolResult{
		{Label: "read_graph", Tool: "read_graph", Entities: -1, AnswerBytes: 12_300_000},
		{Label: "open_nodes (3 names)", Tool: "open_nodes", Entities: -1, AnswerBytes: 2_000},
	}}}}
	servers := []*benchServer{{label: "ours"}}
	ts := &report{Servers: servers, Settings: runSettings{client: clientOptions{ts: &tsSDK{version: "1.32.2"}}}}
	want := "[ours] read_graph: answers of up to 12.3 MB, more than the 10 MiB at which the TypeScript SDK's StdioClientTransport stops by default"
	notes := strings.Join(ts.notes(sz), "\n")
	if !strings.Contains(notes, want) || strings.Contains(notes, "open_nodes") {
		t.Errorf("notes with the TypeScript client:\n%s\nwant %q, and nothing on open_nodes", notes, want)
	}
	goClient := &report{Servers: servers, Settings: runSettings{client: clientOptions{protocol: "2025-06-18"}}}
	if notes := strings.Join(goClient.notes(sz), "\n"); strings.Contains(notes, "MiB") {
		t.Errorf("notes with the go-sdk client:\n%s", notes)
	}
}
