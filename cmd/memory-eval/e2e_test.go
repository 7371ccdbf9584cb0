package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
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

// TestEmbeddings: with --embeddings the server searches by meaning too,
// and the questions are asked once every text has its vector: the
// stand-in endpoint's "hobby" finds the photographer, whom words miss.
// Without the flag search by meaning is off even where the caller's
// environment turns it on.
func TestEmbeddings(t *testing.T) {
	bin := buildServer(t)
	stub := meaningtest.New("m")
	defer stub.Close()
	set := t.TempDir()
	if err := os.MkdirAll(filepath.Join(set, "memories"), 0o755); err != nil {
		t.Fatal(err)
	}
	var memory strings.Builder
	for i := range 40 {
		fmt.Fprintf(&memory, `{"type":"entity","name":"Person %d","entityType":"person","observations":["Works shift %d at the depot"]}`+"\n", i, i)
	}
	memory.WriteString(`{"type":"entity","name":"Carol","entityType":"person","observations":["Took up photography last spring"]}` + "\n")
	questions := `{"id":"m-1","memory":"people","language":"en","kind":"paraphrase","question":"hobby","entity":"Carol","observation":"Took up photography last spring"}` + "\n"
	if err := os.WriteFile(filepath.Join(set, "memories", "people.jsonl"), []byte(memory.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(set, "questions.jsonl"), []byte(questions), 0o600); err != nil {
		t.Fatal(err)
	}
	eval := func(args ...string) (report, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"--cmd", bin, "--set", set, "--json"}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		var rep report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("--json output: %v\n%s", err, stdout.String())
		}
		return rep, stderr.String()
	}

	t.Setenv("MEMORY_EMBEDDINGS_URL", stub.BaseURL())
	t.Setenv("MEMORY_EMBEDDINGS_MODEL", "m")
	rep, _ := eval()
	if o := rep.Outcomes["ours"][0]; o.Rank != 0 || stub.Requests() != 0 {
		t.Fatalf("without --embeddings: %+v and %d requests to the endpoint, want a miss and none", o, stub.Requests())
	}

	rep, stderr := eval("--embeddings", stub.BaseURL(), "--embeddings-model", "m", "--markdown")
	if o := rep.Outcomes["ours"][0]; o.Rank != 1 || !o.Evidence || o.ByWords || o.Error != "" {
		t.Errorf("with --embeddings: %+v, want Carol first with her observation", o)
	}
	if n := len(stub.Texts("m")); n != 42 { // 41 texts and the question
		t.Errorf("the endpoint embedded %d texts, want 41 and the question", n)
	}
	for _, want := range []string{
		`search by meaning through model "m" at ` + stub.BaseURL() + " (0 of 1 answers by words only",
		"| people (en) | 1 | ours | 1.00 |",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr (table and markdown) lacks %q:\n%s", want, stderr)
		}
	}

	// An endpoint slower than the server waits for a query (2 s): the
	// vectors come, the questions are answered by words, and counted.
	stub.SetDelay(3 * time.Second)
	rep, stderr = eval("--embeddings", stub.BaseURL(), "--embeddings-model", "m")
	if o := rep.Outcomes["ours"][0]; !o.ByWords || o.Rank != 0 {
		t.Errorf("slow endpoint: %+v, want a miss by words", o)
	}
	if want := "(1 of 1 answers by words only"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	stub.SetDelay(0)

	// The endpoint down: the vectors never come, and the run says so.
	stub.SetDown(true)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--cmd", bin, "--set", set, "--embeddings", stub.BaseURL(), "--vectors-timeout", "2s"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "search by meaning was not ready after 2s (0 of 41 texts have a vector)") || !strings.Contains(errOut.String(), "503") {
		t.Errorf("endpoint down: exit %d\n%s", code, errOut.String())
	}
}
