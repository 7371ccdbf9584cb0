package filestore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailingCompactionIsLoggedOncePerOutage: background compactions that
// keep failing (a full disk) are logged once, not once per attempt; when
// one works again the log says so, and the next outage is logged again.
func TestFailingCompactionIsLoggedOncePerOutage(t *testing.T) {
	var full atomic.Bool
	saveWriter = func(w io.Writer) io.Writer {
		if full.Load() {
			return &fullDisk{w: w}
		}
		return w
	}
	defer func() { saveWriter = func(w io.Writer) io.Writer { return w } }()
	var mu sync.Mutex
	var log []string
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := Open(path, Options{Journal: true, CompactIdle: time.Millisecond, Lock: LockOptions{Timeout: 5 * time.Second},
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, fmt.Sprintf(format, args...))
		}})
	defer s.Close()
	count := func(what string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range log {
			if strings.Contains(l, what) {
				n++
			}
		}
		return n
	}
	outage := func(round int) {
		full.Store(true)
		for i := range 30 {
			createEntity(t, s, fmt.Sprintf("r%d-%d", round, i))
			time.Sleep(3 * time.Millisecond)
		}
		if !waitFor(func() bool { return count("compacting "+path+": ") >= round }) {
			t.Fatalf("round %d: no compaction failed", round)
		}
		full.Store(false)
		createEntity(t, s, fmt.Sprintf("r%d-ok", round))
		if !waitFor(func() bool { return !exists(path + journalSuffix) }) {
			t.Fatalf("round %d: no compaction worked after the outage", round)
		}
	}
	outage(1)
	outage(2)
	if n := count("compacting " + path + ": "); n != 2 {
		t.Errorf("two outages logged %d failures, want 2:\n%s", n, strings.Join(log, "\n"))
	}
	// The end of an outage is logged once its compaction has returned,
	// just after the journal is gone: wait for it.
	waitFor(func() bool { return count("works again") >= 2 })
	if n := count("works again"); n != 2 {
		t.Errorf("two outages logged their end %d times, want 2", n)
	}
}

// TestCloseLeavesTheJournalWhenTheLockIsBusy: an empty lock file (its
// maker killed before writing it) is stale only after 30 s; Close waits
// for it about 2 s, then leaves the journal, which keeps the write.
func TestCloseLeavesTheJournalWhenTheLockIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := journalStore(path)
	createEntity(t, s, "A")
	os.WriteFile(path+".lock", nil, 0o600)
	start := time.Now()
	err := s.Close()
	if took := time.Since(start); !errors.Is(err, ErrJournalLeft) || took > closeLockWait+time.Second {
		t.Errorf("Close = %v after %v, want ErrJournalLeft within %v", err, took, closeLockWait)
	}
	os.Remove(path + ".lock")
	if got := sortedNames(t, journalStore(path)); got != "[A]" {
		t.Errorf("after Close left the journal a reader sees %s", got)
	}
}

// TestAnotherUsersJournalIsExplained: a journal this user may not write
// (another user's server made it, root's for one) makes the error name
// its owner and the two fixes. The test makes the journal another user's
// as root; the error itself is the one the file system gives a non-owner.
func TestAnotherUsersJournalIsExplained(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user takes root")
	}
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	s := journalStore(path)
	createEntity(t, s, "A")
	if err := os.Chown(path+journalSuffix, 65534, 65534); err != nil {
		t.Skip(err)
	}
	err := s.journalError("appending to", &fs.PathError{Op: "open", Path: path + journalSuffix, Err: fs.ErrPermission})
	for _, want := range []string{"appending to the journal " + path + journalSuffix, "it belongs to ", "run the server once as ", "sudo chown " + currentUser() + " " + path + journalSuffix} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("the error %v is not a permission error", err)
	}
}
