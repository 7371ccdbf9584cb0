// Package pgcluster starts a private, throwaway PostgreSQL cluster: initdb
// and pg_ctl from /usr/lib/postgresql/*/bin (as Debian's postgresql package
// installs them) or PATH, a data directory in a new temporary directory, a
// free port of 127.0.0.1 and a Unix socket in that directory only. Stop
// stops it and removes the directory. Tests (pgtest) and the benchmark
// (cmd/memory-bench) use it.
//
// initdb refuses to run as root, so as root the cluster belongs to the
// postgres user, which must exist.
//
// A process killed before it could call Stop (a test binary killed at its
// timeout, say) leaves its cluster running. Each cluster's directory names
// the process that started it, and Start stops and removes the clusters of
// processes that are gone, so they do not pile up on a developer's machine.
package pgcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	cred      *credential // the owner the programs run as; nil: this process
}

// Stop stops the cluster at once (its data is thrown away) and removes its
// directory.
func (c *Cluster) Stop() error {
	err := c.run(context.Background(), "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
	c.remove()
	return err
}

func (c *Cluster) remove() { os.RemoveAll(c.Dir) }

const (
	dirPrefix = "memory-pg-"
	ownerFile = "owner.pid" // the pid of the process that started the cluster
)

// binDir finds the newest PostgreSQL's binaries: Debian's layout, else
// initdb on PATH.
func binDir() (string, error) { return binDirIn("/usr/lib/postgresql") }

// binDirIn is binDir with Debian's layout under root.
func binDirIn(root string) (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("initdb not found under %s or on PATH", filepath.Join(root, "*", "bin"))
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
