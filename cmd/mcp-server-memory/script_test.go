package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs testdata/script/*.txtar: the command line as a user
// meets it (help, version, bad flags, exit codes, the memory file's path
// rules), one readable script per topic. "exec mcp-server-memory" runs this
// test binary as the server (see TestMain), so the scripts count toward
// the package's coverage.
//
// Commands beyond testscript's own:
//
//	status CODE PROGRAM [ARGS...]  run PROGRAM like exec; it must exit with CODE
//	install-server DIR             put the server in $WORK/DIR, so that its
//	                               own directory (the default memory file's
//	                               home) is the script's to arrange
//	readonly DIR                   make DIR unwritable, for root too
//	newest-change VAR              set $VAR to the id of the first record in
//	                               the stdout of the last "history --json",
//	                               and $VAR_TIME to its time
//
// Conditions: [root] is true when the tests run as root; [unwritable] when
// readonly can work here.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			// A script sets the memory file it means.
			env.Setenv("MEMORY_FILE_PATH", "")
			env.Setenv("MEMORY_HTTP_TOKEN", "")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "unwritable":
				return canMakeUnwritable(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":         cmdStatus,
			"install-server": cmdInstallServer,
			"readonly":       cmdReadonly,
			"newest-change":  cmdNewestChange,
		},
	})
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %v", err)
	}
	got := 0
	var exit *exec.ExitError
	if err := ts.Exec(args[1], args[2:]...); errors.As(err, &exit) {
		got = exit.ExitCode()
	} else if err != nil {
		ts.Fatalf("%v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdInstallServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: install-server DIR")
	}
	self, err := os.Executable()
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	// The copy must be named mcp-server-memory to run as the server.
	dst := filepath.Join(dir, "mcp-server-memory")
	if os.Link(self, dst) == nil {
		return
	}
	src, err := os.Open(self)
	ts.Check(err)
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	ts.Check(err)
	_, err = io.Copy(out, src)
	ts.Check(errors.Join(err, out.Close()))
}

// cmdNewestChange sets an environment variable to the newest change's id,
// read from the stdout of "history --json" (newest first).
func cmdNewestChange(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: newest-change VAR")
	}
	var recs []struct {
		ID   string `json:"id"`
		Time string `json:"time"`
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &recs))
	if len(recs) == 0 {
		ts.Fatalf("newest-change: the history is empty")
	}
	ts.Setenv(args[0], recs[0].ID)
	ts.Setenv(args[0]+"_TIME", recs[0].Time)
}

// cmdReadonly makes a directory unwritable. Root ignores permissions, so as
// root it also sets the immutable attribute (chattr +i), removed again when
// the script ends.
func cmdReadonly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readonly DIR")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.Chmod(dir, 0o555))
	ts.Defer(func() { os.Chmod(dir, 0o755) })
	if os.Geteuid() != 0 {
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		ts.Fatalf("chattr +i %s: %v %s", dir, err, out)
	}
	ts.Defer(func() { exec.Command("chattr", "-i", dir).Run() })
}

// canMakeUnwritable reports whether cmdReadonly works here: always for a
// user other than root; for root, where chattr +i works in the temporary
// directory.
var canMakeUnwritable = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return true
	}
	dir, err := os.MkdirTemp("", "unwritable")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	if exec.Command("chattr", "+i", dir).Run() != nil {
		return false
	}
	defer exec.Command("chattr", "-i", dir).Run()
	return os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600) != nil
})
