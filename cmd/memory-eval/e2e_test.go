package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// buildServer builds this repository's server once per test binary run.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	bin := filepath.Join(t.TempDir(), "mcp-server-memory")
	if out, err := exec.Command("go", "build", "-o", bin, serverproc.OurServerPackage).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestEndToEnd runs the program against the built server on a tiny set
// whose answers docs/design.md §2 fixes: a query that occurs whole in
// one entity finds it first, and a query sharing no word finds nothing.
func TestEndToEnd(t *testing.T) {
	bin := buildServer(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--cmd", bin, "--set", "testdata/tiny", "--json", "--markdown"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout.String())
	}
	got := map[string]outcome{}
	for _, o := range rep.Outcomes["ours"] {
		got[o.ID] = o
	}
	if len(got) != 4 {
		t.Fatalf("outcomes for %d questions, want 4: %+v", len(got), rep.Outcomes)
	}
	for _, id := range []string{"t-1", "t-2", "t-4"} {
		if o := got[id]; o.Rank != 1 || !o.Evidence || o.AnswerBytes == 0 || o.Error != "" {
			t.Errorf("%s: %+v, want rank 1 with the evidence", id, o)
		}
	}
	if o := got["t-3"]; o.Rank != 0 || o.Evidence || o.Error != "" {
		t.Errorf("t-3 (no shared word): %+v, want a miss", o)
	}
	all := rep.Groups[0].Scores["ours"]
	if rep.Groups[0].Name != "people (en)" || all.Questions != 4 || all.Recall5 != 0.75 || all.MRR != 0.75 {
		t.Errorf("first group: %s %+v, want people (en) with recall@5 0.75", rep.Groups[0].Name, all)
	}
	for _, want := range []string{"| people (en) | 4 | ours | 0.75 |", "recall@5"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr (table and markdown) lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown memory", []string{"--set", "testdata/tiny", "--memory", "nope"}, 2, `no memory "nope"`},
		{"filter matching nothing", []string{"--set", "testdata/tiny", "--questions", "no such question"}, 2, "no question matches"},
		{"missing set", []string{"--set", "testdata/none"}, 1, "no memory files"},
		{"stray argument", []string{"extra"}, 2, "unexpected argument"},
		{"server that does not start", []string{"--set", "testdata/tiny", "--cmd", "exit 3"}, 1, "connecting to"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", tt.name, code, stderr.String(), tt.code, tt.want)
		}
	}
}

func TestQuestionFilter(t *testing.T) {
	bin := buildServer(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--cmd", bin, "--set", "testdata/tiny", "--questions", "SHELLFISH", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if outs := rep.Outcomes["ours"]; len(outs) != 1 || outs[0].ID != "t-2" {
		t.Errorf("--questions SHELLFISH ran %+v, want only t-2", outs)
	}
}
