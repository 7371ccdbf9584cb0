package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestParsePostgresFlag(t *testing.T) {
	for _, good := range []string{"auto", " auto ", "postgres://u:p@db.example:5432/memory?sslmode=disable", "postgresql://127.0.0.1/postgres"} {
		if _, err := parsePostgresFlag(good); err != nil {
			t.Errorf("parsePostgresFlag(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"", "Auto", "localhost", "mysql://u@h/db", "postgres://", "host=h dbname=d", "postgres://u:secret@h:notaport/db"} {
		_, err := parsePostgresFlag(bad)
		if err == nil {
			t.Errorf("parsePostgresFlag(%q) accepted it", bad)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("parsePostgresFlag(%q): the error quotes the password: %v", bad, err)
		}
	}
}

func TestWithDatabase(t *testing.T) {
	got := withDatabase("postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable", "memory_bench_1_2")
	if want := "postgres://u:p@127.0.0.1:5432/memory_bench_1_2?sslmode=disable"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := withDatabase("postgresql://h", "x"); got != "postgresql://h/x" {
		t.Errorf("without a database: got %s", got)
	}
}

func TestRedactArgs(t *testing.T) {
	secret := "postgres://u:secret@h/db"
	args := []string{"--sizes", "10", "--postgres=" + secret}
	got := redactArgs(args, secret, redactURL(secret))
	if strings.Contains(strings.Join(got, " "), "secret") || !strings.Contains(got[2], "postgres://u:xxxxx@h/db") {
		t.Errorf("redactArgs: %q", got)
	}
	if !strings.Contains(args[2], "secret") {
		t.Error("redactArgs changed its input")
	}
}

func TestBackendOf(t *testing.T) {
	tests := []struct{ cmdline, want string }{
		{"postgres: postgres memory_bench_1_2 127.0.0.1(45678) idle\x00\x00", "memory_bench_1_2"},
		{"postgres: postgres memory_bench_1_2 127.0.0.1(45678) idle in transaction", "memory_bench_1_2"},
		{"postgres: 15/main: alice memories [local] SELECT", "memories"},
		{"postgres: checkpointer ", ""},
		{"postgres: 15/main: walwriter", ""},
		{"postgres: logical replication launcher", ""},
		{"/usr/lib/postgresql/15/bin/postgres\x00-D\x00/tmp/data", ""},
		{"sh\x00-c\x00postgres: x y 1.2.3.4(5)", ""},
	}
	for _, tt := range tests {
		if got := backendOf([]byte(tt.cmdline)); got != tt.want {
			t.Errorf("backendOf(%q) = %q, want %q", tt.cmdline, got, tt.want)
		}
	}
}

// TestPostgresFlagErrors: a bad --postgres fails before anything runs, with
// a message saying what is wrong and never the password.
func TestPostgresFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--postgres", "mysql://u:secret@h/db"}, 2, "--postgres: want \"auto\""},
		{[]string{"--postgres", "auto", "--vs", "npx x"}, 2, "--postgres and --vs both"},
		// Nothing listens on port 1: the connection fails before the build.
		{[]string{"--postgres", "postgres://u:secret@127.0.0.1:1/db"}, 1, `--postgres: connecting to PostgreSQL database "db" on 127.0.0.1:1`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
		if strings.Contains(stderr.String(), "secret") {
			t.Errorf("run %q: stderr quotes the password: %s", tt.args, stderr.String())
		}
	}
}

// TestPostgresAutoIsDurable: the private cluster of --postgres auto keeps
// PostgreSQL's default durability, and goes away with its directory.
func TestPostgresAutoIsDurable(t *testing.T) {
	pgtest.URL(t) // skips where there is no PostgreSQL (fails under CI)
	b, err := openPostgres(context.Background(), postgresAuto)
	if err != nil {
		t.Fatal(err)
	}
	dir := b.cluster.Dir
	for _, want := range []string{"fsync=on", "synchronous_commit=on", "full_page_writes=on", "on 127.0.0.1:"} {
		if !strings.Contains(b.where, want) {
			t.Errorf("the private cluster's description lacks %q: %s", want, b.where)
		}
	}
	b.close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory %s is still there after close (%v)", dir, err)
	}
}

// TestPostgresEndToEnd runs the benchmark on a tiny graph with the server
// on a file and on PostgreSQL: every call of both succeeds with the right
// answer, the PostgreSQL run's memory held the graph, the ratios are
// there, and the run's databases are gone afterwards.
func TestPostgresEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs it")
	}
	url := pgtest.URL(t)
	args := []string{"--sizes", "40", "--postgres", url, "--iters", "2", "--min-iters", "1", "--warmups", "1",
		"--starts", "1", "--writes", "6", "--json"}
	var out struct {
		Servers []struct {
			Label, Memory string
		}
		Sizes []struct {
			Entities, Relations int
			Runs                map[string]struct {
				Error      string
				Store      string
				MemoryNote string
				Tools      []ToolResult
				Ratio      map[string]float64 `json:"ratioP50"`
				Writes     *WritesResult
				Backends   *backendPeak `json:"postgresBackends"`
			}
		}
	}
	stderr := runReport(t, args, &out)
	if len(out.Servers) != 2 || out.Servers[0].Label != "file" || out.Servers[1].Label != "postgres" || out.Servers[1].Memory == "" {
		t.Fatalf("servers %+v, want file and postgres (with where its memory is)", out.Servers)
	}
	if len(out.Sizes) != 1 || out.Sizes[0].Entities != 40 {
		t.Fatalf("sizes %+v", out.Sizes)
	}
	sz := out.Sizes[0]
	for _, label := range []string{"file", "postgres"} {
		r, ok := sz.Runs[label]
		if !ok {
			t.Fatalf("no %s run", label)
		}
		if r.Error != "" || r.Store != label || len(r.Tools) != 10 {
			t.Errorf("%s run: error %q, store %q, %d tools", label, r.Error, r.Store, len(r.Tools))
		}
		for _, tool := range r.Tools {
			if tool.Errors > 0 || tool.WrongAnswers > 0 || tool.Checked == 0 {
				t.Errorf("%s %s: %d errors (%s), %d wrong of %d checked %v", label, tool.Label, tool.Errors, tool.FirstError, tool.WrongAnswers, tool.Checked, tool.Problems)
			}
		}
		if r.Writes == nil || r.Writes.Errors > 0 || r.Writes.FileBytes == 0 || r.Writes.FreshRSSKB == 0 {
			t.Errorf("%s writes: %+v", label, r.Writes)
		}
	}
	pg := sz.Runs["postgres"]
	if !strings.Contains(pg.MemoryNote, "40 entities and 80 relations imported") {
		t.Errorf("memory note %q", pg.MemoryNote)
	}
	if pg.Ratio["read_graph"] <= 0 || pg.Ratio["start to first answer"] <= 0 {
		t.Errorf("postgres/file ratios missing: %v", pg.Ratio)
	}
	if os.Getenv(pgtest.EnvURL) == "" { // a local cluster: its backends are visible
		if pg.Backends == nil || pg.Backends.PrivateKB == 0 || pg.Backends.Seen == 0 {
			t.Errorf("no PostgreSQL backends seen: %+v", pg.Backends)
		}
	}
	table := stderr.String()
	for _, want := range []string{"postgres/file p50", "peak RSS, PostgreSQL backends, private (MB)", "counts its process tree only"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}

	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var left []string
	rows, _ := conn.Query(context.Background(), "SELECT datname FROM pg_database WHERE datname LIKE 'memory_bench_%'")
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("databases left behind: %v", left)
	}
}
