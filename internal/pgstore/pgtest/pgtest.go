// Package pgtest gives tests a PostgreSQL database: the one named by
// MEMORY_TEST_DATABASE_URL, or else a private cluster it starts in a
// temporary directory (initdb and pg_ctl from /usr/lib/postgresql/*/bin, as
// Debian's postgresql package installs them) on a free port of 127.0.0.1,
// and removes at the end.
//
// A test package calls Main from its TestMain and URL from each test. When
// no PostgreSQL can be had, URL skips the test saying why, except under CI
// (CI=true), where it fails: CI must run these tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// EnvURL names the variable holding an existing database for tests.
const EnvURL = "MEMORY_TEST_DATABASE_URL"

var (
	url      string // the database tests use; "" when none
	unusable error  // why there is none
)

// Main runs the tests of m with a database and returns their exit code,
// after stopping and removing a cluster it started.
func Main(m *testing.M) int {
	if url = os.Getenv(EnvURL); url == "" {
		var stop func()
		url, stop, unusable = startCluster()
		if stop != nil {
			defer stop()
		}
	}
	return m.Run()
}

// URL returns the test database's URL, or skips t (fails it under CI) when
// there is none.
func URL(t testing.TB) string {
	t.Helper()
	if url == "" {
		why := "pgtest.Main did not run (call it from TestMain)"
		if unusable != nil {
			why = unusable.Error()
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("no PostgreSQL for the tests: %s", why)
		}
		t.Skipf("no PostgreSQL: %s (install Debian's postgresql, or set %s)", why, EnvURL)
	}
	return url
}

// MemoryName returns a memory name no other test run uses, so tests on a
// shared database do not meet.
func MemoryName(t testing.TB) string {
	var b [6]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// binDir finds the newest PostgreSQL's binaries.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("initdb not found under /usr/lib/postgresql/*/bin or on PATH")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// startCluster starts a private cluster. initdb refuses to run as root, so
// as root the cluster belongs to the postgres user.
func startCluster() (url string, stop func(), err error) {
	bin, err := binDir()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "memory-pgtest-")
	if err != nil {
		return "", nil, err
	}
	remove := func() { os.RemoveAll(dir) }
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			remove()
			return "", nil, errors.New("running as root and there is no postgres user to own the cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			remove()
			return "", nil, err
		}
	}
	run := func(name string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", name, err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"); err != nil {
		remove()
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		remove()
		return "", nil, err
	}
	// fsync off: a test cluster need not survive a crash, and it is faster.
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", port, dir)
	if err := run("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		remove()
		return "", nil, fmt.Errorf("%v; server log: %s", err, log)
	}
	stop = func() {
		run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
		remove()
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
