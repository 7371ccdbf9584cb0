//go:build windows

package filestore

import (
	"math"
	"syscall"
)

const (
	processQueryLimitedInformation = 0x1000
	errorInvalidParameter          = syscall.Errno(87) // OpenProcess: no such pid
	stillActive                    = 259
)

// processGone reports whether no process with this pid exists on this
// machine. Anything short of certainty counts as alive, because wrongly
// breaking a live lock loses writes while wrongly keeping a dead one only
// costs a wait for the mtime rule.
func processGone(pid int) bool {
	if pid <= 0 || pid > math.MaxUint32 {
		return false
	}
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return err == errorInvalidParameter
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code != stillActive
}
