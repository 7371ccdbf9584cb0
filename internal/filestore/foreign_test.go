package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// compactionStages are the stages of a compaction crashAt is called at.
var compactionStages = []string{"before writing", "before intent", "before rename", "before the history", "before retiring the journal", "after retiring the journal"}

// replaceAsForeign is a program that knows only the memory file (the
// reference, a person's editor): it reads the file, adds the entity name,
// and renames its new file over it.
func replaceAsForeign(t *testing.T, path, name string) {
	t.Helper()
	data, _ := os.ReadFile(path)
	f := jsonl.Decode(data)
	f.Graph.CreateEntities([]graph.Entity{{Name: name, EntityType: "foreign", Observations: []string{"x"}}})
	var b bytes.Buffer
	jsonl.Write(&b, f.Graph, f.Unreadable)
	tmp := path + ".foreign"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func createEntity(t *testing.T, s *Store, name string) {
	t.Helper()
	if _, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
}

// TestCompactionNeverTakesAForeignFileForItsOwn: another program renames
// its file over the memory file at each stage of a compaction. Its write
// is never lost, nor ours: the Store, a fresh reader and the file after
// the next compaction all hold both.
func TestCompactionNeverTakesAForeignFileForItsOwn(t *testing.T) {
	defer func() { crashAt = func(string) error { return nil } }()
	for _, stage := range compactionStages {
		t.Run(stage, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.jsonl")
			s := journalStore(path)
			createEntity(t, s, "Ours")
			replaced := false
			crashAt = func(at string) error {
				if at == stage && !replaced {
					replaced = true
					replaceAsForeign(t, path, "Theirs")
				}
				return nil
			}
			if err := s.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			crashAt = func(string) error { return nil }
			if !replaced {
				t.Skipf("no compaction stage %q", stage)
			}
			want := "[Ours Theirs]"
			if got := sortedNames(t, s); got != want {
				t.Errorf("the Store serves %s, want %s", got, want)
			}
			createEntity(t, s, "Later")
			if err := s.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			want = "[Later Ours Theirs]"
			if got := sortedNames(t, s); got != want {
				t.Errorf("after the next write the Store serves %s, want %s", got, want)
			}
			data, _ := os.ReadFile(path)
			if got := fmt.Sprint(namesOf(jsonl.Decode(data).Graph)); got != want {
				t.Errorf("after the next compaction the file holds %s, want %s", got, want)
			}
			if left, _ := filepath.Glob(path + ".*"); len(left) != 1 || left[0] != s.HistoryPath() {
				t.Errorf("files beside the memory file: %q, want its history alone", left)
			}
		})
	}
}

func namesOf(g *graph.Graph) []string {
	var names []string
	for _, e := range g.Entities() {
		names = append(names, e.Name)
	}
	slices.Sort(names)
	return names
}

func sortedNames(t *testing.T, s *Store) string {
	t.Helper()
	var names []string
	if err := s.View(context.Background(), func(g *graph.Graph) error { names = namesOf(g); return nil }); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(names)
}

// deleteAsForeign is a person who deletes the entity name from the memory
// file with an editor that saves by rename.
func deleteAsForeign(t *testing.T, path, name string) {
	t.Helper()
	data, _ := os.ReadFile(path)
	f := jsonl.Decode(data)
	f.Graph.DeleteEntities([]string{name})
	var b bytes.Buffer
	jsonl.Write(&b, f.Graph, f.Unreadable)
	os.WriteFile(path+".edit", b.Bytes(), 0o600)
	if err := os.Rename(path+".edit", path); err != nil {
		t.Fatal(err)
	}
}

// TestKilledCompactionThenAForeignEdit: a compaction killed after its
// rename left the journal, whose writes are in the file; a person then
// deletes one of them from the file. The next reader keeps the person's
// edit (the foreign file wins) and applies only what the file cannot hold:
// a write journaled after that compaction. Killed before its rename, the
// journal's writes were never in a file, so they apply to the person's
// file.
func TestKilledCompactionThenAForeignEdit(t *testing.T) {
	defer func() { crashAt = func(string) error { return nil } }()
	for stage, want := range map[string]string{
		"before the history":          "[B Later]",
		"before retiring the journal": "[B Later]",
		"before rename":               "[A B Later]",
	} {
		t.Run(stage, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.jsonl")
			s := journalStore(path)
			createEntity(t, s, "A")
			createEntity(t, s, "B")
			crashAt = func(at string) error {
				if at == stage {
					return errCrashHook
				}
				return nil
			}
			if err := s.Compact(context.Background()); !errors.Is(err, errCrashHook) {
				t.Fatalf("the compaction was not killed: %v", err)
			}
			crashAt = func(string) error { return nil }
			deleteAsForeign(t, path, "A")
			createEntity(t, journalStore(path), "Later")
			if got := sortedNames(t, journalStore(path)); got != want {
				t.Errorf("after the person's edit a reader sees %s, want %s", got, want)
			}
			if err := journalStore(path).Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			if got := fmt.Sprint(namesOf(jsonl.Decode(data).Graph)); got != want {
				t.Errorf("after the next compaction the file holds %s, want %s", got, want)
			}
		})
	}
}

// TestAKilledCompactionsTemporaryFileIsKeptWhileItsJournalIs: the
// temporary file a compaction killed before its rename left says its file
// never took the memory file's place. A later compaction that fails
// keeps it, however old, so a foreign file that then replaces the memory
// file still gets the journal's writes.
func TestAKilledCompactionsTemporaryFileIsKeptWhileItsJournalIs(t *testing.T) {
	defer func() { crashAt = func(string) error { return nil } }()
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := journalStore(path)
	createEntity(t, s, "A")
	crashAt = func(at string) error {
		if at == "before rename" {
			return errCrashHook
		}
		return nil
	}
	if err := s.Compact(context.Background()); !errors.Is(err, errCrashHook) {
		t.Fatalf("the compaction was not killed: %v", err)
	}
	temps, _ := filepath.Glob(path + ".*.tmp")
	if len(temps) != 1 {
		t.Fatalf("temporary files %q after the kill, want one", temps)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(temps[0], old, old)
	crashAt = func(at string) error {
		if at == "before intent" {
			return errors.New("a failure")
		}
		return nil
	}
	if err := journalStore(path).Compact(context.Background()); err == nil {
		t.Fatal("the compaction did not fail")
	}
	crashAt = func(string) error { return nil }
	if _, err := os.Stat(temps[0]); err != nil {
		t.Fatalf("the killed compaction's temporary file is gone: %v", err)
	}
	replaceAsForeign(t, path, "Theirs")
	if got := sortedNames(t, journalStore(path)); got != "[A Theirs]" {
		t.Errorf("after the foreign file a reader sees %s, want [A Theirs]", got)
	}
	if err := journalStore(path).Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(path + ".*.tmp"); len(left) != 0 {
		t.Errorf("temporary files %q left after the journal was folded in", left)
	}
}
