//go:build unix

package pgcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// removeAbandoned judges only directories that name a process, and only
// a process that is gone: one being set up (no owner file), one whose
// owner file is not a pid, and one of a live process are left alone.
func TestRemoveAbandonedLeavesWhatIsNotItsOwn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	owners := map[string]string{
		"settingUp": "",
		"notAPid":   "pid?",
		"live":      strconv.Itoa(os.Getpid()),
		"gone":      strconv.Itoa(gone.Process.Pid),
	}
	for name, owner := range owners {
		dir := filepath.Join(tmp, dirPrefix+name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := filepath.Join(tmp, "other-gone")
	os.Mkdir(other, 0o700)
	os.WriteFile(filepath.Join(other, ownerFile), []byte(owners["gone"]), 0o644)

	removeAbandoned(context.Background(), t.TempDir()) // no data directory: pg_ctl is not needed
	for name := range owners {
		_, err := os.Stat(filepath.Join(tmp, dirPrefix+name))
		if gotGone := os.IsNotExist(err); gotGone != (name == "gone") {
			t.Errorf("%s: removed %v", name, gotGone)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory without the prefix was touched: %v", err)
	}
}

func TestVersionOfABinDir(t *testing.T) {
	for dir, want := range map[string]int{"/usr/lib/postgresql/15/bin": 15, "/usr/lib/postgresql/9/bin": 9, "/usr/bin": 0} {
		if got := version(dir); got != want {
			t.Errorf("version(%s) = %d, want %d", dir, got, want)
		}
	}
}
