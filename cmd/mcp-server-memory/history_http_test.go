//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// Over HTTP with a tokens file, a write is recorded as made by the label
// the file gives the request's token, in both protocol generations; a
// token without a label is recorded by the client's own name.
func TestHistoryRecordsTokenLabel(t *testing.T) {
	const labelled, plain = "history-labelled-0123456789abcdef", "history-plain-0123456789abcdef"
	dir := t.TempDir()
	mem, tokens := filepath.Join(dir, "mem"), filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(labelled+" alpha write Alice's laptop\n"+plain+" alpha write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens, "--memories", mem)
	cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=")
	child := startChild(t, cmd)
	base := "http://" + waitLog(t, child.stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, token := range []string{labelled, plain} {
			name := version + "-" + token[:14]
			if text, isErr := callTool(t, mcpSession(t, base, "alpha", version, token), "create_entities", entityArgs(name)); isErr {
				t.Fatalf("%s: %s", name, text)
			}
		}
	}
	var got []string
	for _, r := range readHistory(t, filepath.Join(mem, "alpha.jsonl")) {
		got = append(got, r.Changes[0].Entity.Name+": "+r.Client)
	}
	want := []string{
		"2026-07-28-history-plain-: bounds",
		"2026-07-28-history-labell: Alice's laptop",
		"2025-11-25-history-plain-: bounds",
		"2025-11-25-history-labell: Alice's laptop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
}
