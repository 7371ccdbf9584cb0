package history

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// writeSpread writes a history file of about size bytes at path whose
// records are spread evenly over the days days before now, oldest first,
// as the appenders write them, and returns how many it wrote.
func writeSpread(tb testing.TB, path string, size int64, days int, now time.Time) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	obs := []string{"Prefers short answers with the code first", "Works on the billing service", "Moved to Oslo in 2024"}
	sample := graph.Record{ID: graph.NewID(now, ""), Time: now, Tool: "create_entities", Client: "Claude Desktop",
		Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: "Entity 000000", EntityType: "person", Observations: obs, Created: graph.TimeOf(now), Updated: graph.TimeOf(now)}}}}
	n := int(size / int64(len(graph.AppendRecord(nil, &sample))))
	start, step := now.Add(-time.Duration(days)*24*time.Hour), time.Duration(days)*24*time.Hour/time.Duration(n)
	last := ""
	var line []byte
	for i := range n {
		t := start.Add(time.Duration(i) * step)
		r := sample
		r.ID, r.Time = graph.NewID(t, last), t.UTC().Truncate(time.Second)
		r.Changes = []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: fmt.Sprintf("Entity %06d", i), EntityType: "person", Observations: obs, Created: graph.TimeOf(t), Updated: graph.TimeOf(t)}}}
		last = r.ID
		line = graph.AppendRecord(line[:0], &r)
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkRead30Days reads the last 30 days of a history file of 50 MB
// (the default bound) spread over 90 days (the default age): what the
// page's home view and stats read for the writes per day.
func BenchmarkRead30Days(b *testing.B) {
	now := time.Now()
	path := filepath.Join(b.TempDir(), "m.jsonl"+Suffix)
	n := writeSpread(b, path, 50<<20, 90, now)
	since := now.Add(-30 * 24 * time.Hour)
	b.ResetTimer()
	for b.Loop() {
		recs, _, err := ReadFile(path, Filter{Since: since})
		if err != nil || len(recs) < n/3-1 || len(recs) > n/3+1 {
			b.Fatalf("%d of %d records, %v", len(recs), n, err)
		}
	}
}

// BenchmarkReadNewest51 reads the newest 51 records of the same file: what
// the page's entity history asks for (its 50 and one to tell there are
// more); BenchmarkReadWhole reads it whole, as every read did before.
func BenchmarkReadNewest51(b *testing.B) { benchRead(b, Filter{Limit: 51}, 51) }

func BenchmarkReadWhole(b *testing.B) { benchRead(b, Filter{}, 0) }

func benchRead(b *testing.B, f Filter, want int) {
	path := filepath.Join(b.TempDir(), "m.jsonl"+Suffix)
	n := writeSpread(b, path, 50<<20, 90, time.Now())
	if want == 0 {
		want = n
	}
	b.ResetTimer()
	for b.Loop() {
		if recs, _, err := ReadFile(path, f); err != nil || len(recs) != want {
			b.Fatalf("%d records, %v", len(recs), err)
		}
	}
}

// BenchmarkRead30DaysHeaders counts the writes of the last 30 days of the
// same file, as the page's home view and stats do (headers only).
func BenchmarkRead30DaysHeaders(b *testing.B) {
	now := time.Now()
	path := filepath.Join(b.TempDir(), "m.jsonl"+Suffix)
	n := writeSpread(b, path, 50<<20, 90, now)
	f := Filter{Since: now.Add(-30 * 24 * time.Hour), Headers: true}
	b.ResetTimer()
	for b.Loop() {
		if recs, _, err := ReadFile(path, f); err != nil || len(recs) < n/3-1 || len(recs) > n/3+1 {
			b.Fatalf("%d of %d records, %v", len(recs), n, err)
		}
	}
}

// BenchmarkAppendBigRecord appends one 40 MB record (a mass deletion of
// 100,000 entities) to an empty history, as a compaction moves it: the
// check that it is a whole record (isRecordLine) beside the whole append.
func BenchmarkAppendBigRecord(b *testing.B) {
	now := time.Now()
	r := graph.Record{ID: graph.NewID(now, ""), Time: now, Tool: "delete_entities"}
	for i := range 100000 {
		r.Changes = append(r.Changes, graph.Change{Kind: graph.EntityDeleted, Entity: graph.Entity{Name: fmt.Sprintf("Entity %06d", i), EntityType: "person",
			Observations: []string{"Prefers short answers with the code first", "Works on the billing service", "Moved to Oslo in 2024", "Speaks four languages, Norwegian among them"}}})
	}
	line := graph.AppendRecord(nil, &r)
	b.Logf("record of %.1f MB", float64(len(line))/(1<<20))
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if !isRecordLine(line) {
				b.Fatal("not a record")
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		path := filepath.Join(b.TempDir(), "m.jsonl"+Suffix)
		for b.Loop() {
			os.Remove(path)
			if err := AppendLines(path, [][]byte{line}, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	})
}
