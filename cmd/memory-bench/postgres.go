package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgcluster"
)

// postgresAuto is the --postgres value that starts a private cluster.
const postgresAuto = "auto"

// parsePostgresFlag checks the value of --postgres: "auto", or a
// postgres:// URL of a database from which the benchmark may create and drop
// databases. An error never quotes the value, which may hold a password.
func parsePostgresFlag(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == postgresAuto {
		return v, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", errors.New(`want "auto" (a private throwaway cluster) or a URL postgres://user:password@host:port/database`)
	}
	if _, err := pgx.ParseConfig(v); err != nil {
		return "", errors.New("not a valid PostgreSQL URL (want postgres://user:password@host:port/database)")
	}
	return v, nil
}

// withDatabase returns the URL admin with its database replaced by name.
func withDatabase(admin, name string) string {
	u, err := url.Parse(admin)
	if err != nil { // parsePostgresFlag accepted it
		panic(err)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// redactURL hides the password of a URL for the report's command line.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	return u.Redacted()
}

// pgBackend keeps each run's memory in a database of its own, created for
// the run and dropped after it: the server's memory "default" (the one a
// server on stdio uses) holding exactly the generated graph.
type pgBackend struct {
	admin   string             // URL of the database to create and drop from
	cluster *pgcluster.Cluster // the private cluster of --postgres auto
	// where says which server it is and how durable its commits are.
	where  string
	prefix string // of the databases' names: unique to this process
	serial int
}

// openPostgres starts a private cluster (flag "auto": PostgreSQL's default
// durability, fsync on) or checks the server at the URL, and reads the
// settings that decide what a commit costs.
func openPostgres(ctx context.Context, flagValue string) (*pgBackend, error) {
	b := &pgBackend{admin: flagValue, prefix: fmt.Sprintf("memory_bench_%d_", os.Getpid())}
	kind := "the server at --postgres"
	if flagValue == postgresAuto {
		c, err := pgcluster.Start(ctx, pgcluster.Options{})
		if err != nil {
			return nil, fmt.Errorf("starting a private PostgreSQL cluster: %w", err)
		}
		b.cluster, b.admin = c, c.URL
		kind = "a private cluster in " + c.Dir + " (initdb defaults, removed after)"
	}
	conn, err := b.connect(ctx, b.admin)
	if err != nil {
		b.close()
		return nil, err
	}
	defer conn.Close(context.Background())
	var version, settings string
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version'),
		string_agg(name || '=' || current_setting(name), ', ' ORDER BY name)
		FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers')`).Scan(&version, &settings)
	if err != nil {
		b.close()
		return nil, fmt.Errorf("reading PostgreSQL's settings: %w", err)
	}
	host, _ := pgstore.Describe(b.admin)
	_, host, _ = strings.Cut(host, " on ")
	b.where = fmt.Sprintf("PostgreSQL %s on %s, %s; %s", version, host, kind, settings)
	return b, nil
}

// connect opens one connection, saying where it failed without quoting
// the URL.
func (b *pgBackend) connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, errors.New("not a valid PostgreSQL URL")
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		where, _ := pgstore.Describe(url)
		return nil, fmt.Errorf("connecting to %s: %w", where, err)
	}
	return conn, nil
}

// close stops the private cluster, if any.
func (b *pgBackend) close() {
	if b.cluster != nil {
		b.cluster.Stop()
		b.cluster = nil
	}
}

func (b *pgBackend) fresh(ctx context.Context, graphFile, _ string) (*memoryCopy, error) {
	b.serial++
	name := b.prefix + strconv.Itoa(b.serial)
	admin, err := b.connect(ctx, b.admin)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("creating the database %s for the run (the --postgres user needs CREATEDB): %w", name, err)
	}
	dbURL := withDatabase(b.admin, name)
	m := &memoryCopy{
		env:      []string{"MEMORY_DATABASE_URL=" + dbURL, "MEMORY_FILE_PATH="},
		database: name,
		bytes:    func(ctx context.Context) int64 { return b.tableBytes(ctx, dbURL) },
		remove:   func() { b.drop(name) },
	}
	if graphFile == "" {
		return m, nil
	}
	start := time.Now()
	ents, rels, err := importFile(ctx, dbURL, graphFile)
	if err != nil {
		m.remove()
		return nil, err
	}
	took := time.Since(start)
	if err := b.checkRows(ctx, dbURL, ents, rels); err != nil {
		m.remove()
		return nil, err
	}
	m.describe = fmt.Sprintf("memory \"default\" of the new database %s: %d entities and %d relations imported with pgstore's Import in %s; tables and indexes %.1f MB",
		name, ents, rels, fmtDuration(took), float64(m.bytes(ctx))/(1<<20))
	return m, nil
}

