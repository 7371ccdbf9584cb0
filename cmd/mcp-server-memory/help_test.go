package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/cli"
)

// TestHelpNamesEverything: the main --help names every command, every
// flag and every MEMORY_* variable the server and the commands read, so
// that it cannot fall behind them.
func TestHelpNamesEverything(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--help"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard); code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	help := out.String()

	var list bytes.Buffer
	cli.Run([]string{"help"}, strings.NewReader(""), &list, io.Discard)
	commands := regexp.MustCompile(`(?m)^  ([a-z]+)\s`).FindAllStringSubmatch(list.String(), -1)
	if len(commands) < 10 {
		t.Fatalf("the commands' list: %q", list.String())
	}
	for _, c := range commands {
		if c[1] != "help" && !regexp.MustCompile(`\b`+c[1]+`\b`).MatchString(help) {
			t.Errorf("--help does not name the command %s", c[1])
		}
	}

	fs := flag.NewFlagSet("", flag.ContinueOnError)
	defineFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(help, "--"+f.Name+" ") {
			t.Errorf("--help does not name the flag --%s", f.Name)
		}
	})

	files, err := filepath.Glob("../../internal/memoryconfig/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("memoryconfig's files: %v %v", files, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(MEMORY_[A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
			seen[m[1]] = true
		}
	}
	if len(seen) < 8 {
		t.Fatalf("the variables memoryconfig reads: %v", seen)
	}
	for v := range seen {
		if !strings.Contains(help, v) {
			t.Errorf("--help does not name %s", v)
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
