package filestore

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

var journalSeed = flag.Uint64("journal.seed", 0, "seed of TestJournalModel (0: time)")

// journalStore opens a Store that journals its writes and never compacts
// by itself, so a test decides when compaction happens.
func journalStore(path string) *Store {
	return Open(path, Options{
		Logf:        func(string, ...any) {},
		Lock:        LockOptions{Timeout: 5 * time.Second},
		Journal:     true,
		CompactIdle: time.Hour,
	})
}

// model is the memory as a map: what every reader must see.
type model struct {
	entities  map[string][]string // name: type, then observations
	relations map[[3]string]bool
}

func newModel() *model {
	return &model{entities: map[string][]string{}, relations: map[[3]string]bool{}}
}

func (m *model) String() string {
	var lines []string
	for n, e := range m.entities {
		lines = append(lines, fmt.Sprintf("E %s %q", n, e))
	}
	for r := range m.relations {
		lines = append(lines, fmt.Sprintf("R %q", r))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func modelOf(g *graph.Graph) *model {
	m := newModel()
	for _, e := range g.Entities() {
		m.entities[e.Name] = append([]string{e.EntityType}, e.Observations...)
	}
	for _, r := range g.Relations() {
		m.relations[[3]string{r.From, r.To, r.RelationType}] = true
	}
	return m
}

// fileBytes is the memory file a save of g would write: the exact state a
// reader serves, order included.
func fileBytes(t *testing.T, g *graph.Graph) string {
	t.Helper()
	var b bytes.Buffer
	if err := jsonl.Write(&b, g, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// randomWrite makes one write tool call on g and the same change on m.
func randomWrite(r *rand.Rand, g *graph.Graph, m *model) {
	name := func() string { return fmt.Sprintf("e%d", r.IntN(12)) }
	obs := func() string { return fmt.Sprintf("o%d", r.IntN(6)) }
	switch r.IntN(6) {
	case 0:
		var in []graph.Entity
		for range 1 + r.IntN(3) {
			in = append(in, graph.Entity{Name: name(), EntityType: "t", Observations: []string{obs(), obs()}})
		}
		g.CreateEntities(in)
		for _, e := range in {
			if _, ok := m.entities[e.Name]; ok {
				continue
			}
			v := []string{e.EntityType}
			for _, o := range e.Observations {
				if !slices.Contains(v[1:], o) {
					v = append(v, o)
				}
			}
			m.entities[e.Name] = v
		}
	case 1:
		n, o := name(), obs()
		if _, err := g.AddObservations([]graph.ObservationAddition{{EntityName: n, Contents: []string{o}}}); err != nil {
			return
		}
		if !slices.Contains(m.entities[n][1:], o) {
			m.entities[n] = append(m.entities[n], o)
		}
	case 2:
		n, o := name(), obs()
		g.DeleteObservations([]graph.ObservationDeletion{{EntityName: n, Observations: []string{o}}})
		if v, ok := m.entities[n]; ok {
			m.entities[n] = append(v[:1:1], slices.DeleteFunc(slices.Clone(v[1:]), func(x string) bool { return x == o })...)
		}
	case 3:
		n := name()
		g.DeleteEntities([]string{n})
		delete(m.entities, n)
		for k := range m.relations {
			if k[0] == n || k[1] == n {
				delete(m.relations, k)
			}
		}
	case 4:
		k := [3]string{name(), name(), fmt.Sprintf("r%d", r.IntN(2))}
		if _, err := g.CreateRelations([]graph.Relation{{From: k[0], To: k[1], RelationType: k[2]}}); err != nil {
			return
		}
		m.relations[k] = true
	case 5:
		k := [3]string{name(), name(), fmt.Sprintf("r%d", r.IntN(2))}
		g.DeleteRelations([]graph.Relation{{From: k[0], To: k[1], RelationType: k[2]}})
		delete(m.relations, k)
	}
}

var errCrash = errCrashHook

// compactKilled runs a compaction of s killed at one of its stages,
// chosen by r, and returns an error other than the kill.
func compactKilled(r *rand.Rand, s *Store) error {
	stages := []string{"before intent", "before rename", "before the history", "before retiring the journal"}
	stage := stages[r.IntN(len(stages))]
	crashAt = func(at string) error {
		if at == stage {
			return errCrash
		}
		return nil
	}
	defer func() { crashAt = func(string) error { return nil } }()
	if err := s.Compact(context.Background()); !errors.Is(err, errCrash) {
		return err
	}
	return nil
}

// modelRand returns the random source of a model test, seeded by
// -journal.seed (or the time, logged), and puts crashAt back when the test
// ends.
func modelRand(t *testing.T, stream uint64) *rand.Rand {
	seed := *journalSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("-journal.seed=%d", seed)
	t.Cleanup(func() { crashAt = func(string) error { return nil } })
	return rand.New(rand.NewPCG(seed, stream))
}

// TestJournalModel runs random writes through several Stores on one file
// (the processes sharing it), with compactions, restarts, processes killed
// mid-append and mid-compaction, and a foreign program replacing the file,
// and checks after every step that every Store, and a fresh one, sees
// exactly the model; and at the end that the memory file alone holds it.
func TestJournalModel(t *testing.T) {
	r := modelRand(t, 0)

	steps := 400
	if testing.Short() {
		steps = 100
	}
	for run := range 3 {
		path := filepath.Join(t.TempDir(), "memory.jsonl")
		m := newModel()
		stores := []*Store{journalStore(path), journalStore(path), journalStore(path)}
		for step := range steps {
			s := stores[r.IntN(len(stores))]
			what := r.IntN(100)
			switch {
			case what < 70: // a write
				var next *model
				_, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
					next = modelOf(g)
					randomWrite(r, g, next)
					return nil
				}})
				if err != nil {
					t.Fatalf("run %d step %d: write: %v", run, step, err)
				}
				m = next
			case what < 78: // a compaction
				if err := s.Compact(context.Background()); err != nil {
					t.Fatalf("run %d step %d: compact: %v", run, step, err)
				}
			case what < 86: // a compaction killed at one of its stages
				if err := compactKilled(r, s); err != nil {
					t.Fatalf("run %d step %d: compact: %v", run, step, err)
				}
				stores[slices.Index(stores, s)] = journalStore(path)
			case what < 90: // a process killed mid-append: a torn line
				if j, err := s.statJournal(); err == nil && j.exists() {
					f, err := os.OpenFile(path+journalSuffix, os.O_WRONLY|os.O_APPEND, 0)
					if err != nil {
						t.Fatal(err)
					}
					f.WriteString(`{"time":"2026-12-01T00:00:00Z","changes":[{"op":"createEnt`)
					f.Close()
				}
				stores[slices.Index(stores, s)] = journalStore(path)
			case what < 95: // a restart
				stores[slices.Index(stores, s)] = journalStore(path)
			default: // a program that knows only the file adds an entity to it
				data, _ := os.ReadFile(path)
				f := jsonl.Decode(data)
				n := fmt.Sprintf("foreign%d", step)
				f.Graph.CreateEntities([]graph.Entity{{Name: n, EntityType: "f", Observations: []string{"x"}}})
				var b bytes.Buffer
				jsonl.Write(&b, f.Graph, f.Unreadable)
				if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				m.entities[n] = []string{"f", "x"}
			}
			want := m.String()
			fresh := journalStore(path)
			var wantBytes string
			fresh.View(context.Background(), func(g *graph.Graph) error {
				if got := modelOf(g).String(); got != want {
					t.Fatalf("run %d step %d: a fresh reader sees\n%s\nwant\n%s", run, step, got, want)
				}
				wantBytes = fileBytes(t, g)
				return nil
			})
			for i, s := range stores {
				if err := s.View(context.Background(), func(g *graph.Graph) error {
					if got := fileBytes(t, g); got != wantBytes {
						t.Fatalf("run %d step %d: store %d sees\n%s\nwant\n%s", run, step, i, got, wantBytes)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := stores[0].Compact(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + journalSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("run %d: the journal is still there after a compaction: %v", run, err)
		}
		data, _ := os.ReadFile(path)
		if got := modelOf(jsonl.Decode(data).Graph).String(); got != m.String() {
			t.Fatalf("run %d: the memory file alone holds\n%s\nwant\n%s", run, got, m.String())
		}
	}
}

// waitFor polls cond for up to 30 s (compactions run in the background)
// and reports whether it came true.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A journaled write leaves the memory file as it was and is seen by every
// reader; Close folds it into the file and removes the journal.
func TestJournaledWriteIsReadAndCompactedAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	before := `{"type":"entity","name":"A","entityType":"t","observations":[],"color":"blue"}` + "\n" + "not json\n"
	os.WriteFile(path, []byte(before), 0o644)
	s := journalStore(path)
	if _, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.SetNow(0) // a write at an unknown time: the file below holds no times
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "A", Contents: []string{"x"}}})
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != before {
		t.Errorf("a journaled write rewrote the file:\n%s", data)
	}
	if !exists(path + journalSuffix) {
		t.Fatal("no journal after a journaled write")
	}
	if got := entityNames(t, journalStore(path)); !slices.Equal(got, []string{"A"}) {
		t.Errorf("another reader sees %v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"entity","name":"A","entityType":"t","observations":["x"],"color":"blue"}` + "\n" + "not json\n"
	if data, _ := os.ReadFile(path); string(data) != want {
		t.Errorf("after Close the file holds\n%s\nwant\n%s", data, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode after compaction: %v", fi.Mode().Perm())
	}
	if exists(path + journalSuffix) {
		t.Error("the journal is left after Close")
	}
}

// The journal carries the times each write recorded: another reader that
// catches up from it, and the file it is compacted into, hold them.
func TestJournalKeepsTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(path, []byte(`{"type":"entity","name":"Old","entityType":"t","observations":["o1"]}`+"\n"), 0o600)
	s := journalStore(path)
	at := func(sec int64, fn func(g *graph.Graph) error) {
		t.Helper()
		// The write sets its own time over the one the store gives it.
		if _, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
			g.SetNow(graph.TimeOf(time.Unix(sec, 0)))
			return fn(g)
		}}); err != nil {
			t.Fatal(err)
		}
	}
	at(1796030100, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "New", EntityType: "t", Observations: []string{"n1"}}})
		_, err := g.CreateRelations([]graph.Relation{{From: "New", To: "Old", RelationType: "r"}})
		return err
	})
	at(1796119200, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Old", Contents: []string{"o2"}}, {EntityName: "New", Contents: []string{"n2"}}})
		return err
	})
	at(1796200000, func(g *graph.Graph) error {
		g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "New", Observations: []string{"n1"}}})
		return nil
	})
	var want string
	if err := s.View(context.Background(), func(g *graph.Graph) error { want = timesOf(g); return nil }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want, "New 1796030100/1796200000 [1796119200]") {
		t.Fatalf("the writer holds %s", want)
	}
	other := journalStore(path)
	var got string
	if err := other.View(context.Background(), func(g *graph.Graph) error { got = timesOf(g); return nil }); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("a reader of the journal holds\n%s\nwant\n%s", got, want)
	}
	other.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(path + journalSuffix) {
		t.Fatal("the journal is left after Close")
	}
	data, _ := os.ReadFile(path)
	if got := timesOf(jsonl.Decode(data).Graph); got != want {
		t.Errorf("the compacted file holds\n%s\nwant\n%s", got, want)
	}
}

