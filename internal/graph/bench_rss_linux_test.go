package graph_test

import (
	"encoding/json"
	"syscall"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// BenchmarkPeakRSS loads a generated graph of 100k entities as the server
// does, runs the workload's four searches with Search (search_nodes today)
// or SearchRanked, encodes the whole graph once as read_graph would, and
// reports the process's peak RSS. The peak only grows, so run each
// sub-benchmark in a process of its own and compare:
//
//	go test ./internal/graph -run XXX -bench 'PeakRSS/search$' -benchtime 1x
//	go test ./internal/graph -run XXX -bench 'PeakRSS/ranked$' -benchtime 1x
func BenchmarkPeakRSS(b *testing.B) {
	for _, c := range []struct {
		name   string
		search func(g *graph.Graph, q string)
	}{
		{"search", func(g *graph.Graph, q string) { g.Search(q) }},
		{"ranked", func(g *graph.Graph, q string) { g.SearchRanked(q, 0) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, q := benchGraph(b, 100_000)
			for b.Loop() {
				for _, query := range []string{q.Rare, q.Common, q.TwoWords, q.Japanese} {
					c.search(g, query)
				}
				if _, err := json.MarshalIndent(g.All().Snapshot(), "", "  "); err != nil {
					b.Fatal(err)
				}
			}
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB") // Linux reports kB
		})
	}
}
