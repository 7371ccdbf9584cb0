package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockLog records what AcquireLock logs, so tests can count break messages.
type lockLog struct {
	mu    sync.Mutex
	lines []string
}

func (r *lockLog) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *lockLog) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// quickLockOptions keeps tests fast while leaving StaleAfter long enough that
// a lock broken within it was broken by the pid rule, not by age.
func quickLockOptions(log *lockLog) LockOptions {
	opts := LockOptions{
		Timeout:         10 * time.Second,
		RefreshInterval: 50 * time.Millisecond,
		StaleAfter:      5 * time.Second,
	}
	if log != nil {
		opts.Logf = log.Logf
	}
	return opts
}

func memoryFilePath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "memory.jsonl")
}

func mustAcquireLock(t *testing.T, path string, opts LockOptions) *Lock {
	t.Helper()
	l, err := AcquireLock(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("AcquireLock: %v", err)
	}
	return l
}

// writeForeignLock plants a lock file as another process would have left it,
// with the given mtime age.
func writeForeignLock(t *testing.T, lockPath, content string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(lockPath, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	setAge(t, lockPath, age)
}

func setAge(t *testing.T, path string, age time.Duration) {
	t.Helper()
	then := time.Now().Add(-age)
	if err := os.Chtimes(path, then, then); err != nil {
		t.Fatal(err)
	}
}

func lockJSON(pid int, hostname, token string) string {
	return string(encodeLockInfo(lockInfo{PID: pid, Hostname: hostname, Token: token}))
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a short-lived process: %v", err)
	}
	return cmd.ProcessState.Pid()
}

func thisHostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil || h == "" {
		t.Skip("no hostname: the pid rule is off")
	}
	return h
}

// incrementUnderLock is one read-modify-write of a decimal counter file,
// the shape every mutation of the memory file takes.
func incrementUnderLock(path string, opts LockOptions, inside *atomic.Int32) error {
	l, err := AcquireLock(context.Background(), path, opts)
	if err != nil {
		return err
	}
	return errors.Join(incrementCounter(path, inside), l.Release())
}

// incrementCounter adds one to the counter file; inside, when not nil,
// counts the goroutines in here at once, which the lock must keep to one.
func incrementCounter(path string, inside *atomic.Int32) error {
	if inside != nil {
		n := inside.Add(1)
		defer inside.Add(-1)
		if n != 1 {
			return fmt.Errorf("%d holders inside the lock at once", n)
		}
	}
	n := 0
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if n, err = strconv.Atoi(string(b)); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o600)
}