// importFile imports the memory file into the memory "default" of the
// database at dbURL, in one transaction, and returns what it imported.
func importFile(ctx context.Context, dbURL, graphFile string) (ents, rels int, err error) {
	data, err := os.ReadFile(graphFile)
	if err != nil {
		return 0, 0, err
	}
	f := jsonl.Decode(data)
	if len(f.Problems) > 0 {
		return 0, 0, fmt.Errorf("the generated memory file has a bad line: %s", f.Problems[0])
	}
	st, err := pgstore.Open(ctx, dbURL, "default", pgstore.Options{Logf: func(string, ...any) {}})
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	if err := st.Import(ctx, f.Graph, f.Unreadable, false); err != nil {
		return 0, 0, err
	}
	return len(f.Graph.Entities()), len(f.Graph.Relations()), nil
}

// checkRows makes sure the database holds exactly the imported graph:
// nothing left from before, nothing missing.
func (b *pgBackend) checkRows(ctx context.Context, dbURL string, ents, rels int) error {
	conn, err := b.connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var memories, gotEnts, gotRels int
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM memory_entities),
		(SELECT count(*) FROM memory_relations)`).Scan(&memories, &gotEnts, &gotRels)
	if err != nil {
		return fmt.Errorf("counting what was imported: %w", err)
	}
	if memories != 1 || gotEnts != ents || gotRels != rels {
		return fmt.Errorf("the database holds %d memories, %d entities and %d relations after the import; want 1, %d and %d",
			memories, gotEnts, gotRels, ents, rels)
	}
	return nil
}

// tableBytes is the size of the memory tables and their indexes (TOAST
// included, the write-ahead log not), or 0 if it cannot be read.
func (b *pgBackend) tableBytes(ctx context.Context, dbURL string) int64 {
	conn, err := b.connect(ctx, dbURL)
	if err != nil {
		return 0
	}
	defer conn.Close(context.Background())
	var n int64
	conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
		JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE c.relkind = 'r' AND ns.nspname = current_schema() AND c.relname LIKE 'memor%'`).Scan(&n)
	return n
}

// drop drops a run's database; its server has exited, but a backend may
// linger for a moment, so FORCE (PostgreSQL 13 and later) ends it.
func (b *pgBackend) drop(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := b.connect(ctx, b.admin)
	if err != nil {
		return
	}
	defer admin.Close(context.Background())
	q := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, q+" WITH (FORCE)"); err != nil {
		admin.Exec(ctx, q)
	}
}

// backendMemory samples the private resident memory (RssAnon) of the
// PostgreSQL backends connected to one database, found by their process
// titles ("postgres: USER DATABASE HOST(PORT) STATE"), which is possible
// only when the database server runs on this machine and /proc shows its
// processes. The backends' shared memory (shared_buffers, the binary) is
// shared by every backend and is not counted; nor are the postmaster and
// the cluster's background processes.
type backendMemory struct {
	database string

	mu       sync.Mutex
	peakKB   int64 // largest sum over the backends alive at one sample
	peakProc int   // how many backends that sample saw
	seen     map[int]bool

	sampling *sampler
}

// backendPeak is what backendMemory saw.
type backendPeak struct {
	// PrivateKB is the largest sum of the backends' RssAnon at one sample.
	PrivateKB int64 `json:"privateKB"`
	// AtOnce is the number of backends in that sample; Seen counts every
	// backend of the run (each server start opens its own).
	AtOnce int `json:"atOnce"`
	Seen   int `json:"seen"`
}

func watchBackends(database string, every time.Duration) *backendMemory {
	m := &backendMemory{database: database, seen: map[int]bool{}}
	m.sampling = sampleEvery(every, m.sampleNow)
	return m
}

func (m *backendMemory) sampleNow() {
	pids := backendPIDs(m.database)
	var sum int64
	for _, pid := range pids {
		if kb, ok := readStatusKB(pid, "RssAnon:"); ok {
			sum += kb
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, pid := range pids {
		m.seen[pid] = true
	}
	if sum > m.peakKB {
		m.peakKB, m.peakProc = sum, len(pids)
	}
}

func (m *backendMemory) stopWatching() backendPeak {
	m.sampling.halt()
	m.mu.Lock()
	defer m.mu.Unlock()
	return backendPeak{PrivateKB: m.peakKB, AtOnce: m.peakProc, Seen: len(m.seen)}
}

// backendPIDs lists the processes whose title says they are PostgreSQL
// backends connected to database.
func backendPIDs(database string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && backendOf(b) == database {
			pids = append(pids, pid)
		}
	}
	return pids
}

// backendOf returns the database of a backend's process title, read from
// /proc/PID/cmdline, or "" when the title is not a backend's.
func backendOf(cmdline []byte) string {
	title := string(bytes.TrimRight(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), " "))
	rest, ok := strings.CutPrefix(title, "postgres: ")
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) > 0 && strings.HasSuffix(fields[0], ":") {
		fields = fields[1:] // a cluster_name, as Debian's clusters set: "15/main:"
	}
	// Background processes ("postgres: checkpointer", "postgres: 15/main:
	// walwriter") have fewer fields or no client address.
	if len(fields) < 3 || !strings.Contains(fields[2], "(") && fields[2] != "[local]" {
		return ""
	}
	return fields[1]
}
