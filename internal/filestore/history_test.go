package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// contentOf is the memory's content, each entity's observations as a set:
// an undo puts back what a write removed, not always where it was.
func contentOf(g *graph.Graph) string {
	var lines []string
	for _, e := range g.Entities() {
		obs := slices.Clone(e.Observations)
		slices.Sort(obs)
		lines = append(lines, fmt.Sprintf("E %s %s %q", e.Name, e.EntityType, obs))
	}
	for _, r := range g.Relations() {
		lines = append(lines, fmt.Sprintf("R %s %s %s", r.From, r.RelationType, r.To))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestHistoryModel runs random writes, undos, compactions (some killed at
// each of their stages), restarts and trims through several Stores on one
// file, against a model of the history: the list of writes, each named by
// its own tool. After every step the history holds exactly the model's
// writes, newest first, each once; a trim keeps the newest ones within the
// bound; undoing the newest write gives back the memory as it was before
// it.
func TestHistoryModel(t *testing.T) {
	r := modelRand(t, 1)
	steps := 300
	if testing.Short() {
		steps = 100
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	stores := []*Store{journalStore(path), journalStore(path), quietStore(path)}
	var model []string // the writes' tools, oldest first
	before := ""       // the content before the newest write
	last := ""         // the content after it
	ctx := context.Background()
	for step := range steps {
		i := r.IntN(len(stores))
		s := stores[i]
		tool := fmt.Sprintf("w%d", step)
		what := r.IntN(100)
		switch {
		case what < 55: // a write
			var was string
			changed, err := s.Update(ctx, graph.Write{Tool: tool, Client: "model", Apply: func(g *graph.Graph) error {
				was = contentOf(g)
				randomWrite(r, g, modelOf(g))
				return nil
			}})
			if err != nil {
				t.Fatalf("step %d: write: %v", step, err)
			}
			if changed {
				model = append(model, tool)
				before = was
				s.View(context.Background(), func(g *graph.Graph) error { last = contentOf(g); return nil })
			}
		case what < 70: // undo the newest write, or one at random
			recs, err := s.History(history.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				continue
			}
			newest := r.IntN(2) == 0
			pick := recs[0]
			if !newest {
				pick = recs[r.IntN(len(recs))]
			}
			var now string
			changed, err := s.Update(ctx, graph.Write{Tool: tool, Client: "model", Apply: func(g *graph.Graph) error {
				if newest && contentOf(g) != last {
					t.Fatalf("step %d: the memory is not what the newest write left", step)
				}
				history.Undo(g, []graph.Record{pick})
				now = contentOf(g)
				return nil
			}})
			if err != nil {
				t.Fatalf("step %d: undo: %v", step, err)
			}
			if newest && now != before {
				t.Fatalf("step %d: undoing the newest write (%s) gives\n%s\nwant\n%s", step, pick.Tool, now, before)
			}
			if changed {
				model = append(model, tool)
				before, last = last, now
			}
		case what < 78: // a compaction
			if err := s.Compact(context.Background()); err != nil {
				t.Fatalf("step %d: compact: %v", step, err)
			}
		case what < 88: // a compaction killed at one of its stages
			if err := compactKilled(r, s); err != nil {
				t.Fatalf("step %d: compact: %v", step, err)
			}
			stores[i] = journalStore(path)
		case what < 94: // a trim to a small bound
			lim := history.Limits{MaxAge: time.Hour, MaxBytes: int64(2000 + r.IntN(4000))}
			trimmer := Open(path, Options{Logf: func(string, ...any) {}, History: &lim})
			if err := trimmer.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := trimmer.Update(context.Background(), graph.Write{Apply: func(*graph.Graph) error { return nil }}); err != nil {
				t.Fatal(err)
			}
			// The trim happens when a compaction moves records; make one.
			if _, err := trimmer.Update(ctx, graph.Write{Tool: tool, Client: "model", Apply: func(g *graph.Graph) error {
				g.CreateEntities([]graph.Entity{{Name: tool, EntityType: "trim"}})
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			model = append(model, tool)
			trimmer.View(context.Background(), func(g *graph.Graph) error { before, last = last, contentOf(g); return nil })
			fi, err := os.Stat(path + history.Suffix)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > lim.MaxBytes {
				t.Fatalf("step %d: the history is %d bytes after a trim to %d", step, fi.Size(), lim.MaxBytes)
			}
			recs, err := trimmer.History(history.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			kept := len(recs)
			if kept == 0 || kept > len(model) {
				t.Fatalf("step %d: %d records after a trim of %d", step, kept, len(model))
			}
			model = model[len(model)-kept:]
		default: // a restart
			stores[i] = journalStore(path)
		}
		recs, err := journalStore(path).History(history.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range recs {
			got = append(got, rec.Tool)
			if rec.Client != "model" {
				t.Fatalf("step %d: record %s has client %q", step, rec.ID, rec.Client)
			}
		}
		want := slices.Clone(model)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: the history holds\n%v\nwant\n%v", step, got, want)
		}
	}
}

// A history that cannot be written loses records, never a write: the
// write lands and the log says so once.
func TestUnwritableHistoryNeverBlocksAWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.Mkdir(path+history.Suffix, 0o700); err != nil { // not a file
		t.Fatal(err)
	}
	var logged []string
	s := Open(path, Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	for _, name := range []string{"A", "B"} {
		if err := create(s, name); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	if got := entityNames(t, quietStore(path)); fmt.Sprint(got) != "[A B]" {
		t.Errorf("the memory file holds %v", got)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "could not be written (the memory was saved") {
		t.Errorf("logged %q, want one line about the history", logged)
	}
}

// With no history kept, compaction moves nothing and removes the history.
func TestNoHistoryKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := create(quietStore(path), "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + history.Suffix); err != nil {
		t.Fatalf("no history after a write: %v", err)
	}
	off := Open(path, Options{Logf: func(string, ...any) {}, History: &history.Limits{}})
	if err := create(off, "B"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + history.Suffix); !os.IsNotExist(err) {
		t.Errorf("the history is still there with no history kept: %v", err)
	}
}
