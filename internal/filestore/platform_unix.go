//go:build unix

package filestore

import (
	"io/fs"
	"os"
	"syscall"
)

// fileID identifies the file behind a name: a save renames a new file over
// the old one, so a changed inode means changed content even when size and
// modification time happen to match.
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
