//go:build !unix

package serverproc

import (
	"os"
	"os/exec"
)

// The signals that ask a server to stop, and that end it.
var (
	Terminate = os.Kill
	Kill      = os.Kill
)

// NewProcessGroup does nothing where process groups do not exist.
func NewProcessGroup(*exec.Cmd) {}

// SignalGroup kills the started process itself.
func SignalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
