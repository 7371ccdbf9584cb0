//go:build unix

package pgcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

func needPostgreSQL(t *testing.T) {
	t.Helper()
	if _, err := binDir(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("no PostgreSQL: %v (install Debian's postgresql)", err)
	}
}

// TestStartDurableAndFast: a cluster keeps PostgreSQL's durability unless
// Fast is asked for, listens where its URL says, and Stop removes it.
func TestStartDurableAndFast(t *testing.T) {
	needPostgreSQL(t)
	for _, tt := range []struct {
		opts Options
		want string // fsync, synchronous_commit, full_page_writes, max_connections
	}{
		{Options{}, "on on on 100"},
		{Options{Fast: true, MaxConnections: 150}, "off off off 150"},
	} {
		ctx := context.Background()
		c, err := Start(ctx, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, c.URL)
		if err != nil {
			c.Stop()
			t.Fatal(err)
		}
		var got string
		err = conn.QueryRow(ctx, `SELECT current_setting('fsync') || ' ' || current_setting('synchronous_commit') || ' ' ||
			current_setting('full_page_writes') || ' ' || current_setting('max_connections')`).Scan(&got)
		conn.Close(ctx)
		if err != nil {
			t.Error(err)
		} else if got != tt.want {
			t.Errorf("%+v: settings %q, want %q", tt.opts, got, tt.want)
		}
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
			t.Errorf("%s is still there after Stop (%v)", c.Dir, err)
		}
	}
}

// A cluster whose starting process is gone (killed before Stop) is stopped
// and removed by the next Start; a live process's cluster is left alone.
func TestStartRemovesAbandonedClusters(t *testing.T) {
	needPostgreSQL(t)
	ctx := context.Background()
	abandoned, err := Start(ctx, Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer abandoned.Stop()
	// Make it look started by a process that has exited.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(abandoned.Dir, ownerFile), []byte(strconv.Itoa(gone.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := Start(ctx, Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abandoned.Dir); !os.IsNotExist(err) {
		t.Errorf("the abandoned cluster's directory is still there (%v)", err)
	}
	if conn, err := pgx.Connect(ctx, abandoned.URL); err == nil {
		conn.Close(ctx)
		t.Error("the abandoned cluster still accepts connections")
	}
	next, err := Start(ctx, Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Stop()
	conn, err := pgx.Connect(ctx, live.URL)
	if err != nil {
		t.Fatalf("a cluster of this live process was stopped: %v", err)
	}
	conn.Close(ctx)
	if err := live.Stop(); err != nil {
		t.Error(err)
	}
}
