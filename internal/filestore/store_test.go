package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func quietStore(path string) *Store {
	return Open(path, Options{Logf: func(string, ...any) {}, Lock: LockOptions{Timeout: 2 * time.Second}})
}

func create(s *Store, names ...string) error {
	_, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		var es []graph.Entity
		for _, n := range names {
			es = append(es, graph.Entity{Name: n, EntityType: "t", Observations: []string{}})
		}
		g.CreateEntities(es)
		return nil
	}})
	return err
}

func entityNames(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	if err := s.View(context.Background(), func(g *graph.Graph) error {
		for _, e := range g.Entities() {
			out = append(out, e.Name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMissingFileIsEmptyAndCreatedOnWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "memory.jsonl")
	s := quietStore(path)
	if got := entityNames(t, s); len(got) != 0 {
		t.Fatalf("entities %v in a missing file", got)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read created the file: %v", err)
	}
	if err := create(s, "A"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("new directory mode %v, want 0700", di.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	// The store stamps the write with its time.
	if !strings.HasPrefix(string(data), `{"type":"entity","name":"A","entityType":"t","observations":[],"createdAt":"`) {
		t.Errorf("file %q", data)
	}
}

func TestExistingModeKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(path, nil, 0o644)
	os.Chmod(path, 0o644)
	if err := create(quietStore(path), "A"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 kept", fi.Mode().Perm())
	}
}

// Reads see another writer's save at once, without any notification.
func TestViewSeesOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	a, b := quietStore(path), quietStore(path)
	if err := create(a, "A"); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, b); fmt.Sprint(got) != "[A]" {
		t.Fatalf("b sees %v", got)
	}
	if err := create(b, "B"); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, a); fmt.Sprint(got) != "[A B]" {
		t.Fatalf("a sees %v", got)
	}
	// A same-size rewrite in the same second is still seen (new inode).
	data, _ := os.ReadFile(path)
	replaced := strings.Replace(string(data), `"A"`, `"C"`, 1)
	tmp := path + ".x"
	os.WriteFile(tmp, []byte(replaced), 0o600)
	os.Rename(tmp, path)
	if got := entityNames(t, a); fmt.Sprint(got) != "[C B]" {
		t.Fatalf("after a same-size rewrite a sees %v", got)
	}
}

func TestFailedMutationWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := quietStore(path)
	if err := create(s, "A"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	fiBefore, _ := os.Stat(path)
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "A", Contents: []string{"x"}}, {EntityName: "nobody", Contents: []string{"y"}}})
		return err
	}})
	var nf *graph.NotFoundError
	if changed || !errors.As(err, &nf) {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	after, _ := os.ReadFile(path)
	fiAfter, _ := os.Stat(path)
	if string(before) != string(after) || !os.SameFile(fiBefore, fiAfter) {
		t.Error("a failed call rewrote the file")
	}
	// A call that changes nothing does not save either.
	changed, err = s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.DeleteEntities([]string{"nobody"})
		return nil
	}})
	fiAfter, _ = os.Stat(path)
	if changed || err != nil || !os.SameFile(fiBefore, fiAfter) {
		t.Errorf("a no-op call: changed %v, err %v, rewrote %v", changed, err, !os.SameFile(fiBefore, fiAfter))
	}
}

