//go:build !(linux || darwin || freebsd)

package meaning

// roomFor does not know the disk's free space on this platform: the
// append itself says whether it fits.
func roomFor(string, int64) error { return nil }
