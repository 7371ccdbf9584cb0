package serverproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopyFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "memory.jsonl"), filepath.Join(dir, "copy.jsonl")
	if err := os.WriteFile(from, []byte("line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, []byte("an older, longer copy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CopyFile(from, to); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(to)
	if err != nil || string(data) != "line\n" {
		t.Errorf("copy holds %q, %v", data, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "copy.jsonl")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("copy's mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestCopyFileErrors(t *testing.T) {
	dir := t.TempDir()
	if err := CopyFile(filepath.Join(dir, "missing"), filepath.Join(dir, "to")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing source: %v", err)
	}
	from := filepath.Join(dir, "from")
	os.WriteFile(from, nil, 0o600)
	if err := CopyFile(from, filepath.Join(dir, "no", "such", "dir")); err == nil {
		t.Error("a copy into a missing directory succeeded")
	}
	if err := CopyFile(dir, filepath.Join(dir, "to")); err == nil || !strings.Contains(err.Error(), "copying "+dir) {
		t.Errorf("copying a directory: %v", err)
	}
}

func TestVersionOfABinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"server 1.2.3\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Version(bin); got != " (server 1.2.3)" {
		t.Errorf("Version = %q", got)
	}
	if got := Version(filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("Version of a missing binary = %q", got)
	}
}

func TestBuildOurServerSaysWhatToDo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the build cannot run: its failure is what is tested
	_, err := BuildOurServer(ctx, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "run from the repository, or pass --cmd") {
		t.Errorf("a failed build: %v", err)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "one": "one", "one\ntwo": "one", "\ntwo": ""} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
