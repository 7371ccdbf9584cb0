//go:build !unix

package main

import (
	"os"
	"os/exec"
)

var killSignal = os.Kill

func newProcessGroup(cmd *exec.Cmd) {}

// signalProcessGroup ends the command's own process; without process groups
// its children are left to exit when their stdin closes.
func signalProcessGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
