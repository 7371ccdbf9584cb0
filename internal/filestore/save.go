package filestore

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// staleTempAge is how old a leftover temporary file must be before a save
// removes it: a live writer finishes far sooner.
const staleTempAge = time.Minute

// writeFileAtomic replaces path with what write writes: a reader sees either the old file
// or the new one, and after it returns the new one survives a crash.
// beforeRename, if not nil, runs when the new content is durable but not yet
// in place; an error from it abandons the save.
// An existing file keeps its mode; a new one gets 0600. The directory must
// exist. On failure the old file is untouched and no
// temporary file is left.
func writeFileAtomic(path string, write func(io.Writer) error, beforeRename func() error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	removeStaleTemps(dir, base)

	tmp := tempName(dir, base)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("creating a temporary file beside the memory file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// The umask may have narrowed the mode given to OpenFile.
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", tmp, err)
	}
	if err := write(saveWriter(f)); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	// Without this fsync the rename could reach the disk before the data,
	// and a crash would leave an empty or partial memory file.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing the memory file: %w", err)
	}
	// The rename lives in the directory; sync it so the new name survives.
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing the directory of the memory file: %w", err)
	}
	return nil
}

// saveWriter is what a save writes the temporary file through. Tests swap
// it to make a write fail part-way, as a full disk does, which no file
// permission can do for root.
var saveWriter = func(f *os.File) io.Writer { return f }

// tempName returns a fresh name for a temporary file of the memory file
// base in dir: base.<32 hex>.tmp, as docs/design.md §5 names them.
func tempName(dir, base string) string {
	var token [16]byte
	rand.Read(token[:])
	return filepath.Join(dir, base+"."+hex.EncodeToString(token[:])+".tmp")
}

var tempNamePattern = regexp.MustCompile(`^\.[0-9a-f]{32}\.tmp$`)

// removeStaleTemps deletes temporary files of this memory file that a killed
// writer left behind more than a minute ago.
func removeStaleTemps(dir, base string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, base)
		if !ok || !tempNamePattern.MatchString(rest) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			os.Remove(filepath.Join(dir, name))
		}
	}
}
