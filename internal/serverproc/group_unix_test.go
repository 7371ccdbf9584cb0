//go:build unix

package serverproc

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestSignalGroupEndsTheChildrenToo(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	NewProcessGroup(cmd)
	SignalGroup(cmd, Kill) // not started: nothing to signal
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	SignalGroup(cmd, Terminate)
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != Terminate {
			t.Errorf("the group leader ended with %v, want SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		SignalGroup(cmd, Kill)
		t.Fatal("the group did not end")
	}
}
