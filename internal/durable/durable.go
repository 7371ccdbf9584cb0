package durable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// StaleTempAge is how old a leftover temporary file must be before a replace
// removes it: a live writer finishes far sooner.
const StaleTempAge = time.Minute

// Mode returns the mode the files beside the memory file at path take: its
// permission bits, or 0600 when it does not exist (yet).
func Mode(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o600
}

// Pending is a replacement of one file in progress: a temporary file beside
// it that becomes the file at Replace. Call Cleanup in a defer: it removes
// the temporary file unless Replace succeeded.
type Pending struct {
	path, dir, tmp string
	f              *os.File
	synced         fs.FileInfo
	done           bool
}

// Create starts replacing the file at path with a new one of mode perm. The
// directory must exist.
func Create(path string, perm fs.FileMode) (*Pending, error) {
	return CreateKeeping(path, perm, nil)
}

// CreateKeeping is Create, but the stale temporary files whose base names
// keep holds stay: a caller's record still names them (the journal's
// compacting line tells from its temporary file whether a killed
// compaction renamed it).
func CreateKeeping(path string, perm fs.FileMode, keep []string) (*Pending, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	removeStaleTemps(path, keep)
	tmp := filepath.Join(dir, base+"."+randomHex()+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, fmt.Errorf("creating a temporary file beside %s: %w", path, err)
	}
	p := &Pending{path: path, dir: dir, tmp: tmp, f: f}
	// The umask may have narrowed the mode given to OpenFile.
	if err := f.Chmod(perm); err != nil {
		p.Cleanup()
		return nil, fmt.Errorf("setting the mode of %s: %w", tmp, err)
	}
	return p, nil
}

// Write writes to the temporary file.
func (p *Pending) Write(b []byte) (int, error) { return p.f.Write(b) }

// TempPath is the temporary file's path.
func (p *Pending) TempPath() string { return p.tmp }

// Sync makes the new content durable and returns the identity of the file
// written (its inode, size and modification time, which the rename keeps).
// Replace calls it when the caller has not.
func (p *Pending) Sync() (fs.FileInfo, error) {
	if p.synced != nil {
		return p.synced, nil
	}
	// Without this fsync the rename could reach the disk before the data,
	// and a crash would leave an empty or partial file.
	if err := p.f.Sync(); err != nil {
		return nil, fmt.Errorf("syncing %s: %w", p.tmp, err)
	}
	fi, err := p.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading what was written to %s: %w", p.tmp, err)
	}
	if err := p.f.Close(); err != nil {
		return nil, fmt.Errorf("closing %s: %w", p.tmp, err)
	}
	p.synced = fi
	return fi, nil
}

// Replace renames the new file over the file at path and syncs the
// directory, so the new name survives a crash. It returns the new file's
// identity (see Sync).
func (p *Pending) Replace() (fs.FileInfo, error) {
	fi, err := p.Sync()
	if err != nil {
		return nil, err
	}
	if err := os.Rename(p.tmp, p.path); err != nil {
		return nil, fmt.Errorf("replacing %s: %w", p.path, err)
	}
	p.done = true
	if err := SyncDir(p.dir); err != nil {
		return fi, fmt.Errorf("syncing the directory of %s: %w", p.path, err)
	}
	return fi, nil
}

// Cleanup removes the temporary file unless Replace succeeded. It is safe to
// call more than once and after Replace.
func (p *Pending) Cleanup() {
	if p.done {
		return
	}
	p.done = true
	if p.synced == nil {
		p.f.Close()
	}
	os.Remove(p.tmp)
}

// WriteFile replaces the file at path (mode perm) with what write writes, as
// one durable, atomic step, and returns the new file's identity. On failure
// the old file is untouched and no temporary file is left.
func WriteFile(path string, perm fs.FileMode, write func(io.Writer) error) (fs.FileInfo, error) {
	p, err := Create(path, perm)
	if err != nil {
		return nil, err
	}
	defer p.Cleanup()
	if err := write(p); err != nil {
		return nil, fmt.Errorf("writing %s: %w", p.tmp, err)
	}
	return p.Replace()
}

// AppendAt writes b at offset end of the file at path, which holds end bytes
// of complete content, and syncs it. Whatever lies past end (a torn tail a
// killed writer left, or nothing) is cut off first. A file that does not
// exist is created with mode perm and its name made durable; an existing one
// is given mode perm. On failure the file is cut back to end, so no reader
// takes a partial append for content. It returns the file's identity after
// the append.
func AppendAt(path string, end int64, b []byte, perm fs.FileMode) (fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	created := fi.Size() == 0 && end == 0
	if fi.Mode().Perm() != perm {
		if err := f.Chmod(perm); err != nil {
			return nil, fmt.Errorf("setting the mode of %s: %w", path, err)
		}
	}
	if fi.Size() != end {
		if err := f.Truncate(end); err != nil {
			return nil, err
		}
	}
	if _, err := f.WriteAt(b, end); err != nil {
		f.Truncate(end)
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Truncate(end)
		return nil, err
	}
	if created {
		// The file's name must survive a crash as well as its content.
		if err := SyncDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
	}
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	return fi, f.Close()
}

// CompleteLines returns the length of the complete lines of the file at
// path: its size up to and including the last newline (0 for a missing
// file). What follows is a torn line a killed writer left.
func CompleteLines(path string) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	for end := fi.Size(); end > 0; {
		n := min(end, int64(len(buf)))
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && err != io.EOF {
			return 0, err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				return end - n + i + 1, nil
			}
		}
		end -= n
	}
	return 0, nil
}

func randomHex() string {
	var token [16]byte
	rand.Read(token[:])
	return hex.EncodeToString(token[:])
}

var tempNamePattern = regexp.MustCompile(`^\.[0-9a-f]{32}\.tmp$`)

// IsTemp reports whether name (a base name) is a temporary file of the file
// named base.
func IsTemp(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base)
	return ok && tempNamePattern.MatchString(rest)
}

// RemoveStaleTemps deletes the temporary files of the file at path that a
// killed writer left behind more than StaleTempAge ago.
func RemoveStaleTemps(path string) { removeStaleTemps(path, nil) }

func removeStaleTemps(path string, keep []string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !IsTemp(e.Name(), base) || slices.Contains(keep, e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > StaleTempAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
