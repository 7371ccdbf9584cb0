//go:build unix

package filestore

import (
	"io/fs"
	"os"
	"os/user"
	"strconv"
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

// ownerOf names the user who owns the file at path ("" when it is this
// process's user, or unknown).
func ownerOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	return userName(strconv.FormatUint(uint64(st.Uid), 10))
}

func currentUser() string { return userName(strconv.Itoa(os.Getuid())) }

// userName is the login name of the user of uid, else "uid N".
func userName(uid string) string {
	if u, err := user.LookupId(uid); err == nil {
		return u.Username
	}
	return "uid " + uid
}
