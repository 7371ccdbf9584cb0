//go:build !unix

package filestore

import "io/fs"

// fileID is unknown here; size and modification time still detect changes.
func fileID(fs.FileInfo) uint64 { return 0 }

// syncDir does nothing: directories cannot be opened for syncing on this
// platform, and its rename is durable once the call returns.
func syncDir(string) error { return nil }
