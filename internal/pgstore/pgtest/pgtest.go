// Package pgtest gives tests a PostgreSQL database: the one named by
// MEMORY_TEST_DATABASE_URL, or else a private cluster it starts in a
// temporary directory (initdb and pg_ctl from /usr/lib/postgresql/*/bin, as
// Debian's postgresql package installs them) on a free port of 127.0.0.1,
// and removes at the end.
//
// The cluster comes from pgcluster, with durability off (Fast): test data
// need not survive a crash.
//
// A test package calls Main from its TestMain and URL (or URLWithPassword)
// from each test, and Open for a memory in the database. When no
// PostgreSQL can be had, URL skips the test saying why, except under CI
// (CI=true), where it fails: CI must run these tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	neturl "net/url"
	"os"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgcluster"
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
		var c *pgcluster.Cluster
		c, unusable = pgcluster.Start(context.Background(), pgcluster.Options{Fast: true, MaxConnections: 200})
		if c != nil {
			url = c.URL
			defer c.Stop()
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

// URLWithPassword returns the test database's URL carrying password, and
// the password, which no output of the code under test may show. pgtest's
// own cluster trusts every connection, so a password in the URL is
// accepted; a database named by EnvURL is the caller's, and its URL is
// returned as it is, with secret "".
func URLWithPassword(t testing.TB, password string) (url, secret string) {
	t.Helper()
	url = URL(t)
	if os.Getenv(EnvURL) != "" {
		return url, ""
	}
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.UserPassword(u.User.Username(), password)
	return u.String(), password
}

// Open opens memory name in the database at url, as another replica would,
// and closes it when t ends. opts.Logf defaults to t.Logf.
func Open(t testing.TB, url, name string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	s, err := pgstore.Open(context.Background(), url, name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
