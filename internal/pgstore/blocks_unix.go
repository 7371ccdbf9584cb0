//go:build unix

package pgstore

import "syscall"

// mapBlock returns an empty slice of capacity n (a multiple of the page
// size) in memory of its own, outside the Go heap, for unmapBlock to give
// back at once; nil when the system refuses.
func mapBlock(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b[:0]
}

// unmapBlock gives back a block of mapBlock. Nothing may point into it
// after.
func unmapBlock(b []byte) {
	syscall.Munmap(b[:cap(b)])
}
