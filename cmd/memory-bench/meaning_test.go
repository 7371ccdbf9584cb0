package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEmbeddingsEndToEnd: --embeddings stub runs the server with search by
// meaning off and on, the second with every vector computed before the
// run, and prints on/off ratios.
func TestEmbeddingsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs it")
	}
	t.Setenv("MEMORY_EMBEDDINGS_URL", "http://127.0.0.1:1/v1") // the off run must not use it
	t.Setenv("MEMORY_EMBEDDINGS_MODEL", "elsewhere")
	args := []string{"--sizes", "40", "--embeddings", "stub", "--iters", "2", "--min-iters", "1", "--warmups", "1",
		"--starts", "1", "--writes", "0", "--skip", "search", "--json"}
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
	runReport(t, args, &out)
	if len(out.Servers) != 2 || out.Servers[0].Label != "off" || out.Servers[1].Label != "on" || len(out.Sizes) != 1 {
		t.Fatalf("servers %+v, %d sizes; want off and on, one size", out.Servers, len(out.Sizes))
	}
	for label, r := range out.Sizes[0].Runs {
		if r.Error != "" || len(r.Tools) == 0 {
			t.Errorf("%s run: error %q, %d tools", label, r.Error, len(r.Tools))
		}
		for _, tool := range r.Tools {
			if tool.Errors > 0 || tool.WrongAnswers > 0 {
				t.Errorf("%s %s: %d errors (%s), %d wrong", label, tool.Label, tool.Errors, tool.FirstError, tool.WrongAnswers)
			}
		}
	}
	on := out.Sizes[0].Runs["on"]
	if !strings.Contains(on.MemoryNote, "every text's vector computed by `embed` before the run") || strings.Contains(out.Sizes[0].Runs["off"].MemoryNote, "meaning") {
		t.Errorf("memory notes: on %q, off %q", on.MemoryNote, out.Sizes[0].Runs["off"].MemoryNote)
	}
	if on.Ratio["add_observations (1)"] <= 0 {
		t.Errorf("on/off ratios missing: %v", on.Ratio)
	}
}

func TestEmbeddingsFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--embeddings", "stub", "--vs", "npx x"}, "--embeddings, --vs and --postgres each name the second server"},
		{[]string{"--embeddings", "http://127.0.0.1:11434/v1"}, "--embeddings URL needs --embeddings-model NAME"},
		{[]string{"--embeddings", "stub", "--embeddings-model", "m"}, "--embeddings stub serves its own model"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}
