package pgstore

// Reads reports how often s read the memory whole and how often only the
// changes since its revision.
func (s *Store) Reads() (whole, delta int64) { return s.wholeReads.Load(), s.deltaReads.Load() }

// SetRemovedKept makes the stores remember removals for the last kept
// writes, pruned every every writes, until the returned func restores it.
func SetRemovedKept(kept, every int64) (restore func()) {
	k, e := removedKept, removedPruneEvery
	removedKept, removedPruneEvery = kept, every
	return func() { removedKept, removedPruneEvery = k, e }
}
