package filestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"sync"
	"time"
)

// ErrLockTimeout is wrapped by the error AcquireLock returns when the lock
// stays busy for longer than LockOptions.Timeout. The error's text is the
// user-facing message docs/design.md §6 fixes; match it with errors.Is, not
// by text.
var ErrLockTimeout = errors.New("timed out waiting for the memory file lock")

// ErrLockLost is wrapped by the error Release returns when the lock file no
// longer holds our token: another process judged our lock stale and broke it
// while we held it, so our write may have overlapped with someone else's.
var ErrLockLost = errors.New("the memory file lock was broken by another process while held")

// Defaults from docs/design.md §6. They are shared with servers written in
// other languages, so changing them changes the protocol.
const (
	defaultLockTimeout     = 60 * time.Second
	defaultRefreshInterval = 15 * time.Second
	defaultStaleAfter      = 30 * time.Second

	minRetryDelay = 10 * time.Millisecond
	maxRetryDelay = 20 * time.Millisecond
)

// LockOptions tunes AcquireLock. The zero value gives the timings
// docs/design.md §6 prescribes; tests shorten them.
type LockOptions struct {
	// Timeout bounds how long AcquireLock waits. 0 means 60 s.
	Timeout time.Duration
	// RefreshInterval is how often the holder touches the lock file's mtime
	// so waiters can tell a slow holder from a dead one. 0 means 15 s.
	RefreshInterval time.Duration
	// StaleAfter is the mtime age after which a lock counts as abandoned,
	// whoever wrote it. 0 means 30 s.
	StaleAfter time.Duration
	// Logf reports that a stale lock is being broken; nil discards it
	// (the command hands down its one logger).
	Logf func(format string, args ...any)
}

func (o LockOptions) withDefaults() LockOptions {
	if o.Timeout <= 0 {
		o.Timeout = defaultLockTimeout
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = defaultRefreshInterval
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = defaultStaleAfter
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// Lock is a held cross-process lock on one memory file. Several server
// processes (and servers in other languages implementing the same lock,
// docs/design.md §6) may write the same file, so every read-modify-write
// runs between AcquireLock and Release.
type Lock struct {
	path  string // the .lock file
	token string

	stopRefresh chan struct{}
	refreshDone chan struct{}

	releaseOnce sync.Once
	releaseErr  error
}

// AcquireLock takes the lock for the memory file at path (the lock file is
// path+".lock"), waiting while another process holds it and breaking the lock
// if its holder is gone. It fails with an error wrapping ErrLockTimeout after
// opts.Timeout, with one wrapping ctx's error if ctx ends first, and at once
// if the lock file cannot be created for any reason other than already
// existing (for example, an unwritable directory).
func AcquireLock(ctx context.Context, path string, opts LockOptions) (*Lock, error) {
	opts = opts.withDefaults()
	// Without a hostname we cannot tell that a lock was written on this
	// machine, so the pid rule stays off and only the mtime rule applies.
	hostname, _ := os.Hostname()
	w := &lockWaiter{
		lockPath:  path + ".lock",
		breakPath: path + ".lock.break",
		hostname:  hostname,
		opts:      opts,
	}
	token := newLockToken()
	content := encodeLockInfo(lockInfo{PID: os.Getpid(), Hostname: hostname, Token: token})

	deadline := time.NewTimer(opts.Timeout)
	defer deadline.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return nil, w.canceled(ctx)
		}
		created, err := w.tryCreate(content)
		if err != nil {
			return nil, err
		}
		if created {
			return startLock(w.lockPath, token, opts.RefreshInterval), nil
		}
		broke, err := w.breakIfStale()
		if err != nil {
			return nil, err
		}
		if broke {
			continue // the way may be clear: try again without sleeping
		}
		select {
		case <-ctx.Done():
			return nil, w.canceled(ctx)
		case <-deadline.C:
			return nil, &lockTimeoutError{timeout: opts.Timeout, lockPath: w.lockPath}
		case <-time.After(retryDelay()):
		}
	}
}

// Release stops refreshing and removes the lock file if it still holds our
// token, so it never deletes a lock another process took after breaking ours.
// It returns an error wrapping ErrLockLost when the token is gone, or the
// file system's error when the lock file cannot be read or removed. Calling
// Release again returns the first call's result.
func (l *Lock) Release() error {
	l.releaseOnce.Do(func() {
		close(l.stopRefresh)
		<-l.refreshDone
		l.releaseErr = l.remove()
	})
	return l.releaseErr
}