// timesOf renders every time the graph holds.
func timesOf(g *graph.Graph) string {
	var b strings.Builder
	for _, e := range g.Entities() {
		fmt.Fprintf(&b, "%s %d/%d [", e.Name, e.Created, e.Updated)
		for i := range e.Observations {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%d", e.ObservationTime(i))
		}
		b.WriteString("]\n")
	}
	for _, r := range g.Relations() {
		fmt.Fprintf(&b, "%s->%s %d\n", r.From, r.To, r.Created)
	}
	return b.String()
}

// Compaction comes by itself: after the idle time, and at once when the
// journal outgrows its share of the file.
func TestJournalCompactsWhenIdleAndWhenBig(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memory.jsonl")
		s := Open(path, Options{Logf: func(string, ...any) {}, Journal: true, CompactIdle: time.Millisecond})
		defer s.Close()
		if err := create(s, "A"); err != nil {
			t.Fatal(err)
		}
		if !waitFor(func() bool { return !exists(path+journalSuffix) && exists(path) }) {
			t.Fatal("no compaction after the idle time")
		}
	})
	t.Run("big", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memory.jsonl")
		s := journalStore(path) // idle for an hour: only the size can trigger it
		defer s.Close()
		big := strings.Repeat("x", 64<<10)
		for i := range 5 {
			if _, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
				g.CreateEntities([]graph.Entity{{Name: fmt.Sprint(i), EntityType: "t", Observations: []string{big}}})
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
		}
		if !waitFor(func() bool { return exists(path) }) {
			t.Fatal("a journal past its limit was not compacted")
		}
	})
}

