//go:build unix

package filestore

import (
	"errors"
	"syscall"
)

// processGone reports whether no process with this pid exists on this
// machine. Signal 0 checks existence without delivering anything; EPERM
// means the process exists but belongs to another user. Anything short of
// ESRCH counts as alive, because wrongly breaking a live lock loses writes
// while wrongly keeping a dead one only costs a wait for the mtime rule.
func processGone(pid int) bool {
	if pid <= 0 {
		// kill(0) and kill(-n) address process groups, not a process.
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
