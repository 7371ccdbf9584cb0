// Package pgcluster starts a private, throwaway PostgreSQL cluster: initdb
// and pg_ctl from /usr/lib/postgresql/*/bin (as Debian's postgresql package
// installs them) or PATH, a data directory in a new temporary directory, a
// free port of 127.0.0.1 and a Unix socket in that directory only. Stop
// stops it and removes the directory. Tests (pgtest) and the benchmark
// (cmd/memory-bench) use it.
//
// initdb refuses to run as root, so as root the cluster belongs to the
// postgres user, which must exist.
package pgcluster

import (
	"context"
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
	"time"
)

// Options say how the cluster is set up.
type Options struct {
	// Fast trades durability for speed, for data nobody needs after a
	// crash (tests): initdb --no-sync, and fsync, synchronous_commit and
	// full_page_writes off. Without it the cluster runs with PostgreSQL's
	// defaults: every commit is flushed to disk before it is acknowledged.
	Fast bool
	// MaxConnections sets max_connections; 0 keeps PostgreSQL's default
	// (100).
	MaxConnections int
}

// Cluster is a running private cluster.
type Cluster struct {
	// URL reaches the database "postgres" as the superuser postgres, with
	// no password (trust authentication, 127.0.0.1 only).
	URL string
	// Dir holds the data directory, the socket and the server log.
	Dir string

	bin, data string
	cred      *syscall.Credential
}

// Start initialises and starts a cluster; ctx bounds initdb and the start.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "memory-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, bin: bin, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			c.remove()
			return nil, errors.New("running as root and there is no postgres user to own the cluster")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			c.remove()
			return nil, err
		}
	}
	initdb := []string{"-D", c.data, "-A", "trust", "-U", "postgres", "-E", "UTF8"}
	if opts.Fast {
		initdb = append(initdb, "--no-sync")
	}
	if err := c.run(ctx, "initdb", initdb...); err != nil {
		c.remove()
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		c.remove()
		return nil, err
	}
	settings := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", port, dir)
	if opts.Fast {
		settings += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	if opts.MaxConnections > 0 {
		settings += fmt.Sprintf(" -c max_connections=%d", opts.MaxConnections)
	}
	if err := c.run(ctx, "pg_ctl", "-D", c.data, "-o", settings, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		c.remove()
		return nil, fmt.Errorf("%v; server log: %s", err, log)
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c, nil
}

// Stop stops the cluster at once (its data is thrown away) and removes its
// directory.
func (c *Cluster) Stop() error {
	err := c.run(context.Background(), "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	c.remove()
	return err
}

func (c *Cluster) remove() { os.RemoveAll(c.Dir) }

// run runs one of the cluster's programs as the cluster's owner, for two
// minutes at most.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
