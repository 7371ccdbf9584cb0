package filestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A lock that is not a regular file (a dangling symlink left by a tool, a
// directory made by hand) has no content to read, but its age still says
// whether its maker is gone: it is stale by age like any other lock, and
// breaking it removes the link or the directory, never what a link points to.
func TestStaleLockOfAnotherKind(t *testing.T) {
	const staleAfter = 150 * time.Millisecond
	tests := []struct {
		name string
		// plant makes the lock at lockPath and returns a file that must
		// survive the break ("" for none).
		plant func(t *testing.T, lockPath string) (survivor string)
	}{
		{"dangling symlink", func(t *testing.T, lockPath string) string {
			symlinkOrSkip(t, filepath.Join(t.TempDir(), "gone"), lockPath)
			return ""
		}},
		{"symlink to a dead holder's lock", func(t *testing.T, lockPath string) string {
			target := filepath.Join(t.TempDir(), "target")
			// Followed, the pid rule would break this young lock at once.
			if err := os.WriteFile(target, []byte(lockJSON(deadPID(t), thisHostname(t), "0123456789abcdef0123456789abcdef")), 0o600); err != nil {
				t.Fatal(err)
			}
			symlinkOrSkip(t, target, lockPath)
			return target
		}},
		{"empty directory", func(t *testing.T, lockPath string) string {
			if err := os.Mkdir(lockPath, 0o700); err != nil {
				t.Fatal(err)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := memoryFilePath(t)
			lockPath := path + ".lock"

			// Young, it is respected.
			survivor := tt.plant(t, lockPath)
			var log lockLog
			_, err := AcquireLock(context.Background(), path, LockOptions{Timeout: 100 * time.Millisecond, StaleAfter: time.Minute, Logf: log.Logf})
			if !errors.Is(err, ErrLockTimeout) {
				t.Fatalf("a fresh lock: AcquireLock = %v, want a timeout", err)
			}
			if _, err := os.Lstat(lockPath); err != nil {
				t.Fatalf("a fresh lock was removed: %v", err)
			}

			// Older than StaleAfter, it is broken.
			start := time.Now()
			l, err := AcquireLock(context.Background(), path, LockOptions{Timeout: 5 * time.Second, StaleAfter: staleAfter, Logf: log.Logf})
			if err != nil {
				t.Fatalf("an old lock: AcquireLock = %v (after %v), want it broken", err, time.Since(start))
			}
			fi, err := os.Lstat(lockPath)
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the new lock is %v (%v), want a regular file", fi, err)
			}
			if err := l.Release(); err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(survivor); survivor != "" && err != nil {
				t.Errorf("breaking the lock removed %s: %v", survivor, err)
			}
			if got := log.Lines(); len(got) != 1 || got[0] != "Breaking stale memory file lock "+lockPath {
				t.Errorf("logged %q, want one break", got)
			}
		})
	}
}

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symlink: %v", err)
	}
}

// The symlink's target is a stranger's file: breaking the link leaves it be.
func TestBreakingASymlinkLockKeepsItsTarget(t *testing.T) {
	path := memoryFilePath(t)
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlinkOrSkip(t, target, path+".lock")
	l, err := AcquireLock(context.Background(), path, LockOptions{Timeout: 5 * time.Second, StaleAfter: 100 * time.Millisecond, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if got, err := os.ReadFile(target); string(got) != "keep me" {
		t.Errorf("the symlink's target now holds %q (%v)", got, err)
	}
}

// A directory with files in it cannot be removed without deleting what
// someone put there: AcquireLock says so at once instead of waiting out
// its timeout on every write.
func TestOldNonEmptyDirectoryLockFailsClearly(t *testing.T) {
	path := memoryFilePath(t)
	lockPath := path + ".lock"
	if err := os.Mkdir(lockPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lockPath, "inside"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	setAge(t, lockPath, time.Minute)
	start := time.Now()
	_, err := AcquireLock(context.Background(), path, LockOptions{Timeout: 5 * time.Second, StaleAfter: time.Second, Logf: func(string, ...any) {}})
	if err == nil || errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), lockPath) || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("AcquireLock = %v (after %v), want an error at once naming the directory %s", err, time.Since(start), lockPath)
	}
	if _, err := os.Stat(filepath.Join(lockPath, "inside")); errors.Is(err, fs.ErrNotExist) {
		t.Error("deleted a file inside the directory")
	}
}
