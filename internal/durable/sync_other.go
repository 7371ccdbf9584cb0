//go:build !unix

package durable

// SyncDir does nothing: directories cannot be opened for syncing on this
// platform, and a rename is durable once the call returns.
func SyncDir(string) error { return nil }
