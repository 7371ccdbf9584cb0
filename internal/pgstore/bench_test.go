package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

var benchSizes = []int{1_000, 10_000, 100_000}

// benchMemory imports a generated graph of n entities into a new memory
// and returns two stores on it and an entity's name.
func benchMemory(b *testing.B, n int) (a, other *pgstore.Store, name string) {
	url, mem := pgtest.URL(b), pgtest.MemoryName(b)
	a, other = pgtest.Open(b, url, mem, pgstore.Options{}), pgtest.Open(b, url, mem, pgstore.Options{})
	tg, size := importGenerated(b, a, n)
	for _, s := range []*pgstore.Store{a, other} {
		if err := s.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(size))
	return a, other, tg.Entities[n/2].Name
}

func addObservation(b *testing.B, s *pgstore.Store, name string, i int) {
	_, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{fmt.Sprint("benchmark observation ", i)}}})
		return err
	}})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUpdate is one add_observations through the whole write path,
// as filestore's BenchmarkSave measures it: lock the memory's row, check
// the revision, mutate, find and write the one changed line, commit.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _, name := benchMemory(b, n)
			i := 0
			for b.Loop() {
				i++
				addObservation(b, s, name, i)
			}
		})
	}
}

// BenchmarkDelete deletes an entity a write, from the middle of the
// memory on, with the relations to and from it.
func BenchmarkDelete(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _, _ := benchMemory(b, n)
			var names []string
			if err := s.View(ctx, func(g *graph.Graph) error {
				for _, e := range g.Entities()[n/2:] {
					names = append(names, e.Name)
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if i == len(names) {
					b.Fatal("no entity left to delete")
				}
				name := names[i]
				i++
				if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
					g.DeleteEntities([]string{name})
					return nil
				}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpdateReplicas alternates the writes between two stores, as two
// replicas behind a load balancer would: each write first catches up with
// the other replica's.
func BenchmarkUpdateReplicas(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, other, name := benchMemory(b, n)
			stores := [2]*pgstore.Store{s, other}
			i := 0
			for b.Loop() {
				i++
				addObservation(b, stores[i%2], name, i)
			}
		})
	}
}

// BenchmarkView is a read of an unchanged memory: the revision check and
// the cached graph.
func BenchmarkView(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _, name := benchMemory(b, n)
			for b.Loop() {
				if err := s.View(context.Background(), func(g *graph.Graph) error {
					if g.Entity(name) == nil {
						b.Fatal("entity missing")
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkViewAfterOtherWrite is a read after another replica wrote: it
// catches up with that write (the other replica's write is not timed).
func BenchmarkViewAfterOtherWrite(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, other, name := benchMemory(b, n)
			i := 0
			for b.Loop() {
				b.StopTimer()
				i++
				addObservation(b, other, name, i)
				b.StartTimer()
				if err := s.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFirstView is a new Store's first read: the whole memory, as a
// replica reads it at start or after falling far behind.
func BenchmarkFirstView(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _, _ := benchMemory(b, n)
			db, err := pgstore.Connect(ctx, pgtest.URL(b), pgstore.Options{Logf: b.Logf})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for b.Loop() {
				fresh, err := db.Memory(ctx, s.Name())
				if err != nil {
					b.Fatal(err)
				}
				if err := fresh.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRename renames the entity in the middle of the graph order (and
// back, turn by turn) and lets the other store catch up: a rename writes
// again every row after the entity, which the other store then reads whole
// (see the package's caveats).
func BenchmarkRename(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a, other, name := benchMemory(b, n)
			from, to := name, name+" (renamed)"
			for b.Loop() {
				if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { _, err := g.Rename(from, to); return err }}); err != nil {
					b.Fatal(err)
				}
				if err := other.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
					b.Fatal(err)
				}
				from, to = to, from
			}
		})
	}
}
