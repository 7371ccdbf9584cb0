package durable

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateInAMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "memory.jsonl")
	if _, err := Create(path, 0o600); err == nil || !strings.Contains(err.Error(), "creating a temporary file beside "+path) {
		t.Errorf("Create: %v", err)
	}
	_, err := WriteFile(path, 0o600, func(io.Writer) error { t.Error("write called"); return nil })
	if err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

func TestReplaceOverADirectoryKeepsItAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.jsonl")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if !IsTemp(filepath.Base(p.TempPath()), "memory.jsonl") || filepath.Dir(p.TempPath()) != dir {
		t.Errorf("temporary file %s is not one of %s", p.TempPath(), path)
	}
	p.Write([]byte("line\n"))
	first, err := p.Sync()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := p.Sync(); err != nil || again != first {
		t.Errorf("a second Sync: %v, %v; want the first's identity", again, err)
	}
	if _, err := p.Replace(); err == nil || !strings.Contains(err.Error(), "replacing "+path) {
		t.Errorf("Replace over a directory: %v", err)
	}
	p.Cleanup()
	p.Cleanup() // twice is safe
	if _, err := os.Stat(p.TempPath()); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(path, "inside")); err != nil || !fi.IsDir() {
		t.Errorf("the directory was touched: %v", err)
	}
}

func TestAppendAtErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := AppendAt(filepath.Join(dir, "no", "journal"), 0, []byte("x\n"), 0o600); err == nil {
		t.Error("an append into a missing directory succeeded")
	}
	if _, err := AppendAt(dir, 0, []byte("x\n"), 0o700); err == nil {
		t.Error("an append to a directory succeeded")
	}
}

func TestCompleteLinesReadsBackPastOneBuffer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal")
	// A torn line longer than the 4 KiB read back at a time.
	data := append([]byte("first\n"), bytes.Repeat([]byte("x"), 10000)...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := CompleteLines(path); n != 6 || err != nil {
		t.Errorf("CompleteLines = %d, %v; want 6", n, err)
	}
	if _, err := CompleteLines(dir); err == nil {
		t.Error("CompleteLines of a directory succeeded")
	}
}

func TestTempNameOfABareName(t *testing.T) {
	name := TempName("memory.jsonl")
	if filepath.Dir(name) != "." || !IsTemp(name, "memory.jsonl") {
		t.Errorf("TempName(memory.jsonl) = %s", name)
	}
}

func TestAppendAtABadOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	if err := os.WriteFile(path, []byte("line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := AppendAt(path, -1, []byte("x\n"), 0o600); err == nil {
		t.Error("an append at offset -1 succeeded")
	}
	if data, _ := os.ReadFile(path); string(data) != "line\n" {
		t.Errorf("the file holds %q after the failed append", data)
	}
}

func TestSyncOfAClosedFileNamesIt(t *testing.T) {
	p, err := Create(filepath.Join(t.TempDir(), "memory.jsonl"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	p.f.Close() // as a failing disk would leave it
	if _, err := p.Sync(); err == nil || !strings.Contains(err.Error(), "syncing "+p.TempPath()) {
		t.Errorf("Sync: %v", err)
	}
	if _, err := p.Replace(); err == nil {
		t.Error("Replace after a failed Sync succeeded")
	}
}

func TestMissingDirectories(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no")
	if err := SyncDir(missing); err == nil {
		t.Error("SyncDir of a missing directory succeeded")
	}
	RemoveStaleTemps(filepath.Join(missing, "memory.jsonl")) // nothing to do, no panic
}
