//go:build !unix

package pgstore

// mapBlock is nil where memory is not mapped by hand: blocks come from the
// Go heap.
func mapBlock(int) []byte { return nil }

func unmapBlock([]byte) {}
