package pgcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinDirPicksTheNewest: of several PostgreSQL versions in Debian's
// layout the newest with an initdb is used (15 over 9, numerically, and
// not 16, which has no initdb); without any, initdb on PATH; without that
// either, an error saying where it looked.
func TestBinDirPicksTheNewest(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"9", "15", "16"} {
		if err := os.MkdirAll(filepath.Join(root, v, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if v != "16" {
			if err := os.WriteFile(filepath.Join(root, v, "bin", "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, err := binDirIn(root); err != nil || got != filepath.Join(root, "15", "bin") {
		t.Errorf("binDirIn = %q, %v; want %s", got, err, filepath.Join(root, "15", "bin"))
	}

	onPath := t.TempDir()
	if err := os.WriteFile(filepath.Join(onPath, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", onPath)
	empty := t.TempDir()
	if got, err := binDirIn(empty); err != nil || got != onPath {
		t.Errorf("with initdb only on PATH: %q, %v; want %s", got, err, onPath)
	}
	t.Setenv("PATH", empty)
	if _, err := binDirIn(empty); err == nil || !strings.Contains(err.Error(), "initdb not found") {
		t.Errorf("with no initdb anywhere: %v, want it not found", err)
	}
}