// A save that cannot complete leaves the old file and no temporary file, and
// the store does not serve the unsaved change. The failure is injected (a
// disk that fills up part-way through the write), so the test runs as root
// too.
func TestFailedSaveLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	s := quietStore(path)
	if err := create(s, "A"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	saveWriter = func(w io.Writer) io.Writer { return &fullDisk{w: w, room: 10} }
	err := create(s, "B", "C")
	saveWriter = func(w io.Writer) io.Writer { return w }
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a save onto a full disk: %v, want ENOSPC", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the memory file changed to %q", after)
	}
	if got := entityNames(t, s); fmt.Sprint(got) != "[A]" {
		t.Errorf("after a failed save the store serves %v", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	// With room again, the next write saves.
	if err := create(s, "D"); err != nil {
		t.Fatal(err)
	}
	if got := entityNames(t, quietStore(path)); fmt.Sprint(got) != "[A D]" {
		t.Errorf("after the next save the file holds %v", got)
	}
}

// fullDisk takes room bytes, then fails as a full disk does.
type fullDisk struct {
	w    io.Writer
	room int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.room {
		d.room -= len(p)
		return d.w.Write(p)
	}
	n, _ := d.w.Write(p[:d.room])
	d.room = 0
	return n, &os.PathError{Op: "write", Path: "memory.jsonl.tmp", Err: syscall.ENOSPC}
}

// A writer whose lock was broken while it stalled must not commit its save.
func TestLostLockAbandonsSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	s := quietStore(path)
	if err := create(s, "A"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		// Another process broke our lock and took its own.
		os.WriteFile(path+".lock", []byte(`{"pid":1,"hostname":"elsewhere","token":"00000000000000000000000000000000"}`), 0o600)
		g.CreateEntities([]graph.Entity{{Name: "B", EntityType: "t"}})
		return nil
	}})
	if !errors.Is(err, ErrLockLost) {
		t.Fatalf("err %v, want ErrLockLost", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Errorf("the save went through:\n%s", after)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	os.Remove(path + ".lock")
	if got := entityNames(t, s); fmt.Sprint(got) != "[A]" {
		t.Errorf("after an abandoned save the store serves %v", got)
	}
}

func TestStaleTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	old := time.Now().Add(-2 * time.Minute)
	stale := filepath.Join(dir, "memory.jsonl.0123456789abcdef0123456789abcdef.tmp")
	young := filepath.Join(dir, "memory.jsonl.fedcba9876543210fedcba9876543210.tmp")
	other := filepath.Join(dir, "other.jsonl.0123456789abcdef0123456789abcdef.tmp")
	for _, f := range []string{stale, young, other} {
		os.WriteFile(f, []byte("x"), 0o600)
	}
	os.Chtimes(stale, old, old)
	os.Chtimes(other, old, old)
	if err := create(quietStore(path), "A"); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{stale: false, young: true, other: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}

func TestWatchReportsEachWriteOnce(t *testing.T) {
	for name, open := range map[string]func(string) *Store{"saves": quietStore, "journal": journalStore} {
		t.Run(name, func(t *testing.T) { testWatchReportsEachWriteOnce(t, open) })
	}
}

func testWatchReportsEachWriteOnce(t *testing.T, open func(string) *Store) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s, other := open(path), open(path)
	changes := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Watch(ctx, 10*time.Millisecond, func() { changes <- struct{}{} })
	// Wait until the watcher runs: it reports a first foreign save.
	for i, waited := 0, false; !waited; i++ {
		// A new name each time: creating an existing one writes nothing.
		if err := create(other, fmt.Sprintf("first%d", i)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changes:
			waited = true
		case <-time.After(2 * time.Second):
			// The save came before the watcher's first look; save again.
		}
	}
	// A save shows two states (its record in the journal, then the file
	// rewritten), which a poll between them reports twice: let the
	// reports of the foreign save settle.
	for quiet := false; !quiet; {
		select {
		case <-changes:
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}

	// Our own save is reported at once, and once: the poll that then
	// finds the files moved knows the change is ours.
	if err := create(s, "ours"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(2 * time.Second):
		t.Fatal("our own save was not reported")
	}
	select {
	case <-changes:
		t.Fatal("our own save was reported twice")
	case <-time.After(200 * time.Millisecond):
	}
	if err := create(other, "theirs"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(2 * time.Second):
		t.Fatal("another writer's save was not reported")
	}
	// Its second state (the file rewritten after the record) may be
	// reported too: let it settle.
	for quiet := false; !quiet; {
		select {
		case <-changes:
		case <-time.After(300 * time.Millisecond):
			quiet = true
		}
	}

	// Another process compacting what we already hold changes nothing.
	if err := other.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
		t.Fatal("another process's compaction was reported as a change")
	case <-time.After(200 * time.Millisecond):
	}
}

func TestResolvePath(t *testing.T) {
	home, _ := os.UserHomeDir()
	serverDir := filepath.Join(string(filepath.Separator), "opt", "memory")
	for _, c := range []struct{ value, want string }{
		{"/data/m.jsonl", "/data/m.jsonl"},
		{"~/m.jsonl", filepath.Join(home, "m.jsonl")},
		{"~", home},
		{"m.jsonl", filepath.Join(serverDir, "m.jsonl")},
		{"sub/m.jsonl", filepath.Join(serverDir, "sub", "m.jsonl")},
		{"~user/m.jsonl", filepath.Join(serverDir, "~user", "m.jsonl")},
	} {
		got, err := ResolvePath(c.value, serverDir, t.Logf)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", c.value, got, err, c.want)
		}
	}
}

func TestLegacyMigration(t *testing.T) {
	for _, c := range []struct {
		name          string
		legacy, jsonl bool
		wantMigrated  bool
	}{
		{"legacy only", true, false, true},
		{"both", true, true, false},
		{"neither", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.legacy {
				os.WriteFile(filepath.Join(dir, "memory.json"), []byte("legacy\n"), 0o600)
			}
			if c.jsonl {
				os.WriteFile(filepath.Join(dir, "memory.jsonl"), []byte("new\n"), 0o600)
			}
			var logged []string
			got, err := ResolvePath("", dir, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
			if err != nil || got != filepath.Join(dir, "memory.jsonl") {
				t.Fatalf("got %q, %v", got, err)
			}
			data, _ := os.ReadFile(got)
			_, legacyErr := os.Stat(filepath.Join(dir, "memory.json"))
			if c.wantMigrated {
				if string(data) != "legacy\n" || legacyErr == nil || len(logged) != 1 {
					t.Errorf("not migrated: data %q, legacy still there %v, log %v", data, legacyErr == nil, logged)
				}
			} else if len(logged) != 0 || (c.legacy && legacyErr != nil) {
				t.Errorf("migrated when it should not: log %v", logged)
			}
		})
	}
}

// TestWatchTellsAChangeReadBeforeIt: another process's save that a call
// read before the Watch began is told as the Watch begins. (It was the
// Watch's baseline: a server whose first calls came before its Watch ran
// never told its subscribers, nor its search by meaning, of that save.)
func TestWatchTellsAChangeReadBeforeIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s, other := quietStore(path), quietStore(path)
	if err := create(s, "ours"); err != nil {
		t.Fatal(err)
	}
	if err := create(other, "theirs"); err != nil {
		t.Fatal(err)
	}
	if err := s.View(context.Background(), func(g *graph.Graph) error {
		if g.Entity("theirs") == nil {
			t.Fatal("a read after the other's save does not hold it")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	changes := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Watch(ctx, 10*time.Millisecond, func() { changes <- struct{}{} })
	select {
	case <-changes:
	case <-time.After(2 * time.Second):
		t.Fatal("the Watch did not tell the other's save, read before it began")
	}
}
