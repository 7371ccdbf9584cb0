package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// BenchmarkStanding times what standing facts add to each search answer,
// the scan of every observation for the markers, beside the search of a
// rare word it is added to, over stdio with the default limit:
//
//	go test ./internal/server -run XXX -bench Standing -benchtime 50x
func BenchmarkStanding(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			s, q, _ := serverOnGraph(b, n, 60000)
			b.Run("note", func(b *testing.B) {
				for b.Loop() {
					if err := s.store.View(context.Background(), func(g *graph.Graph) error { standingNote(standingFacts(g), maxStandingNote); return nil }); err != nil {
						b.Fatal(err)
					}
				}
			})
			send, read := stdioSession(b, s)
			b.Run("search_rare", func(b *testing.B) {
				for b.Loop() {
					send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_nodes","arguments":{"query":"` + q.Rare + `"}}}`)
					read()
				}
			})
		})
	}
}
