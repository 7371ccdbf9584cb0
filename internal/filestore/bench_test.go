package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// BenchmarkSave is one add_observations through the whole write path at
// several sizes: lock, change check, mutation, streaming save with fsync and
// rename, release. Bytes per op are the file's size.
func BenchmarkSave(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "memory.jsonl")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			tg, _ := testgraph.Generate(n, 1)
			if err := tg.WriteJSONL(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
			s := Open(path, Options{Logf: b.Logf})
			name := tg.Entities[n/2].Name
			if err := s.View(func(*graph.Graph) {}); err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			i := 0
			for b.Loop() {
				i++
				_, err := s.Update(context.Background(), func(g *graph.Graph) error {
					_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{fmt.Sprint("benchmark observation ", i)}}})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