// A Store without Options.Journal (the commands) rewrites the file on every
// write and so folds in, and retires, the journal a server left.
func TestSaveRetiresTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	server := journalStore(path)
	if err := create(server, "A"); err != nil {
		t.Fatal(err)
	}
	command := quietStore(path)
	if err := create(command, "B"); err != nil {
		t.Fatal(err)
	}
	if exists(path + journalSuffix) {
		t.Error("the journal is left after a full save")
	}
	data, _ := os.ReadFile(path)
	if got := modelOf(jsonl.Decode(data).Graph).String(); got != "E A [\"t\"]\nE B [\"t\"]" {
		t.Errorf("the file holds\n%s", got)
	}
	if got := entityNames(t, server); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("the server sees %v", got)
	}
}

// A reader that holds the memory applies another process's writes from
// the journal, without reading the memory file again: its catch-up costs
// what the writes changed.
func TestReadersCatchUpFromTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	w := journalStore(path)
	if err := create(w, "A"); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := journalStore(path)
	entityNames(t, r)
	held := r.g
	for i, name := range []string{"B", "C", "D"} {
		if err := create(w, name); err != nil {
			t.Fatal(err)
		}
		want := []string{"A", "B", "C", "D"}[:i+2]
		if got := entityNames(t, r); !slices.Equal(got, want) {
			t.Fatalf("the reader sees %v, want %v", got, want)
		}
		if r.g != held {
			t.Fatalf("write %s: the reader read the whole memory again", name)
		}
	}
	// Another process's compaction writes what the reader holds: it
	// compares, and keeps its graph.
	if err := w.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := create(w, "E"); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, r); !slices.Equal(got, []string{"A", "B", "C", "D", "E"}) {
		t.Fatalf("after a compaction and a write the reader sees %v", got)
	}
	if r.g != held {
		t.Fatal("after another process's compaction the reader read the whole memory again")
	}
	// A compaction of writes the reader has not seen is read in full.
	if err := create(w, "F"); err != nil {
		t.Fatal(err)
	}
	if err := w.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, r); !slices.Equal(got, []string{"A", "B", "C", "D", "E", "F"}) {
		t.Fatalf("after a compaction of an unseen write the reader sees %v", got)
	}
}
