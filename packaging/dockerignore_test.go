package packaging

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The build context leaves out what the README's from-source route leaves
// in the clone (the binary, and the memory it creates beside itself, with
// its lock and temporary files), and keeps what the build needs.
func TestDockerignore(t *testing.T) {
	f, err := os.Open("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var patterns []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") || strings.Contains(line, "**") {
			t.Fatalf("pattern %q: this test reads plain patterns only; teach it exceptions and ** first", line)
		}
		patterns = append(patterns, filepath.Clean(strings.TrimPrefix(line, "/")))
	}
	// Docker excludes a path when a pattern matches it or a directory
	// above it, each pattern anchored at the context's root.
	excluded := func(path string) bool {
		for p := path; p != "." && p != "/"; p = filepath.Dir(p) {
			for _, pattern := range patterns {
				if ok, _ := filepath.Match(pattern, p); ok {
					return true
				}
			}
		}
		return false
	}
	for _, path := range []string{
		"mcp-server-memory", "memory-bench", "memory-eval", "mcp-server-memory.exe",
		"memory.jsonl", "memory.jsonl.lock", "memory.jsonl.lock.break",
		"memory.jsonl.0123456789abcdef0123456789abcdef.tmp", "memory.json",
		"cmd/mcp-server-memory/memory.jsonl", ".git/HEAD", "mcp-server-memory.test", "cpu.prof",
	} {
		if !excluded(path) {
			t.Errorf("%s is sent to the Docker build", path)
		}
	}
	for _, path := range []string{
		"go.mod", "go.sum", "cmd/mcp-server-memory/main.go", "internal/cli/export.html",
		"internal/ui/assets/app.js", "testdata/golden/reference-2026.8.31.jsonl", "internal/cli/testdata/script/import.txtar",
	} {
		if excluded(path) {
			t.Errorf("%s is left out of the Docker build, which needs it", path)
		}
	}
}
