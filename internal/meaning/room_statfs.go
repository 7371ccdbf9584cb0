//go:build linux || darwin || freebsd

package meaning

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// roomFor refuses to append n bytes to the vectors file at path when the
// disk holding it would keep less than diskReserve free after: the
// vectors can be computed again, the memory's own writes cannot wait.
func roomFor(path string, n int64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return nil // no figure: the append itself says whether it fits
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	if free < uint64(n)+diskReserve {
		return fmt.Errorf("not writing %s: its disk has %d KiB free, and search by meaning leaves the last %d MiB to the memory", path, free>>10, diskReserve>>20)
	}
	return nil
}
