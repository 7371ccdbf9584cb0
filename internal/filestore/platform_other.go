//go:build !unix

package filestore

import "io/fs"

// fileID is unknown here; size and modification time still detect changes.
func fileID(fs.FileInfo) uint64 { return 0 }

// ownerOf is unknown here: a journal error then says only what failed.
func ownerOf(string) string { return "" }

func currentUser() string { return "" }
