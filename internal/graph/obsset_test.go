package graph

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestObsTable adds and drops observations of one long entity at random
// and checks after each change that the table finds exactly the entity's
// observations.
func TestObsTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	e := &Entity{}
	text := func() string { return fmt.Sprint("fact ", rng.IntN(400)) }
	for step := range 3000 {
		if rng.IntN(4) == 0 && len(e.Observations) > 0 {
			drop := map[string]bool{}
			for range 1 + rng.IntN(5) {
				drop[e.Observations[rng.IntN(len(e.Observations))]] = true
			}
			e.dropObservations(drop)
		} else {
			o := text()
			if added := e.addObservation(o, 0); added == slices.Contains(e.Observations[:len(e.Observations)-boolInt(added)], o) {
				t.Fatalf("step %d: addObservation(%q) = %v with %q", step, o, added, e.Observations)
			}
		}
		if len(e.Observations) > obsIndexThreshold && e.obsSet == nil {
			t.Fatalf("step %d: %d observations and no table", step, len(e.Observations))
		}
		for range 5 {
			o := text()
			if got, want := e.hasObservation(o), slices.Contains(e.Observations, o); got != want {
				t.Fatalf("step %d: hasObservation(%q) = %v, want %v", step, o, got, want)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkLongEntityHeap reports the heap an entity of 100,000
// observations holds beyond their texts and the list of them: the table
// that finds an observation by its text.
func BenchmarkLongEntityHeap(b *testing.B) {
	obs := make([]string, 100_000)
	for i := range obs {
		obs[i] = fmt.Sprint("observation number ", i)
	}
	var perObs float64
	for b.Loop() {
		e := &Entity{Observations: make([]string, 0, len(obs))}
		before := heapNow()
		for _, o := range obs {
			e.addObservation(o, 0)
		}
		perObs = float64(heapNow()-before) / float64(len(obs))
		runtime.KeepAlive(e)
		if len(e.Observations) != len(obs) {
			b.Fatal("lost observations")
		}
	}
	b.ReportMetric(perObs, "table-B/obs")
}

func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
