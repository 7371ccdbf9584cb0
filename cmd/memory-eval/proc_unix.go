//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

const killSignal = syscall.SIGKILL

// newProcessGroup makes the command lead a process group of its own, so the
// program can end everything `sh -c` started by that one id, and nothing else.
func newProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalProcessGroup signals the group the command leads. Errors (the group
// is already gone) are of no interest.
func signalProcessGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
