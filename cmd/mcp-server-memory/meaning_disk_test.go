//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// TestMeaningOnAFullDisk: on a disk with a few KiB free, with search by
// meaning on, every write is accepted: the vectors file takes none of the
// last free space. It needs a small file system of its own (a tmpfs,
// mounted as root); elsewhere it is skipped.
func TestMeaningOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("no tmpfs of its own (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	stub := meaningtest.New("m")
	t.Cleanup(stub.Close)
	file := filepath.Join(dir, "memory.jsonl")
	// Fill the disk but for 32 KiB: what the memory needs, and less than
	// it and the vectors together need.
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, free-32<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, logs := startMeaningServer(t, file, stub, "m")
	accepted := 0
	for i := range 40 {
		name, obs := fmt.Sprintf("Entity %02d", i), fmt.Sprintf("fact %d", i)
		if text, isErr := callTool(t, cs, "create_entities", map[string]any{"entities": []any{
			map[string]any{"name": name, "entityType": "thing", "observations": []string{obs}}}}); isErr {
			t.Logf("write %d: %s", i, text)
			continue
		}
		accepted++
		waitCaughtUp(t, stub, "m", name+" (thing): "+obs)
	}
	if accepted != 40 {
		t.Errorf("%d of 40 writes accepted on a nearly full disk with search by meaning on, want 40:\n%s", accepted, logs)
	}
	if fi, err := os.Stat(file + ".vectors"); err == nil && fi.Size() > 0 {
		t.Errorf("the vectors file took %d bytes of the last free space", fi.Size())
	}
}
