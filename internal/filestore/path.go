package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
)

// DefaultFileName is the memory file used when MEMORY_FILE_PATH is unset.
const DefaultFileName = "memory.jsonl"

// legacyFileName is the file older releases of the reference server used.
const legacyFileName = "memory.json"

// ResolvePath turns the value of MEMORY_FILE_PATH into the memory file's
// path, as the reference does: an absolute path is used as it is, a leading
// "~" is the user's home, and a relative path is taken relative to serverDir,
// the directory of the server executable. An empty value means
// DefaultFileName in serverDir. The path comes back in clean form
// (filepath.Clean), the one form every message names it by.
//
// When the path names a memory.jsonl that does not exist and a legacy
// memory.json sits beside it (the server's directory of an older reference
// install, or a Docker volume from an old reference image), the legacy file
// is renamed to memory.jsonl and logf says so.
func ResolvePath(value, serverDir string, logf func(format string, args ...any)) (string, error) {
	var path string
	switch {
	case value == "":
		path = filepath.Join(serverDir, DefaultFileName)
	case value == "~" || strings.HasPrefix(value, "~/") || strings.HasPrefix(value, `~\`):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("MEMORY_FILE_PATH %q starts with ~ but the home directory is unknown: %w", value, err)
		}
		path = filepath.Join(home, value[1:])
	case filepath.IsAbs(value):
		path = value
	default:
		path = filepath.Join(serverDir, value)
	}
	path = filepath.Clean(path)
	if filepath.Base(path) == DefaultFileName {
		if err := migrateLegacy(path, logf); err != nil {
			return "", err
		}
	}
	return followLinks(path)
}

// maxLinks bounds how many links followLinks follows, as the kernel's
// ELOOP does, so that a loop of links ends in an error.
const maxLinks = 40

// followLinks returns the file path's chain of symbolic links ends at, or
// path itself when it is not a link. The end may not exist yet (a link to
// a file the first save will create). Only the last element is followed:
// a save renames within the file's directory, which works through linked
// directories. A path that cannot be examined comes back as it is, for
// CheckPath to explain.
func followLinks(path string) (string, error) {
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if hops == maxLinks {
			return "", fmt.Errorf("the memory file %s: more than %d symbolic links in a row (a loop?)", path, maxLinks)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("reading the symbolic link %s: %w", path, err)
		}
		if !filepath.IsAbs(target) {
			// Relative to the link's real directory: a ".." in target
			// climbs from there, not from the name the link was reached by.
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		path = filepath.Clean(target)
	}
}

// migrateLegacy renames memory.json beside path to path, when path does
// not exist and memory.json is a regular file.
func migrateLegacy(path string, logf func(format string, args ...any)) error {
	legacy := filepath.Join(filepath.Dir(path), legacyFileName)
	if fi, err := os.Stat(legacy); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil // both exist (or the new one is unreadable): keep the new one
	}
	if err := os.Rename(legacy, path); err != nil {
		return fmt.Errorf("migrating legacy %s to %s: %w", legacy, path, err)
	}
	logf("Migrated legacy memory file %s to %s", legacy, path)
	return nil
}

// PathError says why the memory file cannot be read or written at its
// path, and what to do about it. Its message is written for the user who
// set MEMORY_FILE_PATH: the server logs it at start, and every tool call
// that fails because of it returns it.
type PathError struct {
	Path    string
	Problem string // what is wrong, naming the path
	Fix     string
	Err     error // the file system's error, if any
}

func (e *PathError) Error() string { return e.Problem + ": " + e.Fix }

func (e *PathError) Unwrap() error { return e.Err }

// CheckPath reports, as a *PathError, what would keep the memory file at
// path from being read or saved: path is a directory, or lies under a file,
// or the file cannot be read, or its directory (or, when that does not
// exist yet, the directory it would be created in) is not writable. It
// returns nil when a save can work. To tell writable from not it creates
// and removes a temporary file (or directory), since permissions alone say
// nothing of read-only mounts, immutable directories or root.
func CheckPath(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return &PathError{Path: path,
			Problem: fmt.Sprintf("the memory file %s is a directory", path),
			Fix:     fmt.Sprintf("set MEMORY_FILE_PATH to a file in it, such as %s", filepath.Join(path, DefaultFileName))}
	case err == nil:
		f, err := os.Open(path)
		if err != nil {
			return &PathError{Path: path, Err: err,
				Problem: fmt.Sprintf("the memory file %s cannot be read (%v)", path, errors.Unwrap(err)),
				Fix:     "make it readable and writable by the user the server runs as, or set MEMORY_FILE_PATH to another file"}
		}
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		// ENOTDIR, most often: some parent is a file.
		if file := fileAbove(path); file != "" {
			return &PathError{Path: path, Err: err,
				Problem: fmt.Sprintf("the memory file %s is under %s, which is a file, not a directory", path, file),
				Fix:     "set MEMORY_FILE_PATH to a file in a directory"}
		}
		return &PathError{Path: path, Err: err,
			Problem: fmt.Sprintf("the memory file %s cannot be reached (%v)", path, errors.Unwrap(err)),
			Fix:     "check the permissions of its directories, or set MEMORY_FILE_PATH to another file"}
	}
	dir := filepath.Dir(path)
	existing := dir
	for {
		fi, err := os.Stat(existing)
		if err == nil {
			if !fi.IsDir() {
				return &PathError{Path: path,
					Problem: fmt.Sprintf("the memory file %s is under %s, which is a file, not a directory", path, existing),
					Fix:     "set MEMORY_FILE_PATH to a file in a directory"}
			}
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return nil // nothing exists up to the root: MkdirAll will say why
		}
		existing = parent
	}
	if err := probeWritable(existing, filepath.Base(path), existing == dir); err != nil {
		where := fmt.Sprintf("the directory of the memory file, %s,", dir)
		if existing != dir {
			where = fmt.Sprintf("%s, where the memory file's directory %s must be created,", existing, dir)
		}
		return &PathError{Path: path, Err: err,
			Problem: fmt.Sprintf("%s is not writable (%v)", where, errors.Unwrap(err)),
			Fix:     "the server keeps the lock and the temporary file of every save beside the memory file: make it writable by the user the server runs as, or set MEMORY_FILE_PATH to a file in a writable directory"}
	}
	return nil
}

// fileAbove returns the nearest parent of path that exists and is not a
// directory, or "".
func fileAbove(path string) string {
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return ""
			}
			return p
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}

// probeWritable creates and removes a temporary file in dir named as a
// save's temporary file of base (so a leftover is cleaned like one), or,
// when dir is only an ancestor to be created under, a temporary directory.
func probeWritable(dir, base string, isFileDir bool) error {
	if !isFileDir {
		d, err := os.MkdirTemp(dir, ".mcp-server-memory-check-*")
		if err != nil {
			return err
		}
		return os.Remove(d)
	}
	p, err := durable.Create(filepath.Join(dir, base), 0o600)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe // what failed, without the temporary file's random name
	} else if err != nil {
		return err
	}
	p.Cleanup()
	return nil
}

// ServerDir returns the directory of the running executable, symlinks
// resolved: where the memory file lives by default.
func ServerDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the server executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe), nil
}
