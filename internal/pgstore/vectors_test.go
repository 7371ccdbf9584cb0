package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// runIndex runs search by meaning on s's vectors through stub's model m
// until t ends.
func runIndex(t *testing.T, s *pgstore.Store, stub *meaningtest.Server) *meaning.Index {
	t.Helper()
	ix := meaning.OpenStorage(s.Vectors(), meaning.NewClient(stub.BaseURL(), "m", ""), meaning.Options{Settle: time.Millisecond, BatchSize: 2, Logf: t.Logf})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ix.Run(ctx, s); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ix
}

// waitReady waits until ix has a vector for each of want texts.
func waitReady(t *testing.T, ix *meaning.Index, want int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		ready, have, texts := ix.Status()
		if ready && have == want && texts == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("vectors: ready %t, %d of %d, want %d", ready, have, texts, want)
		}
	}
}

func addPeople(t *testing.T, s *pgstore.Store, from, to int) {
	t.Helper()
	var ents []graph.Entity
	for i := from; i < to; i++ {
		ents = append(ents, graph.Entity{Name: fmt.Sprintf("person %d", i), EntityType: "person", Observations: []string{fmt.Sprintf("likes number %d", i)}})
	}
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { g.CreateEntities(ents); return nil }}); err != nil {
		t.Fatal(err)
	}
}

// TestVectorsShared: replicas of a memory share its vectors. A replica
// started after another embedded the memory asks the endpoint for none of
// it; two running replicas told of a write at once embed each new text
// once between them.
func TestVectorsShared(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	open := openMemory(t)
	a, b := open(t), open(t)
	addPeople(t, a, 0, 5)
	ixA := runIndex(t, a, stub)
	waitReady(t, ixA, 5)
	sent := len(stub.Texts("m"))
	ixB := runIndex(t, b, stub)
	waitReady(t, ixB, 5)
	if n := len(stub.Texts("m")) - sent; n != 0 {
		t.Errorf("replica B embedded %d texts replica A had", n)
	}
	// Each batch takes a while, so that the two replicas' passes overlap.
	stub.SetDelay(30 * time.Millisecond)
	addPeople(t, a, 5, 25)
	ixA.Changed()
	ixB.Changed()
	waitReady(t, ixA, 25)
	waitReady(t, ixB, 25)
	seen := map[string]int{}
	for _, text := range stub.Texts("m") {
		seen[text]++
	}
	if len(seen) != 25 {
		t.Errorf("%d texts embedded, want 25", len(seen))
	}
	for text, n := range seen {
		if n != 1 {
			t.Errorf("%q embedded %d times", text, n)
		}
	}
}

// TestVectorsCompact: compaction drops the vectors of other models and
// those not kept, and leaves the others, which a replica then loads.
func TestVectorsCompact(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	addPeople(t, a, 0, 1) // the memory's row
	rec := func(i byte) meaning.Record {
		return meaning.Record{Key: meaning.Key{i}, Scale: 0.5, Values: []int8{int8(i), -1}}
	}
	va, vb := a.Vectors(), b.Vectors()
	appendAll := func(st meaning.Storage, model string, recs ...meaning.Record) {
		t.Helper()
		err := st.Exclusive(ctx, func() error {
			if _, err := st.Load(ctx, model); err != nil {
				return err
			}
			return st.Append(ctx, model, recs)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	appendAll(va, "m", rec(1), rec(2), rec(3))
	appendAll(va, "old", rec(4))
	if got, err := vb.Load(ctx, "m"); err != nil || len(got) != 3 || got[1].Key != rec(2).Key || got[1].Values[0] != 2 || got[1].Scale != 0.5 {
		t.Fatalf("replica B loaded %v (%v), want the three vectors of m", got, err)
	}
	if got, err := vb.Load(ctx, "m"); err != nil || len(got) != 0 {
		t.Fatalf("loading again gave %v (%v), want nothing new", got, err)
	}
	if err := vb.Exclusive(ctx, func() error { return vb.Compact(ctx, "m", []meaning.Record{rec(2)}) }); err != nil {
		t.Fatal(err)
	}
	appendAll(va, "m", rec(5))
	fresh := open(t).Vectors()
	got, err := fresh.Load(ctx, "m")
	if err != nil || len(got) != 2 || got[0].Key != rec(2).Key || got[1].Key != rec(5).Key {
		t.Errorf("after compaction a replica loads %v (%v), want vectors 2 and 5", got, err)
	}
	var old int
	if err := admin(t).QueryRow(ctx, "SELECT count(*) FROM memory_vectors WHERE model = 'old' AND memory_id = (SELECT id FROM memories WHERE name = $1)", a.Name()).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d vectors of another model left (%v)", old, err)
	}
}

// TestVectorsOfAMemoryNobodyWrote: search by meaning on a memory nobody
// wrote reads it as empty and creates no row.
func TestVectorsOfAMemoryNobodyWrote(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	db, err := pgstore.Connect(ctx, pgtest.URL(t), pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := pgtest.MemoryName(t)
	s, err := db.Memory(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, runIndex(t, s, stub), 0)
	var rows int
	if err := admin(t).QueryRow(ctx, "SELECT (SELECT count(*) FROM memories WHERE name = $1) + (SELECT count(*) FROM memory_vectors v JOIN memories m ON m.id = v.memory_id WHERE m.name = $1)", name).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d rows (%v), want none", rows, err)
	}
}

// BenchmarkVectorsLoad is what a replica reads when a memory opens: n
// vectors of 768 dimensions, one Load (docs/embeddings.md):
//
//	go test -run '^$' -bench VectorsLoad -benchtime 3x ./internal/pgstore
func BenchmarkVectorsLoad(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			url, name := pgtest.URL(b), pgtest.MemoryName(b)
			s, err := pgstore.Open(ctx, url, name, pgstore.Options{Logf: b.Logf})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			st := s.Vectors()
			batch := make([]meaning.Record, 0, 1000)
			for i := range n {
				r := meaning.Record{Key: meaning.KeyOf("m", fmt.Sprint(i)), Scale: 0.01, Values: make([]int8, 768)}
				for j := range r.Values {
					r.Values[j] = int8(i + j)
				}
				batch = append(batch, r)
				if len(batch) == cap(batch) || i == n-1 {
					if err := st.Append(ctx, "m", batch); err != nil {
						b.Fatal(err)
					}
					batch = batch[:0]
				}
			}
			b.ResetTimer()
			for range b.N {
				got, err := s.Vectors().Load(ctx, "m")
				if err != nil || len(got) != n {
					b.Fatalf("loaded %d vectors (%v), want %d", len(got), err, n)
				}
			}
		})
	}
}
