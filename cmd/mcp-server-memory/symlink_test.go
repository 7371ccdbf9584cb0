package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestSharingThroughSymlink keeps the memory in another directory and
// reaches it through a relative symbolic link, as people do with a synced
// folder. Two servers write through the link and one writes the target
// directly, concurrently: every write lands in the target, the link stays a
// link, and the lock and temporary files live beside the target, so all
// three take one lock.
func TestSharingThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	const writers = 10
	dir := t.TempDir()
	home, synced := filepath.Join(dir, "home"), filepath.Join(dir, "synced")
	for _, d := range []string{home, synced} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(synced, "memory.jsonl")
	link := filepath.Join(home, "memory.jsonl")
	if err := os.Symlink("../synced/memory.jsonl", link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The target does not exist yet: the first write creates it.
	servers := []*serverProcess{
		startServer(t, link, sharingVersion, nil),
		startServer(t, link, sharingVersion, nil),
		startServer(t, target, sharingVersion, nil),
	}
	var wg sync.WaitGroup
	for p, srv := range servers {
		for w := range writers {
			wg.Go(func() {
				name := fmt.Sprintf("p%d-e%02d", p, w)
				srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(name, "note", "written by "+name)))
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// The servers read what the others wrote, through the link or not.
	want := servers[2].readGraph(ctx, t)
	for i, srv := range servers[:2] {
		assertSameGraph(t, fmt.Sprintf("read_graph through the link, process %d", i), srv.readGraph(ctx, t), want)
	}
	// After their clean exit the target alone holds every write: the
	// journal beside it is compacted into it.
	for _, srv := range servers {
		srv.close()
	}

	fi, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link became %v after the writes; want it still a symbolic link", fi.Mode())
	}
	if got, err := os.Readlink(link); err != nil || got != "../synced/memory.jsonl" {
		t.Errorf("the link points to %q (%v); want ../synced/memory.jsonl", got, err)
	}
	got := entitiesIn(decodeMemoryFile(t, target))
	if len(got) != len(servers)*writers {
		t.Errorf("the target holds %d entities, want %d", len(got), len(servers)*writers)
	}
	for p := range servers {
		for w := range writers {
			if name := fmt.Sprintf("p%d-e%02d", p, w); got[name] == nil {
				t.Errorf("entity %s is missing from the target", name)
			}
		}
	}
	for _, d := range []string{home, synced} {
		if l := leftovers(t, d); len(l) > 0 {
			t.Errorf("files left in %s: %q", d, l)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 1 {
		t.Errorf("%s holds %d files; want the link alone", home, len(entries))
	}
}
