//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

const (
	terminateSignal = syscall.SIGTERM
	killSignal      = syscall.SIGKILL
)

// newProcessGroup makes the command lead a process group of its own, so the
// benchmark can end everything `sh -c` started (npx and the node it spawns)
// by that one id, and nothing else.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalProcessGroup signals the process group the command leads. Errors
// (typically: the group is already gone) are of no interest.
func signalProcessGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
