//go:build !unix

package main

import (
	"os"
	"os/exec"
)

var (
	terminateSignal = os.Kill
	killSignal      = os.Kill
)

// newProcessGroup does nothing where process groups do not exist.
func newProcessGroup(*exec.Cmd) {}

// signalProcessGroup kills the started process itself.
func signalProcessGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
