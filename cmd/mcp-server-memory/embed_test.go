//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// TestEmbedStopsAndContinues: the embed command, stopped by Ctrl-C while a
// batch is in flight, finishes that batch, keeps it, says how far it got
// and exits 130; run again, it asks only for the texts still without a
// vector. On a terminal its progress is a bar redrawn in place; in a log,
// plain lines.
func TestEmbedStopsAndContinues(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	var lines []string
	for i := range 5 {
		lines = append(lines, fmt.Sprintf(`{"type":"entity","name":"E%d","entityType":"thing","observations":["first fact %d","second fact %d"]}`, i, i, i))
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MEMORY_EMBEDDINGS_URL=" + stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m"}

	// The first batch is held until the process has heard Ctrl-C.
	stub.SetDelay(time.Hour)
	tty, term := openPTY(t)
	cmd := serverCmd(file, env...)
	cmd.Args = append(cmd.Args, "embed", "--batch", "4")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, term
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close()
	screen := testlog.OnFailure(t, "the terminal")
	go io.Copy(screen, tty)
	waitFor(t, "the first request", func() bool { return stub.Requests() == 1 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the notice of Ctrl-C", func() bool { return strings.Contains(screen.String(), "stopping after the batch in flight") })
	stub.SetDelay(0)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("first run: %v, want exit 130\n%s", err, screen)
	}
	waitFor(t, "the last words on the terminal", func() bool { return strings.Contains(screen.String(), "run embed again") })
	got := screen.String()
	for _, want := range []string{
		"\r\x1b[K[------------------------------] 0 of 10 texts have a vector  0%",
		"\r\x1b[K[############------------------] 4 of 10 texts have a vector  40%",
		"stopped by Ctrl-C: 4 of 10 texts have a vector (4 computed now); run embed again to continue",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, got)
		}
	}
	if n := len(stub.Texts("m")); n != 4 || stub.Requests() != 1 {
		t.Fatalf("after Ctrl-C: %d texts in %d requests, want the one batch of 4", n, stub.Requests())
	}

	// Again, into a log: the six texts left, in two requests.
	cmd = serverCmd(file, env...)
	cmd.Args = append(cmd.Args, "embed", "--batch", "4")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"mcp-server-memory embed: 4 of 10 texts have a vector (40%)\n",
		"mcp-server-memory embed: 10 of 10 texts have a vector (100%)\n",
		`Vectors         10 of 10 texts, by model "m" (6 computed now)`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("second run's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "\r") {
		t.Errorf("a log got a terminal's bar:\n%q", out)
	}
	texts := stub.Texts("m")
	seen := map[string]bool{}
	for _, s := range texts {
		if seen[s] {
			t.Errorf("%q embedded twice", s)
		}
		seen[s] = true
	}
	if len(texts) != 10 || stub.Requests() != 3 {
		t.Errorf("in all %d texts in %d requests, want 10 in 3", len(texts), stub.Requests())
	}
}

// openPTY opens a pseudo-terminal: the side a program writes to (term)
// and the side that reads what it shows (tty).
func openPTY(t *testing.T) (tty, term *os.File) {
	t.Helper()
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	if err := unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	return tty, term
}
