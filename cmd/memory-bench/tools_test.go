package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

func buildOurs(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the server and runs it")
	}
	bin, err := serverproc.BuildOurServer(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return serverproc.ShellQuote(bin)
}

// TestToolsBackendLoadsTheGraph loads a generated graph, in several
// batches, through our own server's tools into an empty memory file, and
// finds in that file, once the server has exited, exactly the generated
// graph. Loading it again into the same memory fails: nothing new was
// created, so the memory was not empty.
func TestToolsBackendLoadsTheGraph(t *testing.T) {
	ours := buildOurs(t)
	ctx := context.Background()
	n := 2*loadEntityBatch + 7 // three create_entities and three create_relations calls
	g, _ := testgraph.Generate(n, 3)
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "graph.jsonl")
	if err := writeGraphFile(graphFile, g); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	b := toolsBackend{command: ours, client: clientOptions{protocol: "2025-06-18"}, timeout: time.Minute}
	m, err := b.fresh(ctx, graphFile, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2,007 entities (10,035 observations) and 4,014 relations", "3 create_entities and 3 create_relations calls", "of 7 of them"} {
		if !strings.Contains(m.describe, want) {
			t.Errorf("the note lacks %q: %s", want, m.describe)
		}
	}
	if !slices.ContainsFunc(m.env, func(kv string) bool { return strings.HasPrefix(kv, "HOME="+run) }) {
		t.Errorf("HOME is not the run's directory: %q", m.env)
	}
	if m.bytes(ctx) == 0 {
		t.Error("the memory takes no bytes")
	}

	got, err := readGraphFile(filepath.Join(run, "memory.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sortGraph(got)
	sortGraph(g)
	if len(got.Entities) != len(g.Entities) || len(got.Relations) != len(g.Relations) {
		t.Fatalf("the memory holds %d entities and %d relations, want %d and %d", len(got.Entities), len(got.Relations), len(g.Entities), len(g.Relations))
	}
	for i := range g.Entities {
		w, e := g.Entities[i], got.Entities[i]
		if e.Name != w.Name || e.EntityType != w.EntityType || !slices.Equal(e.Observations, w.Observations) {
			t.Fatalf("entity %d is %+v, want %+v", i, e, w)
		}
	}
	if !slices.Equal(got.Relations, g.Relations) {
		t.Fatal("the relations differ from the graph's")
	}

	// The same memory again: every entity exists already.
	if _, err := b.fresh(ctx, graphFile, run); err == nil || !strings.Contains(err.Error(), "was the memory not empty?") {
		t.Errorf("loading into a memory that holds the graph: %v", err)
	}
}

func sortGraph(g *testgraph.Graph) {
	slices.SortFunc(g.Entities, func(a, b testgraph.Entity) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(g.Relations, func(a, b testgraph.Relation) int {
		return strings.Compare(a.From+"\x00"+a.To+"\x00"+a.RelationType, b.From+"\x00"+b.To+"\x00"+b.RelationType)
	})
}

// TestVsLoadToolsEndToEnd runs the benchmark with our server as --vs,
// loaded through its tools: every write of both runs succeeds with the
// right answer, and the notes count what was loaded.
func TestVsLoadToolsEndToEnd(t *testing.T) {
	ours := buildOurs(t)
	args := []string{"--sizes", "40", "--cmd", ours, "--vs", ours, "--vs-load", "tools", "--iters", "2", "--min-iters", "1",
		"--warmups", "1", "--starts", "1", "--writes", "4", "--skip", "read_graph,search", "--json"}
	var out struct {
		Sizes []struct {
			Runs map[string]struct {
				Error      string
				MemoryNote string
				Tools      []ToolResult
				Writes     *WritesResult
			}
		}
	}
	runReport(t, args, &out)
	if len(out.Sizes) != 1 {
		t.Fatalf("sizes %+v", out.Sizes)
	}
	for _, label := range []string{"ours", "theirs"} {
		r := out.Sizes[0].Runs[label]
		if r.Error != "" || len(r.Tools) != 5 {
			t.Errorf("%s run: error %q, %d tools", label, r.Error, len(r.Tools))
		}
		for _, tool := range r.Tools {
			if tool.Errors > 0 || tool.WrongAnswers > 0 || tool.Checked == 0 {
				t.Errorf("%s %s: %d errors (%s), %d wrong of %d checked %v", label, tool.Label, tool.Errors, tool.FirstError, tool.WrongAnswers, tool.Checked, tool.Problems)
			}
		}
		if r.Writes == nil || r.Writes.Errors > 0 || r.Writes.FreshRSSKB == 0 {
			t.Errorf("%s writes: %+v", label, r.Writes)
		}
	}
	if note := out.Sizes[0].Runs["theirs"].MemoryNote; !strings.Contains(note, "40 entities (200 observations) and 80 relations created") {
		t.Errorf("memory note %q", note)
	}
}

// TestSeveralVs runs three servers in one run, the third loaded through
// its tools: each has its run, each later one its ratios to the first, in
// the JSON and as a column of the tables.
func TestSeveralVs(t *testing.T) {
	ours := buildOurs(t)
	args := []string{"--sizes", "40", "--cmd", ours, "--vs", ours, "--vs", ours, "--vs-load", "file,tools", "--iters", "2", "--min-iters", "1",
		"--warmups", "1", "--starts", "1", "--writes", "4", "--skip", "read_graph,search", "--json", "--markdown"}
	var out struct {
		Servers []struct{ Label string }
		Sizes   []struct {
			Runs map[string]struct {
				Error      string
				MemoryNote string
				Tools      []ToolResult
				Ratio      map[string]float64 `json:"ratioP50"`
			}
		}
	}
	stderr := runReport(t, args, &out)
	var labels []string
	for _, s := range out.Servers {
		labels = append(labels, s.Label)
	}
	if want := []string{"ours", "theirs", "theirs2"}; !slices.Equal(labels, want) || len(out.Sizes) != 1 {
		t.Fatalf("servers %q, %d sizes; want %q and 1", labels, len(out.Sizes), want)
	}
	runs := out.Sizes[0].Runs
	for _, l := range labels {
		if r := runs[l]; r.Error != "" || len(r.Tools) != 5 {
			t.Errorf("%s run: error %q, %d tools", l, r.Error, len(r.Tools))
		}
	}
	for _, l := range labels[1:] {
		if runs[l].Ratio["start to first answer"] == 0 || runs[l].Ratio["open_nodes (3 names)"] == 0 {
			t.Errorf("%s ratios: %v", l, runs[l].Ratio)
		}
	}
	if runs["ours"].Ratio != nil || runs["theirs"].MemoryNote != "" || !strings.Contains(runs["theirs2"].MemoryNote, "40 entities (200 observations) and 80 relations created") {
		t.Errorf("ours ratios %v; memory notes %q, %q", runs["ours"].Ratio, runs["theirs"].MemoryNote, runs["theirs2"].MemoryNote)
	}
	for _, header := range []string{
		"| tool | ours p50 | p95 | p99 | theirs p50 | p95 | p99 | theirs2 p50 | p95 | p99 | theirs/ours p50 | theirs2/ours p50 |",
		"| tool | ours | theirs | theirs2 | theirs/ours | theirs2/ours |",
		"theirs/ours p50  theirs2/ours p50",
	} {
		if !strings.Contains(stderr.String(), header) {
			t.Errorf("no %q in the tables:\n%s", header, stderr.String())
		}
	}
}

func TestVsLoadFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--vs-load", "tools"}, "--vs-load tools needs --vs"},
		{[]string{"--vs", "x", "--vs-load", "sqlite"}, `--vs-load: "sqlite" is neither`},
		{[]string{"--vs", "x", "--vs", "y", "--vs-load", "file,tools,file"}, "--vs-load: 3 values for 2 --vs servers"},
		{[]string{"--vs", "x", "--vs", "y", "--postgres", "auto"}, "--postgres and --vs both name the second server"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// TestCountCreated reads what a server created from structured content, as
// ours and today's reference answer, and from a bare array in the text, as
// older versions of the reference and servers modelled on them do.
func TestCountCreated(t *testing.T) {
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	structured := text(`{"entities":[{"name":"a"},{"name":"b"}]}`)
	structured.StructuredContent = map[string]any{"entities": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}
	for _, tt := range []struct {
		res  *mcp.CallToolResult
		want int
	}{
		{structured, 2},
		{text(`{"entities":[{"name":"a"}]}`), 1},
		{text("[\n  {\"name\": \"a\"},\n  {\"name\": \"b\"},\n  {\"name\": \"c\"}\n]"), 3},
		{text(`[]`), 0},
		{text(`Entities created`), -1},
		{text(`{"relations":[]}`), -1},
	} {
		if got := countCreated(tt.res, "entities"); got != tt.want {
			t.Errorf("countCreated(%s) = %d, want %d", firstText(tt.res), got, tt.want)
		}
	}
}

// runReport runs the benchmark with args (which hold --json), fails the
// test unless it exits 0, decodes its JSON report into out, and returns
// what it wrote to stderr (the tables).
func runReport(t *testing.T, args []string, out any) *bytes.Buffer {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("decoding the JSON report: %v\n%s", err, stdout.String())
	}
	return &stderr
}
