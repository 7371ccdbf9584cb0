package pgcluster

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartDurableAndFast: a cluster keeps PostgreSQL's durability unless
// Fast is asked for, listens where its URL says, and Stop removes it.
func TestStartDurableAndFast(t *testing.T) {
	if _, err := binDir(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("no PostgreSQL: %v (install Debian's postgresql)", err)
	}
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
