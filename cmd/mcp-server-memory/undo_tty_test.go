//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// onTerminal runs the binary with args on a terminal, types input, and
// returns what the terminal showed.
func onTerminal(t *testing.T, input string, args ...string) string {
	t.Helper()
	master, slave := openPTY(t)
	cmd := exec.Command(binary, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out bytes.Buffer
	read := make(chan struct{})
	go func() { defer close(read); io.Copy(&out, master) }() // ends with EIO once the process is gone
	master.WriteString(input)
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s: %v", strings.Join(args, " "), err)
	}
	<-read
	return out.String()
}

// Without --yes, undo asks on the terminal: anything but y changes
// nothing; y undoes.
func TestUndoAsksOnTheTerminal(t *testing.T) {
	dir := t.TempDir()
	file, src := filepath.Join(dir, "memory.jsonl"), filepath.Join(dir, "import.jsonl")
	if err := os.WriteFile(src, []byte(`{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "import", "--file", file, src).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	before, _ := os.ReadFile(file)

	out := onTerminal(t, "n\n", "undo", "--file", file, "--since", "1h")
	if !strings.Contains(out, "The effect on the memory as it is now:") || !strings.Contains(out, "  − entity Alice (person), 1 observation") || !strings.Contains(out, "Undo? [y/N]") || !strings.Contains(out, "Nothing was changed.") {
		t.Errorf("answering n, the terminal showed:\n%s", out)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Errorf("answering n changed the memory:\n%s", after)
	}

	out = onTerminal(t, "y\n", "undo", "--file", file, "--since", "1h")
	if !strings.Contains(out, "Undone.") {
		t.Errorf("answering y, the terminal showed:\n%s", out)
	}
	if after, _ := os.ReadFile(file); bytes.Contains(after, []byte("Alice")) {
		t.Errorf("answering y left the memory:\n%s", after)
	}
}
