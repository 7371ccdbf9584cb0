//go:build unix

package serverproc

import (
	"os/exec"
	"syscall"
)

// The signals that ask a server to stop, and that end it.
const (
	Terminate = syscall.SIGTERM
	Kill      = syscall.SIGKILL
)

// NewProcessGroup makes the command lead a process group of its own, so the
// program can end everything `sh -c` started (npx and the node it spawns)
// by that one id, and nothing else.
func NewProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// SignalGroup signals the process group the command leads. Errors
// (typically: the group is already gone) are of no interest.
func SignalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
