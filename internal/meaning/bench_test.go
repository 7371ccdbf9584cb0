package meaning

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
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
