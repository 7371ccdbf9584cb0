package cli

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the golden sections of testdata/script/*.txtar")

// runTests runs the tests; db_test.go makes it pgtest.Main where pgtest
// builds, so the database scripts have a PostgreSQL.
var runTests = (*testing.M).Run

type mainM struct{ m *testing.M }

func (m mainM) Run() int { return runTests(m.m) }

func TestMain(m *testing.M) {
	testscript.Main(mainM{m}, map[string]func(){
		"mcp-server-memory": func() { os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: each command as a user types
// it, on a memory file in the script's work directory.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("MEMORY_FILE_PATH", filepath.Join(env.WorkDir, "memory.jsonl"))
			env.Values["embedder"] = &embedderState{}
			return copyReference(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"livelock": livelock,
			"cmptimes": cmpTimes,
			"embedder": embedder,
			"reltimes": relTimes,
		},
	})
}

// timeValue is a time as the memory file holds it.
var timeValue = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)

// cmptimes FILE WANT: FILE (or stdout) is WANT once every time in it that
// is within a day of now (written by the commands the script ran) is
// written "T": the members that say when facts were written are where WANT
// has them, whatever the clock said, and older times are as WANT has them.
func cmpTimes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmptimes FILE|stdout WANT")
	}
	got := timeValue.ReplaceAllStringFunc(ts.ReadFile(args[0]), func(v string) string {
		t, err := time.Parse(time.RFC3339, v[1:len(v)-1])
		if err == nil && time.Since(t).Abs() < 24*time.Hour {
			return `"T"`
		}
		return v
	})
	if want := ts.ReadFile(args[1]); got != want {
		ts.Fatalf("%s (times as T) and %s differ:\n%s\nwant\n%s", args[0], args[1], got, want)
	}
}

// copyReference puts the reference server's file for a graph of hard cases
// in the script's work directory.
func copyReference(env *testscript.Env) error {
	// The file the reference server wrote for a graph of hard cases
	// (control characters, separators, emoji, markup), and the same as
	// this server writes it: "\n" after the last line.
	ref, err := os.ReadFile("../../testdata/golden/reference-2026.8.31.jsonl")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(env.WorkDir, "reference-2026.8.31.jsonl"), ref, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(env.WorkDir, "reference-2026.8.31-lf.jsonl"), append(ref, '\n'), 0o600)
}

// livelock FILE: FILE.lock held by a live process of this host (the test
// itself), as a running server holds it.
func livelock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: livelock FILE")
	}
	host, err := os.Hostname()
	ts.Check(err)
	tok := make([]byte, 16)
	rand.Read(tok)
	content := fmt.Sprintf(`{"pid":%d,"hostname":%q,"token":%q}`, os.Getpid(), host, hex.EncodeToString(tok))
	ts.Check(os.WriteFile(ts.MkAbs(args[0])+".lock", []byte(content), 0o600))
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 812345: "812,345", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// relTime is a time written relative to the test's clock: {now-3d},
// {now+2h30m}, {today-3d} (today: 00:00 UTC of the present day); units d,
// h, m, s.
var relTime = regexp.MustCompile(`\{(now|today)(?:([+-])((?:\d+[dhms])+))?\}`)

var relUnit = regexp.MustCompile(`(\d+)([dhms])`)

// reltimes SRC DST: writes SRC to DST with each {now…} or {today…} replaced
// by that time in RFC 3339, so that a script can hold times relative to
// when it runs ("learned 3 days ago").
func relTimes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: reltimes SRC DST")
	}
	now := time.Now().UTC()
	units := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}
	out := relTime.ReplaceAllStringFunc(ts.ReadFile(args[0]), func(v string) string {
		m := relTime.FindStringSubmatch(v)
		t := now
		if m[1] == "today" {
			t = now.Truncate(24 * time.Hour)
		}
		var d time.Duration
		for _, u := range relUnit.FindAllStringSubmatch(m[3], -1) {
			n, _ := strconv.Atoi(u[1])
			d += time.Duration(n) * units[u[2]]
		}
		if m[2] == "-" {
			d = -d
		}
		return t.Add(d).Format(time.RFC3339)
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600))
}
