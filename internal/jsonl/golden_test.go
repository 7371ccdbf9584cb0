package jsonl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// The golden files are what the reference server (npm
// @modelcontextprotocol/server-memory@2026.8.31) wrote for graph.json;
// scripts/make-golden.sh makes them again.
const (
	goldenDir       = "../../testdata/golden"
	goldenReference = "reference-2026.8.31.jsonl"
)

func loadGoldenGraph(t testing.TB) graph.Snapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s graph.Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("graph.json: %v", err)
	}
	return s
}

func TestGoldenEncode(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(goldenDir, goldenReference))
	if err != nil {
		t.Fatal(err)
	}
	// The reference ends its last line without "\n"; we end every line.
	want = append(want, '\n')

	snap := loadGoldenGraph(t)
	g := graph.New()
	for _, e := range snap.Entities {
		if _, merged := g.LoadEntity(e); merged {
			t.Fatalf("graph.json repeats entity %q", e.Name)
		}
	}
	for _, r := range snap.Relations {
		if _, duplicate := g.LoadRelation(r); duplicate {
			t.Fatalf("graph.json repeats relation %+v", r)
		}
	}
	got := encode(nil, g, nil)
	if !bytes.Equal(got, want) {
		t.Errorf("Write differs from the reference server's file\n%s", lineDiff(got, want))
	}
}

func TestGoldenDecode(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenDir, goldenReference))
	if err != nil {
		t.Fatal(err)
	}
	f := Decode(data)
	if len(f.Unreadable) != 0 || len(f.Problems) != 0 {
		t.Errorf("Decode(reference file): unreadable %q, problems %v", f.Unreadable, f.Problems)
	}
	if got, want := snapshot(f.Graph), loadGoldenGraph(t); !equalSnapshots(got, want) {
		t.Errorf("Decode(reference file) =\n%s\nwant (graph.json)\n%s", showSnapshot(got), showSnapshot(want))
	}
	// Rewriting the reference's file changes nothing but the final newline.
	if got, want := encode(nil, f.Graph, f.Unreadable), append(data, '\n'); !bytes.Equal(got, want) {
		t.Errorf("encode(Decode(reference file)) differs from it\n%s", lineDiff(got, want))
	}
}

// lineDiff describes the first line where got and want differ.
func lineDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return "line " + itoa(i+1) + ":\n got " + string(gl) + "\nwant " + string(wl)
		}
	}
	return "(same lines)"
}
