package meaning

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// BenchmarkIndexMemory reports the heap an Index holds per text at 768
// dimensions (one text per entity: an entity with one observation), the
// figure docs/embeddings.md multiplies out:
//
//	go test -run '^$' -bench IndexMemory ./internal/meaning
func BenchmarkIndexMemory(b *testing.B) {
	const n, dims = 100_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, dims)
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix := &Index{vectors: make(map[key]vector), entities: make(map[string][]key)}
		for i := range n {
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			name := "entity " + strconv.Itoa(i)
			k := keyOf("m", name)
			ix.vectors[k] = quantise(v)
			ix.entities[name] = []key{k}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/text")
		runtime.KeepAlive(ix)
	}
}

// benchIndex is an index whose every text of a memory of n entities of
// five observations each has a vector (of 8 dimensions: the pass does not
// read them), after its first pass, and the memory.
func benchIndex(b *testing.B, n int) (*Index, *memStore) {
	b.Helper()
	ents := make([]graph.Entity, n)
	for i := range ents {
		ents[i] = graph.Entity{Name: "entity " + strconv.Itoa(i), EntityType: "thing"}
		for j := range 5 {
			ents[i].Observations = append(ents[i].Observations, "observation "+strconv.Itoa(j)+" of entity "+strconv.Itoa(i))
		}
	}
	store := &memStore{g: graph.New()}
	store.g.CreateEntities(ents)
	ix := OpenStorage(FileStorage(filepath.Join(b.TempDir(), "v")), NewClient("http://127.0.0.1:1", "m", ""), Options{})
	v := quantise([]float32{1, 2, 3, 4, 5, 6, 7, 8})
	store.View(context.Background(), func(g *graph.Graph) error {
		for _, e := range g.Entities() {
			for _, t := range texts(e) {
				ix.vectors[keyOf("m", t)] = v
			}
		}
		return nil
	})
	ix.vectors[keyOf("m", "entity 0 (thing): again")] = v
	if err := ix.pass(context.Background(), store); err != nil {
		b.Fatal(err)
	}
	return ix, store
}

// BenchmarkPassAfterAWrite is the background pass after a write that
// changed one entity, in a memory whose every text has its vector
// (10,000 and 100,000 entities of five observations):
//
//	go test -run '^$' -bench PassAfterAWrite -benchmem ./internal/meaning
func BenchmarkPassAfterAWrite(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ix, store := benchIndex(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				store.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
					if i%2 == 0 {
						_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "entity 0", Contents: []string{"again"}}})
						return err
					}
					g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "entity 0", Observations: []string{"again"}}})
					return nil
				}})
				b.StartTimer()
				if err := ix.pass(ctx, store); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPassWhole is the background pass when the memory was read again
// whole from its storage (another graph), which it looks at whole, in the
// memories of BenchmarkPassAfterAWrite:
//
//	go test -run '^$' -bench PassWhole -benchmem ./internal/meaning
func BenchmarkPassWhole(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ix, store := benchIndex(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ix.graph = 0 // as if the store held another graph
				if err := ix.pass(context.Background(), store); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNearest is the part of a search by meaning that compares the
// query's vector with every text's, at 100,000 texts of 768 dimensions
// (100,000 entities of one observation):
//
//	go test -run '^$' -bench Nearest -benchmem ./internal/meaning
func BenchmarkNearest(b *testing.B) {
	const n, dims = 100_000, 768
	r := rand.New(rand.NewPCG(1, 2))
	random := func() vector {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		return quantise(v)
	}
	g := graph.New()
	ix := &Index{vectors: make(map[key]vector), entities: make(map[string][]key)}
	for i := range n {
		name := "entity " + strconv.Itoa(i)
		g.CreateEntities([]graph.Entity{{Name: name, EntityType: "thing", Observations: []string{"o"}}})
		k := keyOf("m", name)
		ix.vectors[k] = random()
		ix.entities[name] = []key{k}
	}
	q := Query{random()}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if ns, _ := ix.nearest(g, q, nil); len(ns) != fuseDepth {
			b.Fatalf("%d nearest", len(ns))
		}
	}
}