func startLock(lockPath, token string, refreshInterval time.Duration) *Lock {
	l := &Lock{
		path:        lockPath,
		token:       token,
		stopRefresh: make(chan struct{}),
		refreshDone: make(chan struct{}),
	}
	go l.refresh(refreshInterval)
	return l
}

// refresh keeps the lock's mtime young so that waiters, which may live on
// other machines and cannot check our pid, do not take us for dead.
func (l *Lock) refresh(interval time.Duration) {
	defer close(l.refreshDone)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-l.stopRefresh:
			return
		case <-ticker.C:
			if held, _ := l.holds(); !held {
				// Our lock was broken; touching the file now would keep
				// someone else's lock alive on our behalf.
				return
			}
			now := time.Now()
			// A failed touch is retried on the next tick; the lock only
			// goes stale after several missed ticks.
			_ = os.Chtimes(l.path, now, now)
		}
	}
}

// Check returns an error wrapping ErrLockLost unless the lock file still
// carries our token. A writer checks just before it commits a save: a holder
// that stalled past the stale timeout may have had its lock broken, and its
// save must not overwrite the newer writer's.
func (l *Lock) Check() error {
	held, err := l.holds()
	if err != nil {
		return fmt.Errorf("checking the memory file lock %s: %w", l.path, err)
	}
	if !held {
		return fmt.Errorf("the memory file lock %s: %w", l.path, ErrLockLost)
	}
	return nil
}

