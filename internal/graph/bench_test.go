package graph_test

import (
	"bytes"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// benchGraph loads a generated graph of n entities the way the server does.
func benchGraph(b *testing.B, n int) (*graph.Graph, testgraph.Queries) {
	b.Helper()
	tg, q := testgraph.Generate(n, 1)
	var buf bytes.Buffer
	if err := tg.WriteJSONL(&buf); err != nil {
		b.Fatal(err)
	}
	return jsonl.Decode(buf.Bytes()).Graph, q
}

func BenchmarkSearch(b *testing.B) {
	g, q := benchGraph(b, 100_000)
	g.Search(q.Rare) // build the index outside the timings
	for _, c := range []struct{ name, query string }{
		{"rare", q.Rare},
		{"common", q.Common},
		{"two-words", q.TwoWords},
		{"japanese", q.Japanese},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				g.Search(c.query)
			}
		})
	}
}

// BenchmarkSearchIndexBuild is the first search after a load.
func BenchmarkSearchIndexBuild(b *testing.B) {
	tg, q := testgraph.Generate(100_000, 1)
	var buf bytes.Buffer
	tg.WriteJSONL(&buf)
	data := buf.Bytes()
	for b.Loop() {
		b.StopTimer()
		g := jsonl.Decode(bytes.Clone(data)).Graph
		b.StartTimer()
		g.Search(q.Rare)
	}
}

func BenchmarkOpen(b *testing.B) {
	g, _ := benchGraph(b, 100_000)
	names := []string{g.Entities()[10].Name, g.Entities()[50_000].Name, g.Entities()[99_999].Name}
	for b.Loop() {
		g.Open(names)
	}
}
