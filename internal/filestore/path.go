package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultFileName is the memory file used when MEMORY_FILE_PATH is unset.
const DefaultFileName = "memory.jsonl"

// legacyFileName is the file older releases of the reference server used.
const legacyFileName = "memory.json"

// ResolvePath turns the value of MEMORY_FILE_PATH into the memory file's
// path, as the reference does: an absolute path is used as it is, a leading
// "~" is the user's home, and a relative path is taken relative to serverDir,
// the directory of the server executable. An empty value means
// DefaultFileName in serverDir; if serverDir then holds a legacy memory.json
// but no memory.jsonl, the legacy file is renamed and logf says so.
func ResolvePath(value, serverDir string, logf func(format string, args ...any)) (string, error) {
	switch {
	case value == "":
		return migrateLegacy(serverDir, logf)
	case value == "~" || strings.HasPrefix(value, "~/") || strings.HasPrefix(value, `~\`):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("MEMORY_FILE_PATH %q starts with ~ but the home directory is unknown: %w", value, err)
		}
		return filepath.Join(home, value[1:]), nil
	case filepath.IsAbs(value):
		return value, nil
	default:
		return filepath.Join(serverDir, value), nil
	}
}

func migrateLegacy(serverDir string, logf func(format string, args ...any)) (string, error) {
	path := filepath.Join(serverDir, DefaultFileName)
	legacy := filepath.Join(serverDir, legacyFileName)
	if _, err := os.Stat(legacy); err != nil {
		return path, nil
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return path, nil // both exist (or the new one is unreadable): keep the new one
	}
	if err := os.Rename(legacy, path); err != nil {
		return "", fmt.Errorf("migrating legacy %s to %s: %w", legacy, path, err)
	}
	logf("Migrated legacy memory file %s to %s", legacy, path)
	return path, nil
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