// holds reports whether the lock file still carries our token.
func (l *Lock) holds() (bool, error) {
	content, err := os.ReadFile(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	info, ok := parseLockInfo(content)
	return ok && info.Token == l.token, nil
}

func (l *Lock) remove() error {
	held, err := l.holds()
	if err != nil {
		return fmt.Errorf("releasing the memory file lock %s: %w", l.path, err)
	}
	if !held {
		return fmt.Errorf("releasing the memory file lock %s: %w", l.path, ErrLockLost)
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("releasing the memory file lock %s: %w", l.path, err)
	}
	return nil
}

// lockInfo is the lock file's content. Field order is the wire order.
type lockInfo struct {
	PID      int    `json:"pid"`
	Hostname string `json:"hostname"`
	Token    string `json:"token"`
}

// encodeLockInfo renders the exact bytes docs/design.md §6 prescribes:
// compact JSON, no trailing newline, and no HTML escaping (servers in other
// languages write "<" as is, and so do we).
func encodeLockInfo(info lockInfo) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(info); err != nil {
		// A struct of an int and two strings always encodes.
		panic(fmt.Sprintf("encoding lock info: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func parseLockInfo(content []byte) (lockInfo, bool) {
	var info lockInfo
	if err := json.Unmarshal(content, &info); err != nil {
		return lockInfo{}, false
	}
	return info, true
}

// newLockToken returns 32 lowercase hex digits. The token, not the pid, is
// what proves a lock file is ours: pids are reused and repeat across hosts.
func newLockToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: crypto/rand crashes the program instead
	return hex.EncodeToString(b[:])
}

// retryDelay is random so that waiters that saw the lock busy at the same
// moment do not retry in lockstep.
func retryDelay() time.Duration {
	return minRetryDelay + mathrand.N(maxRetryDelay-minRetryDelay+1)
}

// lockTimeoutError carries the exact message a user sees as a tool error.
type lockTimeoutError struct {
	timeout  time.Duration
	lockPath string
}

func (e *lockTimeoutError) Error() string {
	return fmt.Sprintf("Timed out after %d ms waiting for the memory file lock %s",
		e.timeout.Milliseconds(), e.lockPath)
}

func (e *lockTimeoutError) Unwrap() error { return ErrLockTimeout }

// Timeout reports true: the lock was busy, nothing was written, and trying
// again later may work. Callers that serve either store (the web page) test
// for this method rather than for each store's error.
func (e *lockTimeoutError) Timeout() bool { return true }

// lockWaiter is one AcquireLock call's view of the lock files.
type lockWaiter struct {
	lockPath  string
	breakPath string
	hostname  string
	opts      LockOptions
}

func (w *lockWaiter) canceled(ctx context.Context) error {
	return fmt.Errorf("waiting for the memory file lock %s: %w", w.lockPath, context.Cause(ctx))
}

// tryCreate creates the lock file holding content. It reports false, nil
// when the lock is busy.
func (w *lockWaiter) tryCreate(content []byte) (bool, error) {
	f, err := os.OpenFile(w.lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return false, fmt.Errorf("taking the memory file lock: %w (the memory file's directory must be writable)", err)
	}
	if err != nil {
		return false, fmt.Errorf("taking the memory file lock: %w", err)
	}
	_, werr := f.Write(content)
	if err := errors.Join(werr, f.Close()); err != nil {
		// Nobody else can have created the file since we did, so this
		// removes our own half-written lock.
		_ = os.Remove(w.lockPath)
		return false, fmt.Errorf("writing the memory file lock %s: %w", w.lockPath, err)
	}
	return true, nil
}

// lockSnapshot is what a waiter saw of a lock file: enough to tell later
// whether the file is still the very one it judged stale.
type lockSnapshot struct {
	stat    fs.FileInfo // of the lock itself, not what a symlink points to
	content []byte      // nil unless the lock is a regular file
}

// readLockSnapshot reads the lock's content only when it is a regular file.
// Anything else (a dangling symlink left by a tool, a directory made by
// hand) has no content a server wrote, and reading through a symlink would
// judge some other file; its age alone still tells whether it is stale.
func readLockSnapshot(path string) (lockSnapshot, error) {
	stat, err := os.Lstat(path)
	if err != nil {
		return lockSnapshot{}, err
	}
	if !stat.Mode().IsRegular() {
		return lockSnapshot{stat: stat}, nil
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return lockSnapshot{}, err
	}
	return lockSnapshot{stat: stat, content: content}, nil
}

func (s lockSnapshot) sameAs(other lockSnapshot) bool {
	return os.SameFile(s.stat, other.stat) &&
		s.stat.ModTime().Equal(other.stat.ModTime()) &&
		bytes.Equal(s.content, other.content)
}

// isStale applies the two staleness rules of docs/design.md §6. Content that
// does not parse may be a lock whose writer has created the file but not yet
// written it, so only the mtime rule can condemn it.
func (w *lockWaiter) isStale(s lockSnapshot, now time.Time) bool {
	if now.Sub(s.stat.ModTime()) > w.opts.StaleAfter {
		return true
	}
	info, ok := parseLockInfo(s.content)
	return ok && w.hostname != "" && info.Hostname == w.hostname && processGone(info.PID)
}

// breakIfStale removes the lock file if its holder is gone, and reports
// whether it did. Many waiters may judge the same lock stale at once; the
// .break file lets exactly one of them act, and the re-read under it makes
// sure that one removes the lock it judged and not a fresh one taken since.
//
// It returns an error only for a stale lock that cannot be removed without
// deleting someone's files (a directory that is not empty): waiting would
// not help.
func (w *lockWaiter) breakIfStale() (bool, error) {
	observed, err := readLockSnapshot(w.lockPath)
	if err != nil || !w.isStale(observed, time.Now()) {
		return false, nil
	}

	f, err := os.OpenFile(w.breakPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			w.removeAbandonedBreak()
		}
		return false, nil // someone else is breaking it; keep waiting
	}
	_ = f.Close()
	defer os.Remove(w.breakPath)

	current, err := readLockSnapshot(w.lockPath)
	if err != nil || !current.sameAs(observed) || !w.isStale(current, time.Now()) {
		return false, nil
	}
	if current.stat.IsDir() {
		// Only an empty directory is removed: a lock never holds files,
		// so files inside are someone's data.
		if entries, err := os.ReadDir(w.lockPath); err == nil && len(entries) > 0 {
			return false, fmt.Errorf("the memory file lock %s is a directory with files in it, not a lock this server made: move it away", w.lockPath)
		}
	}
	w.opts.Logf("Breaking stale memory file lock %s", w.lockPath)
	// os.Remove removes the lock itself whatever its kind: it unlinks a
	// file or a symlink (never the symlink's target) and removes an empty
	// directory.
	if err := os.Remove(w.lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return true, nil
}

// removeAbandonedBreak clears a .break file whose creator died mid-break, so
// that it cannot wedge every waiter. The caller does not retry the break at
// once: waiting a retry delay first makes it unlikely that a slower waiter,
// which saw the same old .break file, deletes the one we create next.
func (w *lockWaiter) removeAbandonedBreak() {
	stat, err := os.Lstat(w.breakPath)
	if err != nil || time.Since(stat.ModTime()) <= w.opts.StaleAfter {
		return
	}
	_ = os.Remove(w.breakPath)
}
