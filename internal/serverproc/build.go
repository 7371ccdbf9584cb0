package serverproc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// OurServerPackage is the server the measuring programs build when no
// other command is given.
const OurServerPackage = "github.com/kgmemory/mcp-server-memory/cmd/mcp-server-memory"

// BuildOurServer builds this repository's server into dir and returns the
// binary's path. It must run inside the module (the repository checkout).
func BuildOurServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mcp-server-memory")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, OurServerPackage).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s failed (run from the repository, or pass --cmd): %v\n%s", OurServerPackage, err, out)
	}
	return bin, nil
}

// Version is " (<version>)" from the binary's --version, or "".
func Version(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return ""
	}
	return " (" + strings.TrimSpace(string(out)) + ")"
}

// CopyFile copies a memory file for a server to work on (mode 0600).
func CopyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	return dst.Close()
}

// CommandLine rebuilds a program's command line as a user would type it
// again; goRun ("go run ./cmd/memory-bench") stands for go run's temporary
// binary.
func CommandLine(goRun string, args []string) string {
	prog := args[0]
	if strings.Contains(prog, "go-build") {
		prog = goRun
	}
	parts := []string{prog}
	for _, a := range args[1:] {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// ShellQuote quotes s for a POSIX shell when it needs quoting.
func ShellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FirstLine is s up to its first line break.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