func readCounter(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLockMutualExclusion(t *testing.T) {
	const goroutines, increments = 8, 10
	path := memoryFilePath(t)
	opts := quickLockOptions(nil)
	var inside atomic.Int32
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range increments {
				if err := incrementUnderLock(path, opts, &inside); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := readCounter(t, path); got != goroutines*increments {
		t.Errorf("counter = %d, want %d (lost increments)", got, goroutines*increments)
	}
}

func TestLockFileContent(t *testing.T) {
	path := memoryFilePath(t)
	l := mustAcquireLock(t, path, quickLockOptions(nil))
	defer l.Release()

	content, err := os.ReadFile(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\{"pid":([0-9]+),"hostname":("(?:[^"\\]|\\.)*"),"token":"([0-9a-f]{32})"\}$`)
	m := re.FindSubmatch(content)
	if m == nil {
		t.Fatalf("lock file content %q does not match %s", content, re)
	}
	if pid, _ := strconv.Atoi(string(m[1])); pid != os.Getpid() {
		t.Errorf("pid = %d, want %d", pid, os.Getpid())
	}
	var hostname string
	if err := json.Unmarshal(m[2], &hostname); err != nil {
		t.Errorf("hostname %s: %v", m[2], err)
	}
	if want, _ := os.Hostname(); hostname != want {
		t.Errorf("hostname = %q, want %q", hostname, want)
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(path + ".lock")
		if err != nil {
			t.Fatal(err)
		}
		if mode := st.Mode().Perm(); mode != 0o600 {
			t.Errorf("lock file mode = %v, want 0600", mode)
		}
	}
}

func TestLockTokensDiffer(t *testing.T) {
	path := memoryFilePath(t)
	seen := map[string]bool{}
	for range 3 {
		l := mustAcquireLock(t, path, quickLockOptions(nil))
		if seen[l.token] {
			t.Errorf("token %s reused", l.token)
		}
		seen[l.token] = true
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEncodeLockInfo(t *testing.T) {
	token := strings.Repeat("ab", 16)
	tests := []struct {
		hostname string
		want     string
	}{
		{"box", `{"pid":42,"hostname":"box","token":"` + token + `"}`},
		{`we"ird`, `{"pid":42,"hostname":"we\"ird","token":"` + token + `"}`},
		{`back\slash`, `{"pid":42,"hostname":"back\\slash","token":"` + token + `"}`},
		{"<a&b>", `{"pid":42,"hostname":"<a&b>","token":"` + token + `"}`},
		{"", `{"pid":42,"hostname":"","token":"` + token + `"}`},
	}
	for _, tt := range tests {
		got := string(encodeLockInfo(lockInfo{PID: 42, Hostname: tt.hostname, Token: token}))
		if got != tt.want {
			t.Errorf("hostname %q: got %s, want %s", tt.hostname, got, tt.want)
		}
		back, ok := parseLockInfo([]byte(got))
		if !ok || back.Hostname != tt.hostname {
			t.Errorf("hostname %q does not survive a round trip: %+v", tt.hostname, back)
		}
	}
}

func TestReleaseRemovesLockFile(t *testing.T) {
	path := memoryFilePath(t)
	l := mustAcquireLock(t, path, quickLockOptions(nil))
	if err := l.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("Release left %s behind", e.Name())
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
}

func TestReleaseKeepsSomeoneElsesLock(t *testing.T) {
	path := memoryFilePath(t)
	l := mustAcquireLock(t, path, quickLockOptions(nil))
	// Another process broke our lock and took its own.
	theirs := lockJSON(os.Getpid(), "elsewhere", strings.Repeat("0", 32))
	if err := os.WriteFile(path+".lock", []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); !errors.Is(err, ErrLockLost) {
		t.Errorf("Release = %v, want ErrLockLost", err)
	}
	got, err := os.ReadFile(path + ".lock")
	if err != nil {
		t.Fatalf("Release removed someone else's lock: %v", err)
	}
	if string(got) != theirs {
		t.Errorf("lock file = %s, want %s", got, theirs)
	}
}

func TestReleaseAfterLockRemoved(t *testing.T) {
	path := memoryFilePath(t)
	l := mustAcquireLock(t, path, quickLockOptions(nil))
	if err := os.Remove(path + ".lock"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); !errors.Is(err, ErrLockLost) {
		t.Errorf("Release = %v, want ErrLockLost", err)
	}
}

func TestStaleLocks(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	host := thisHostname(t)
	dead := deadPID(t)
	tests := []struct {
		name       string
		content    string
		age        time.Duration
		wantBroken bool
	}{
		{"dead pid on this host", lockJSON(dead, host, token), 0, true},
		{"dead pid on another host", lockJSON(dead, host+"-elsewhere", token), 0, false},
		{"live pid on this host", lockJSON(os.Getpid(), host, token), 0, false},
		{"old mtime on another host", lockJSON(dead, host+"-elsewhere", token), time.Minute, true},
		{"old mtime, live pid", lockJSON(os.Getpid(), host, token), time.Minute, true},
		{"half-written, fresh", `{"pid":`, 0, false},
		{"empty, fresh", ``, 0, false},
		{"half-written, old", `{"pid":`, time.Minute, true},
		{"pid zero on this host", lockJSON(0, host, token), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := memoryFilePath(t)
			lockPath := path + ".lock"
			writeForeignLock(t, lockPath, tt.content, tt.age)
			var log lockLog
			opts := quickLockOptions(&log)
			if !tt.wantBroken {
				opts.Timeout = 200 * time.Millisecond
			}

			start := time.Now()
			l, err := AcquireLock(context.Background(), path, opts)
			elapsed := time.Since(start)

			wantLog := []string{"Breaking stale memory file lock " + lockPath}
			if !tt.wantBroken {
				wantLog = nil
				if !errors.Is(err, ErrLockTimeout) {
					t.Fatalf("AcquireLock = %v, want a timeout: the lock is not stale", err)
				}
				if got, _ := os.ReadFile(lockPath); string(got) != tt.content {
					t.Errorf("lock file changed to %q", got)
				}
			} else {
				if err != nil {
					t.Fatalf("AcquireLock: %v", err)
				}
				defer l.Release()
				if elapsed > opts.StaleAfter/2 {
					t.Errorf("took %v to break the lock, want well under StaleAfter %v", elapsed, opts.StaleAfter)
				}
				if _, err := os.Lstat(lockPath + ".break"); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf(".break file left behind: %v", err)
				}
			}
			if got := log.Lines(); !equalStrings(got, wantLog) {
				t.Errorf("logged %q, want %q", got, wantLog)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAcquireLockTimesOut(t *testing.T) {
	path := memoryFilePath(t)
	// The holder's refresher keeps the mtime younger than the waiter's
	// StaleAfter for the whole wait.
	holder := mustAcquireLock(t, path, LockOptions{RefreshInterval: 20 * time.Millisecond})
	defer holder.Release()

	var log lockLog
	start := time.Now()
	_, err := AcquireLock(context.Background(), path, LockOptions{
		Timeout:    300 * time.Millisecond,
		StaleAfter: 100 * time.Millisecond,
		Logf:       log.Logf,
	})
	elapsed := time.Since(start)

	want := "Timed out after 300 ms waiting for the memory file lock " + path + ".lock"
	if err == nil || err.Error() != want {
		t.Fatalf("AcquireLock = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrLockTimeout) {
		t.Errorf("errors.Is(%v, ErrLockTimeout) = false", err)
	}
	if elapsed < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the 300 ms timeout", elapsed)
	}
	if lines := log.Lines(); len(lines) != 0 {
		t.Errorf("broke a refreshed lock: %q", lines)
	}
	if held, err := holder.holds(); !held || err != nil {
		t.Errorf("holder lost its lock (%v)", err)
	}
}

func TestLockTimeoutMessage(t *testing.T) {
	tests := []struct {
		timeout time.Duration
		want    string
	}{
		{0, "Timed out after 60000 ms waiting for the memory file lock /m/memory.jsonl.lock"},
		{300 * time.Millisecond, "Timed out after 300 ms waiting for the memory file lock /m/memory.jsonl.lock"},
	}
	for _, tt := range tests {
		opts := LockOptions{Timeout: tt.timeout}.withDefaults()
		err := error(&lockTimeoutError{timeout: opts.Timeout, lockPath: "/m/memory.jsonl.lock"})
		if err.Error() != tt.want {
			t.Errorf("timeout %v: got %q, want %q", tt.timeout, err, tt.want)
		}
	}
}

func TestAcquireLockHonoursContext(t *testing.T) {
	path := memoryFilePath(t)
	holder := mustAcquireLock(t, path, quickLockOptions(nil))
	defer holder.Release()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := AcquireLock(ctx, path, quickLockOptions(nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireLock = %v, want context.DeadlineExceeded", err)
	}
	if errors.Is(err, ErrLockTimeout) {
		t.Errorf("a cancelled wait reported ErrLockTimeout: %v", err)
	}
}

func TestAcquireLockFailsOnMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "memory.jsonl")
	start := time.Now()
	_, err := AcquireLock(context.Background(), path, quickLockOptions(nil))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("AcquireLock = %v, want fs.ErrNotExist", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("waited %v for a lock that can never be created", time.Since(start))
	}
}

func TestBreakFile(t *testing.T) {
	tests := []struct {
		name       string
		breakAge   time.Duration
		wantBroken bool
	}{
		{"abandoned .break is cleared", time.Minute, true},
		{"live .break holds waiters off", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := memoryFilePath(t)
			lockPath := path + ".lock"
			writeForeignLock(t, lockPath, lockJSON(1, "elsewhere", strings.Repeat("f", 32)), time.Minute)
			writeForeignLock(t, lockPath+".break", "", tt.breakAge)
			var log lockLog
			opts := quickLockOptions(&log)
			opts.Timeout = 500 * time.Millisecond

			l, err := AcquireLock(context.Background(), path, opts)
			if !tt.wantBroken {
				if !errors.Is(err, ErrLockTimeout) {
					t.Fatalf("AcquireLock = %v, want a timeout while someone else breaks the lock", err)
				}
				if lines := log.Lines(); len(lines) != 0 {
					t.Errorf("broke the lock without the .break file: %q", lines)
				}
				return
			}
			if err != nil {
				t.Fatalf("AcquireLock: %v", err)
			}
			defer l.Release()
			if _, err := os.Lstat(lockPath + ".break"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf(".break file still there: %v", err)
			}
			if lines := log.Lines(); len(lines) != 1 {
				t.Errorf("logged %q, want one break message", lines)
			}
		})
	}
}

// TestConcurrentBreakers starts many waiters against one stale lock at once:
// exactly one may break it, and they must still take turns afterwards.
func TestConcurrentBreakers(t *testing.T) {
	const waiters = 16
	tests := []struct {
		name    string
		content func(t *testing.T) string
		age     time.Duration
	}{
		{"old mtime", func(*testing.T) string {
			return lockJSON(1, "elsewhere", strings.Repeat("1", 32))
		}, time.Minute},
		{"dead pid", func(t *testing.T) string {
			return lockJSON(deadPID(t), thisHostname(t), strings.Repeat("2", 32))
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := memoryFilePath(t)
			lockPath := path + ".lock"
			writeForeignLock(t, lockPath, tt.content(t), tt.age)
			var log lockLog
			opts := quickLockOptions(&log)

			var inside atomic.Int32
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range waiters {
				wg.Go(func() {
					<-start
					if err := incrementUnderLock(path, opts, &inside); err != nil {
						t.Error(err)
					}
				})
			}
			close(start)
			wg.Wait()

			if got := readCounter(t, path); got != waiters {
				t.Errorf("counter = %d, want %d", got, waiters)
			}
			want := []string{"Breaking stale memory file lock " + lockPath}
			if got := log.Lines(); !equalStrings(got, want) {
				t.Errorf("logged %q, want %q", got, want)
			}
		})
	}
}

func TestRefresherAdvancesMtime(t *testing.T) {
	path := memoryFilePath(t)
	lockPath := path + ".lock"
	l := mustAcquireLock(t, path, LockOptions{RefreshInterval: 50 * time.Millisecond})
	setAge(t, lockPath, time.Hour)

	deadline := time.Now().Add(2 * time.Second)
	for {
		st, err := os.Stat(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(st.ModTime()) < time.Minute {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mtime still %v after 2 s of 50 ms refreshes", st.ModTime())
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	// Release stops the refresher: it must not recreate or touch anything.
	time.Sleep(120 * time.Millisecond)
	if _, err := os.Lstat(lockPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file after Release: %v", err)
	}
}

const (
	lockHelperEnv       = "GO_WANT_HELPER_PROCESS"
	lockHelperValue     = "filestore-lock-counter"
	lockHelperPathEnv   = "FILESTORE_LOCK_COUNTER_PATH"
	lockHelperIncrement = 50
)

// TestLockHelperProcess is not a test: TestLockAcrossProcesses runs the test
// binary with it selected, as a separate process contending for the lock.
func TestLockHelperProcess(t *testing.T) {
	if os.Getenv(lockHelperEnv) != lockHelperValue {
		t.Skip("helper process for TestLockAcrossProcesses")
	}
	path := os.Getenv(lockHelperPathEnv)
	opts := LockOptions{Timeout: 30 * time.Second}
	for range lockHelperIncrement {
		if err := incrementUnderLock(path, opts, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const processes = 4
	path := memoryFilePath(t)
	var wg sync.WaitGroup
	for range processes {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockHelperEnv+"="+lockHelperValue, lockHelperPathEnv+"="+path)
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("helper process: %v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	if got := readCounter(t, path); got != processes*lockHelperIncrement {
		t.Errorf("counter = %d, want %d (lost increments)", got, processes*lockHelperIncrement)
	}
	if _, err := os.Lstat(path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock file left behind: %v", err)
	}
}
