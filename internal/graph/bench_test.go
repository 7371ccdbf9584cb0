package graph_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// benchGraph loads a generated graph of n entities the way the server does.
func benchGraph(b testing.TB, n int) (*graph.Graph, testgraph.Queries) {
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

// BenchmarkSearchRanked is a ranked search on generated graphs of 10k and
// 100k entities, the word index built beforehand. The questions share no
// whole-query match with the graph, so every hit is ranked.
func BenchmarkSearchRanked(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		g, q := benchGraph(b, n)
		g.SearchRanked(q.Rare, 0) // build the indexes outside the timings
		for _, c := range []struct{ name, query string }{
			{"rare", "Which specimen of " + q.Rare + " is in the collection?"},
			{"common", "Who works on machine learning?"},
			{"japanese", "東京で働いている人は?"},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, c.name), func(b *testing.B) {
				for b.Loop() {
					g.SearchRanked(c.query, 0)
				}
			})
		}
	}
}

// BenchmarkWordIndexBuild is the first ranked search after a load at 100k
// entities (the trigram index already built). It reports the heap the word
// index keeps (heap-MB), measured after a collection on both sides.
func BenchmarkWordIndexBuild(b *testing.B) {
	tg, q := testgraph.Generate(100_000, 1)
	var buf bytes.Buffer
	tg.WriteJSONL(&buf)
	data := buf.Bytes()
	var heap float64
	for b.Loop() {
		b.StopTimer()
		g := jsonl.Decode(bytes.Clone(data)).Graph
		g.Search(q.Rare)
		before := heapInUse()
		b.StartTimer()
		g.SearchRanked(q.Rare, 0)
		b.StopTimer()
		heap = float64(heapInUse()-before) / (1 << 20)
		runtime.KeepAlive(g)
		b.StartTimer()
	}
	b.ReportMetric(heap, "heap-MB")
}

// BenchmarkTrigramIndexHeap reports, for comparison, the heap the trigram
// index (SearchNodes) keeps at 100k entities.
func BenchmarkTrigramIndexHeap(b *testing.B) {
	tg, q := testgraph.Generate(100_000, 1)
	var buf bytes.Buffer
	tg.WriteJSONL(&buf)
	data := buf.Bytes()
	var heap float64
	for b.Loop() {
		b.StopTimer()
		g := jsonl.Decode(bytes.Clone(data)).Graph
		before := heapInUse()
		b.StartTimer()
		g.Search(q.Rare)
		b.StopTimer()
		heap = float64(heapInUse()-before) / (1 << 20)
		runtime.KeepAlive(g)
		b.StartTimer()
	}
	b.ReportMetric(heap, "heap-MB")
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkMatched orders the observations of every hit of a search that
// matches thousands of entities at 10k, as a whole answer shows them
// (Hit.Observations).
func BenchmarkMatched(b *testing.B) {
	g, q := benchGraph(b, 10_000)
	r := g.SearchRanked(q.Common, 0)
	b.ReportMetric(float64(len(r.Hits)), "hits")
	for b.Loop() {
		for _, h := range r.Hits {
			h.Observations()
		}
	}
}
