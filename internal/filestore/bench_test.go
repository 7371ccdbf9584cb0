package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// BenchmarkSave is one add_observations through the whole write path at
// several sizes: lock, change check, mutation, streaming save with fsync and
// rename, release. Bytes per op are the file's size.
func BenchmarkSave(b *testing.B) { benchmarkSave(b, false, false) }

// BenchmarkSaveTimed is BenchmarkSave on a file whose every line holds
// times, as a memory this server wrote all along does, each write
// recording its time.
func BenchmarkSaveTimed(b *testing.B) { benchmarkSave(b, true, false) }

// BenchmarkJournaled is BenchmarkSaveTimed as the server writes: each
// write appends its record to the journal, and compaction (which moves the
// records to the history) runs in the background when the journal passes
// its thresholds.
func BenchmarkJournaled(b *testing.B) { benchmarkSave(b, true, true) }

func benchmarkSave(b *testing.B, timed, journal bool) {
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
			if timed {
				stampAll(b, path)
			}
			s := Open(path, Options{Logf: b.Logf, Journal: journal})
			b.Cleanup(func() { s.Close() })
			name := tg.Entities[n/2].Name
			if err := s.View(context.Background(), func(*graph.Graph) error { return nil }); err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(path)
			b.SetBytes(fi.Size())
			i := 0
			for b.Loop() {
				i++
				_, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
					_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{fmt.Sprint("benchmark observation ", i)}}})
					return err
				}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// stampAll rewrites the memory file with times on every line.
func stampAll(b *testing.B, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	f := jsonl.Decode(data)
	at := graph.TimeOf(time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC))
	for _, e := range f.Graph.Entities() {
		e.Created, e.Updated = at, at
		e.ObservedAt = make([]graph.Time, len(e.Observations))
		for i := range e.ObservedAt {
			e.ObservedAt[i] = at
		}
		e.SetEncodedLine(nil)
	}
	for _, r := range f.Graph.Relations() {
		r.Created = at
	}
	var out bytes.Buffer
	if err := jsonl.Write(&out, f.Graph, f.Unreadable); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
}
