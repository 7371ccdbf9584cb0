//go:build unix

package pgcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedStartLeavesNothing: a start that cannot finish (here its
// context has ended before initdb runs) says which program failed and
// leaves no cluster directory behind.
func TestFailedStartLeavesNothing(t *testing.T) {
	needPostgreSQL(t)
	before := clusterDirs()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := Start(ctx, Options{Fast: true, MaxConnections: 10})
	if err == nil {
		c.Stop()
		t.Fatal("Start with an ended context succeeded")
	}
	if !strings.HasPrefix(err.Error(), "initdb: ") {
		t.Errorf("error %q does not name initdb", err)
	}
	if left := clusterDirs() - before; left > 0 {
		t.Errorf("a failed start left %d cluster directories", left)
	}
}

// TestRefusedStartShowsTheServerLog: a server that refuses its settings
// (fewer connections than it reserves for superusers) fails the start with
// the server's log in the error, and leaves no cluster directory behind.
func TestRefusedStartShowsTheServerLog(t *testing.T) {
	needPostgreSQL(t)
	before := clusterDirs()
	c, err := Start(context.Background(), Options{Fast: true, MaxConnections: 1})
	if err == nil {
		c.Stop()
		t.Fatal("a cluster with max_connections=1 started")
	}
	if !strings.Contains(err.Error(), "pg_ctl: ") || !strings.Contains(err.Error(), "server log: ") {
		t.Errorf("error %q does not name pg_ctl with the server's log", err)
	}
	if left := clusterDirs() - before; left > 0 {
		t.Errorf("a refused start left %d cluster directories", left)
	}
}

// clusterDirs counts the cluster directories in the temporary directory.
func clusterDirs() int {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	return len(dirs)
}
