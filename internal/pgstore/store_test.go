package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
	"github.com/kgmemory/mcp-server-memory/internal/storetest"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

var ctx = context.Background()

func dump(t *testing.T, s *pgstore.Store) string {
	t.Helper()
	var out string
	if err := s.View(context.Background(), func(g *graph.Graph) error { out = storetest.Dump(g); return nil }); err != nil {
		t.Fatalf("View: %v", err)
	}
	return out
}

// admin connects to the test database beside the stores, under another
// application name.
func admin(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, pgtest.URL(t)+"&application_name=memory-test-admin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

// Two stores on one memory, as two replicas: 8 writers × 100 mixed writes,
// spread over both, lose nothing, and a watch on the first hears writes made
// through the second.
func TestConcurrentReplicas(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	var heard atomic.Int64
	wctx, cancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); a.Watch(wctx, 50*time.Millisecond, func() { heard.Add(1) }) }()
	defer func() { cancel(); <-watched }()
	if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "hub", EntityType: "hub", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}

	const writers, writes = 8, 100
	// Writer w's k-th entity (k a multiple of 4): created with o{k}, gets
	// o{k+1}, a relation to the hub at k+2, and at k+3 loses o{k}, or, every
	// fifth entity, is deleted with its relation.
	deleted := func(k int) bool { return k%20 == 16 }
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				s := [2]*pgstore.Store{a, b}[(w+i)%2]
				k := i - i%4
				name := fmt.Sprintf("w%d-e%02d", w, k)
				_, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
					switch i % 4 {
					case 0:
						g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{fmt.Sprint("o", i)}}})
					case 1:
						_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{fmt.Sprint("o", i)}}})
						return err
					case 2:
						_, err := g.CreateRelations([]graph.Relation{{From: name, To: "hub", RelationType: fmt.Sprint("r", i)}})
						return err
					case 3:
						if deleted(k) {
							g.DeleteEntities([]string{name})
						} else {
							g.DeleteObservations([]graph.ObservationDeletion{{EntityName: name, Observations: []string{fmt.Sprint("o", k)}}})
						}
					}
					return nil
				}})
				if err != nil {
					errs <- fmt.Errorf("writer %d write %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var wantEnts, wantRels []string
	for w := range writers {
		for k := 0; k < writes; k += 4 {
			if deleted(k) {
				continue
			}
			name := fmt.Sprintf("w%d-e%02d", w, k)
			wantEnts = append(wantEnts, fmt.Sprintf("%s [o%d]", name, k+1))
			wantRels = append(wantRels, fmt.Sprintf("%s>hub:r%d", name, k+2))
		}
	}
	slices.Sort(wantEnts)
	slices.Sort(wantRels)
	want := fmt.Sprint(wantEnts, wantRels)
	for i, s := range []*pgstore.Store{a, b, open(t)} {
		var gotEnts, gotRels []string
		var order []string
		if err := s.View(context.Background(), func(g *graph.Graph) error {
			for _, e := range g.Entities() {
				if e.Name != "hub" {
					gotEnts = append(gotEnts, fmt.Sprintf("%s %v", e.Name, e.Observations))
					order = append(order, e.Name)
				}
			}
			for _, r := range g.Relations() {
				gotRels = append(gotRels, fmt.Sprintf("%s>%s:%s", r.From, r.To, r.RelationType))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// Each writer created its entities in order; graph order keeps it.
		for w := range writers {
			var mine []string
			for _, n := range order {
				if strings.HasPrefix(n, fmt.Sprintf("w%d-", w)) {
					mine = append(mine, n)
				}
			}
			if !slices.IsSorted(mine) {
				t.Errorf("store %d: writer %d's entities out of creation order: %v", i, w, mine)
			}
		}
		slices.Sort(gotEnts)
		slices.Sort(gotRels)
		if got := fmt.Sprint(gotEnts, gotRels); got != want {
			t.Errorf("store %d holds %d entities and %d relations, want %d and %d:\n%s\nwant\n%s",
				i, len(gotEnts), len(gotRels), len(wantEnts), len(wantRels), got, want)
		}
	}
	if heard.Load() == 0 {
		t.Error("the watch on the first store heard none of the second's writes")
	}
	t.Logf("%d writes; the watch on the first store fired %d times", writers*writes+1, heard.Load())
	before := heard.Load()
	if _, err := b.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { g.DeleteEntities([]string{"hub"}); return nil }}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); heard.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch on the first store did not hear a write through the second")
		}
	}
}

// terminate ends every connection of the stores (not the admin's).
func terminate(t *testing.T, c *pgx.Conn) {
	t.Helper()
	if _, err := c.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mcp-server-memory'"); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionLoss(t *testing.T) {
	open := openMemory(t)
	s := open(t)
	c := admin(t)
	_, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "kept", EntityType: "t", Observations: []string{"before"}}})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	before := dump(t, s)

	// The connection dies in the middle of a write: the write fails,
	// nothing of it lands, and the store does not show it.
	_, err = s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "lost", EntityType: "t", Observations: []string{}}})
		terminate(t, c)
		return nil
	}})
	if err == nil || !strings.Contains(err.Error(), `writing memory "test-`) || !strings.Contains(err.Error(), "nothing was written") ||
		!strings.Contains(err.Error(), "the next call connects again") {
		t.Fatalf("a write whose connection died: %v", err)
	}
	t.Logf("the error a caller sees: %v", err)
	if got := dump(t, open(t)); got != before {
		t.Fatalf("after the failed write the database holds\n%s\nwant\n%s", got, before)
	}

	// Every connection dies between calls: at most one call fails, then
	// the store reconnects, however many idle connections the pool held
	// (each of them is dead too).
	if err := s.HoldConnections(ctx, 4); err != nil {
		t.Fatal(err)
	}
	terminate(t, c)
	var fails int
	for range 5 {
		var got string
		if err := s.View(context.Background(), func(g *graph.Graph) error { got = storetest.Dump(g); return nil }); err != nil {
			fails++
			continue
		}
		if got != before {
			t.Fatalf("after reconnecting the store shows\n%s\nwant\n%s", got, before)
		}
		break
	}
	if fails > 1 {
		t.Errorf("%d calls failed after the connections died; the pool should reconnect", fails)
	}
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "kept", Contents: []string{"after"}}})
		return err
	}}); err != nil {
		t.Fatalf("a write after reconnecting: %v", err)
	}
	if got := dump(t, open(t)); !strings.Contains(got, `["before" "after"]`) || strings.Contains(got, "lost") {
		t.Fatalf("the database holds\n%s", got)
	}
}

// A mutation that changes the graph and then fails breaks Update's
// contract; the store still writes nothing and forgets the change.
func TestMutationThatChangesThenFails(t *testing.T) {
	s := openMemory(t)(t)
	refused := errors.New("refused")
	_, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "half", EntityType: "t", Observations: []string{}}})
		return refused
	}})
	if !errors.Is(err, refused) {
		t.Fatalf("err %v", err)
	}
	if got := dump(t, s); got != "" {
		t.Fatalf("the store shows a change that was not written:\n%s", got)
	}
}

func TestLockTimeout(t *testing.T) {
	name := pgtest.MemoryName(t)
	s, err := pgstore.Open(ctx, pgtest.URL(t), name, pgstore.Options{LockTimeout: 300 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := admin(t)
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM memories WHERE name = $1 FOR UPDATE", name); err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "late", EntityType: "t", Observations: []string{}}})
		return nil
	}})
	if !errors.Is(err, pgstore.ErrLockTimeout) {
		t.Fatalf("a write behind a held lock: %v; want ErrLockTimeout", err)
	}
	tx.Rollback(ctx)
	if got := dump(t, s); got != "" {
		t.Fatalf("a timed-out write left\n%s", got)
	}
}

// fileBytes is a memory file as jsonl.Write writes it: a generated graph,
// entities and relations with members this server does not know, text that
// needs escaping, and lines no store can read, which must survive too.
func fileBytes(t *testing.T) []byte {
	t.Helper()
	tg, _ := testgraph.Generate(300, 7)
	var b bytes.Buffer
	if err := tg.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString(`{"type":"entity","name":"Ünïcode \"q\" \u0000","entityType":"人","observations":["Москва","\n"],"createdAt":"2026-01-01","tags":[1,{"a":null}]}` + "\n")
	b.WriteString(`{"type":"relation","from":"Ünïcode \"q\" \u0000","to":"Ünïcode \"q\" \u0000","relationType":"self","weight":0.5}` + "\n")
	b.WriteString(`{"type":"entity","name":"Timed","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z","observationTimes":[null,1,"2026-12-01T10:00:00Z",1],"observationsHash":"` + fmt.Sprintf("%08x", graph.ObservationsHash([]string{"a", "b"})) + `"}` + "\n")
	b.WriteString(`{"type":"relation","from":"Timed","to":"Timed","relationType":"self","createdAt":"2026-11-30T09:15:00Z"}` + "\n")
	b.WriteString("not json at all\n")
	b.WriteString(`{"type":"mystery","x":1}` + "\n")
	b.WriteString("\xff\xfe invalid UTF-8 kept verbatim\n")
	f := jsonl.Decode(b.Bytes())
	var out bytes.Buffer
	if err := jsonl.Write(&out, f.Graph, f.Unreadable); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// The time columns hold what the lines' time members say, NULL for
// unknown, after an import and after writes.
func TestTimeColumns(t *testing.T) {
	open := openMemory(t)
	s := open(t)
	in := jsonl.Decode(fileBytes(t))
	if err := s.Import(ctx, in.Graph, in.Unreadable, false); err != nil {
		t.Fatal(err)
	}
	at := graph.TimeOf(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.SetNow(at)
		defer g.SetNow(0)
		g.CreateEntities([]graph.Entity{{Name: "New", EntityType: "t", Observations: []string{"n"}}})
		_, err := g.CreateRelations([]graph.Relation{{From: "New", To: "Timed", RelationType: "r"}})
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	c := admin(t)
	column := func(query, name string) string {
		t.Helper()
		var v *time.Time
		err := c.QueryRow(ctx, query+` AND memory_id = (SELECT id FROM memories WHERE name = $2)`, nameKey(name), s.Name()).Scan(&v)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if v == nil {
			return "NULL"
		}
		return v.UTC().Format(time.RFC3339)
	}
	for _, tc := range []struct{ query, name, want string }{
		{"SELECT created_at FROM memory_entities WHERE key = $1", "Timed", "2026-11-30T09:15:00Z"},
		{"SELECT updated_at FROM memory_entities WHERE key = $1", "Timed", "2026-12-01T10:00:00Z"},
		{"SELECT created_at FROM memory_entities WHERE key = $1", "New", "2026-12-02T08:00:00Z"},
		{"SELECT updated_at FROM memory_entities WHERE key = $1", "New", "2026-12-02T08:00:00Z"},
		{"SELECT created_at FROM memory_entities WHERE key = $1", "Ünïcode \"q\" \u0000", "NULL"},
	} {
		if got := column(tc.query, tc.name); got != tc.want {
			t.Errorf("%s for %q: %s, want %s", tc.query, tc.name, got, tc.want)
		}
	}
	var created []string
	rows, err := c.Query(ctx, `SELECT coalesce(to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'NULL') FROM memory_relations
		WHERE memory_id = (SELECT id FROM memories WHERE name = $1) AND created_at IS NOT NULL ORDER BY seq`, s.Name())
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		rows.Scan(&v)
		created = append(created, v)
	}
	if rows.Err() != nil || !slices.Equal(created, []string{"2026-11-30T09:15:00Z", "2026-12-02T08:00:00Z"}) {
		t.Errorf("relations' created_at: %q (%v)", created, rows.Err())
	}
}

// nameKey is an entity row's key: the SHA-256 of its name.
func nameKey(name string) []byte {
	h := sha256.Sum256([]byte(name))
	return h[:]
}

// file → database → file gives the same bytes.
func TestImportExportRoundTrip(t *testing.T) {
	want := fileBytes(t)
	if len(jsonl.Decode(bytes.Clone(want)).Unreadable) != 3 {
		t.Fatal("the fixture lost its unreadable lines")
	}
	open := openMemory(t)
	s := open(t)
	in := jsonl.Decode(bytes.Clone(want))
	if err := s.Import(ctx, in.Graph, in.Unreadable, false); err != nil {
		t.Fatal(err)
	}
	export := func() []byte {
		t.Helper()
		f, err := open(t).Export(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := jsonl.Write(&out, f.Graph, f.Unreadable); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	if got := export(); !bytes.Equal(got, want) {
		t.Fatalf("file → database → file changed the file:\n%s", firstDifference(got, want))
	}
	// The imported memory is a memory like any other: a write lands after
	// the relations' lines, and the unreadable lines stay last.
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.SetNow(0) // the file store's graph below holds no times
		g.CreateEntities([]graph.Entity{{Name: "after import", EntityType: "t", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	f := jsonl.Decode(bytes.Clone(want))
	f.Graph.CreateEntities([]graph.Entity{{Name: "after import", EntityType: "t", Observations: []string{}}})
	var want2 bytes.Buffer
	jsonl.Write(&want2, f.Graph, f.Unreadable)
	if got := export(); !bytes.Equal(got, want2.Bytes()) {
		t.Fatalf("after a write the export differs from the file store's:\n%s", firstDifference(got, want2.Bytes()))
	}

	// Import into a memory that holds something needs replace.
	if err := s.Import(ctx, graph.New(), nil, false); !errors.Is(err, pgstore.ErrNotEmpty) {
		t.Fatalf("importing over a memory: %v; want ErrNotEmpty", err)
	}
	if err := s.Import(ctx, graph.New(), nil, true); err != nil {
		t.Fatal(err)
	}
	if got := export(); len(got) != 0 {
		t.Fatalf("after replacing with an empty graph the export is\n%s", got)
	}
	if got := dump(t, s); got != "" {
		t.Fatalf("after replacing with an empty graph the importer shows\n%s", got)
	}
}

func firstDifference(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(gl), len(wl)) {
		if !bytes.Equal(gl[i], wl[i]) {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, gl[i], wl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(gl), len(wl))
}

func TestMemoriesAreSeparateAndNamed(t *testing.T) {
	url := pgtest.URL(t)
	db, err := pgstore.Connect(ctx, url, pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, bad := range []string{"", "..", "../x", "a/b", "a\x00b", "CON", ".hidden"} {
		if _, err := db.Memory(ctx, bad); err == nil {
			t.Errorf("memory name %q was accepted", bad)
		}
	}
	one, two := pgtest.MemoryName(t), pgtest.MemoryName(t)
	s1, err := db.Memory(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := db.Memory(ctx, two)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "only in one", EntityType: "t", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, s2); got != "" {
		t.Fatalf("memory %s shows what was written to %s:\n%s", two, one, got)
	}
	names, err := db.Memories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, one) {
		t.Fatalf("Memories() = %v, missing %s", names, one)
	}
	// Two was only read: a memory nobody wrote gets no row.
	if slices.Contains(names, two) {
		t.Fatalf("Memories() = %v: reading %s created it", names, two)
	}
}

// Replicas starting at once migrate one fresh database once; a database
// migrated by a newer release is refused.
func TestSchemaMigration(t *testing.T) {
	c := admin(t)
	dbname := strings.ReplaceAll(pgtest.MemoryName(t), "-", "_")
	if _, err := c.Exec(ctx, "CREATE DATABASE "+dbname); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Exec(ctx, "DROP DATABASE "+dbname+" WITH (FORCE)") })
	cfg, err := pgx.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, dbname)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := pgstore.Connect(ctx, url, pgstore.Options{Logf: t.Logf})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var versions []int
	rows, _ := other.Query(ctx, "SELECT version FROM memory_schema_version ORDER BY version")
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil || len(versions) != pgstore.SchemaVersion || versions[len(versions)-1] != pgstore.SchemaVersion {
		t.Fatalf("schema versions %v (%v), want 1..%d once each", versions, err, pgstore.SchemaVersion)
	}
	if _, err := other.Exec(ctx, "INSERT INTO memory_schema_version (version) VALUES ($1)", pgstore.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Connect(ctx, url, pgstore.Options{}); !errors.Is(err, pgstore.ErrSchemaTooNew) {
		t.Fatalf("a database from a newer release: %v; want ErrSchemaTooNew", err)
	}
}

func TestBadURL(t *testing.T) {
	_, err := pgstore.Connect(ctx, "postgres://user:secret@host:notaport/db", pgstore.Options{})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a bad URL: %v (must fail without quoting the password)", err)
	}
}

// watchCount starts a Watch and returns how often it fired so far.
func watchCount(t *testing.T, s *pgstore.Store, interval time.Duration) *atomic.Int64 {
	var n atomic.Int64
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Watch(wctx, interval, func() { n.Add(1) }) }()
	t.Cleanup(func() { cancel(); <-done })
	return &n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// A Watch whose connection dies reports the writes made while it was gone.
func TestWatchAfterConnectionLoss(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	heard := watchCount(t, a, 300*time.Millisecond)
	write := func(obs string) error {
		_, err := b.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			if g.Entity("x") == nil {
				g.CreateEntities([]graph.Entity{{Name: "x", EntityType: "t", Observations: []string{}}})
			}
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "x", Contents: []string{obs}}})
			return err
		}})
		return err
	}
	for i := 0; heard.Load() == 0; i++ {
		if i == 100 {
			t.Fatal("the watch heard none of 100 writes")
		}
		if err := write(fmt.Sprint("warm-up ", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := admin(t)
	terminate(t, c)
	before := heard.Load()
	// The first write may meet a dead pooled connection; the next one
	// reconnects. The watch is still away (it waits 300 ms).
	if err := write("while away"); err != nil {
		t.Logf("first write after the connections died: %v", err)
		if err := write("while away"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the watch reported the write made while its connection was down", func() bool { return heard.Load() > before })
}

// The Watches of one DB share one listening connection.
func TestWatchesShareAConnection(t *testing.T) {
	db, err := pgstore.Connect(ctx, pgtest.URL(t), pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stores []*pgstore.Store
	for range 3 {
		s, err := db.Memory(ctx, pgtest.MemoryName(t))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	var counts []*atomic.Int64
	for _, s := range stores {
		counts = append(counts, watchCount(t, s, 100*time.Millisecond))
	}
	c := admin(t)
	listeners := func() (n int) {
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN mcp_memory_changed'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, "one connection listens", func() bool { return listeners() == 1 })
	// Each memory's watch hears its own memory only: write each through
	// another DB's store.
	for i, s := range stores {
		other, err := pgstore.Open(ctx, pgtest.URL(t), s.Name(), pgstore.Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, fmt.Sprintf("watch %d hears a write", i), func() bool {
			other.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
				g.CreateEntities([]graph.Entity{{Name: fmt.Sprint(time.Now().UnixNano()), EntityType: "t", Observations: []string{}}})
				return nil
			}})
			time.Sleep(20 * time.Millisecond)
			return counts[i].Load() > 0
		})
		other.Close()
		for j := i + 1; j < len(stores); j++ {
			if counts[j].Load() != 0 {
				t.Errorf("watch %d heard a write to memory %d", j, i)
			}
		}
	}
	if n := listeners(); n != 1 {
		t.Errorf("%d connections listen for 3 watches, want 1", n)
	}
}

// A memory nobody wrote has no row: reading it, and a write that changes
// nothing, create none; the first write that changes it does, and another
// replica's Store of that name then reads it, and its Watch hears it.
func TestFirstWriteCreatesTheRow(t *testing.T) {
	name := pgtest.MemoryName(t)
	db, err := pgstore.Connect(ctx, pgtest.URL(t), pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := pgstore.Connect(ctx, pgtest.URL(t), pgstore.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	hasRow := func() bool {
		t.Helper()
		var n int
		if err := admin(t).QueryRow(ctx, "SELECT count(*) FROM memories WHERE name = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	s, err := db.Memory(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(t, s); got != "" || s.Exists() || hasRow() {
		t.Fatalf("a memory nobody wrote: %q, Exists %v, row %v", got, s.Exists(), hasRow())
	}
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error { g.DeleteEntities([]string{"nobody"}); return nil }}); err != nil {
		t.Fatal(err)
	}
	if s.Exists() || hasRow() {
		t.Fatal("a write that changed nothing created the memory's row")
	}
	// The other replica's Store, opened before the row exists, watches.
	o, err := other.Memory(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	heard := make(chan struct{}, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go o.Watch(wctx, 50*time.Millisecond, func() {
		select {
		case heard <- struct{}{}:
		default:
		}
	})
	if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "first", EntityType: "t", Observations: []string{}}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if !s.Exists() || !hasRow() {
		t.Fatal("the first write did not create the memory's row")
	}
	<-heard
	if got := dump(t, o); !strings.Contains(got, `"first"`) {
		t.Fatalf("the other replica reads %q", got)
	}
}

// A write is bounded as a whole by WriteTimeout, here shorter than the
// lock timeout: behind a row lock held elsewhere it fails with ErrTimeout,
// says nothing was written, and nothing is.
func TestWriteTimeout(t *testing.T) {
	name := pgtest.MemoryName(t)
	s, err := pgstore.Open(ctx, pgtest.URL(t), name, pgstore.Options{LockTimeout: time.Minute, WriteTimeout: 300 * time.Millisecond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tx, err := admin(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM memories WHERE name = $1 FOR UPDATE", name); err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "late", EntityType: "t", Observations: []string{}}})
		return nil
	}})
	if !errors.Is(err, pgstore.ErrTimeout) || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("a write past its deadline: %v; want ErrTimeout saying nothing was written", err)
	}
	tx.Rollback(ctx)
	if got := dump(t, s); got != "" {
		t.Fatalf("a timed-out write left\n%s", got)
	}
}

// TestWatchTellsAWriteReadBeforeIt: another replica's write that a read
// of this Store caught up with before its Watch began is told as the
// Watch begins. (The Watch took the revision then as its baseline: a
// replica whose first calls came before its Watch ran never told its
// subscribers, nor its search by meaning, of that write.)
func TestWatchTellsAWriteReadBeforeIt(t *testing.T) {
	open := openMemory(t)
	a, b := open(t), open(t)
	create := func(s *pgstore.Store, name string) {
		t.Helper()
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{}}})
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	create(a, "ours")
	create(b, "theirs")
	if err := a.View(ctx, func(g *graph.Graph) error {
		if g.Entity("theirs") == nil {
			t.Fatal("a read after the other's write does not hold it")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	heard := watchCount(t, a, 100*time.Millisecond)
	waitFor(t, "the Watch told the other's write, read before it began", func() bool { return heard.Load() > 0 })
}

// A relation deleted and made again by one write, with the same ends and
// type but another time, is another relation: its row is written, though
// its key and place stay, and another replica reads the new time.
func TestARelationMadeAgainInOneWrite(t *testing.T) {
	open := openMemory(t)
	s, other := open(t), open(t)
	first := graph.TimeOf(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	again := graph.TimeOf(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
	rel := graph.Relation{From: "A", To: "B", RelationType: "knows"}
	write := func(at graph.Time, apply func(g *graph.Graph) error) {
		t.Helper()
		if _, err := s.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.SetNow(at)
			defer g.SetNow(0)
			return apply(g)
		}}); err != nil {
			t.Fatal(err)
		}
	}
	write(first, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "t"}, {Name: "B", EntityType: "t"}})
		// The last relation, so made again it is where it was.
		_, err := g.CreateRelations([]graph.Relation{{From: "B", To: "A", RelationType: "knows"}, rel})
		return err
	})
	// The other replica reads the memory before the write below.
	if !strings.Contains(dump(t, other), "knows") {
		t.Fatal("the other replica does not see the relations")
	}
	write(again, func(g *graph.Graph) error {
		g.DeleteRelations([]graph.Relation{rel})
		_, err := g.CreateRelations([]graph.Relation{rel})
		return err
	})
	for _, st := range []*pgstore.Store{s, other, open(t)} {
		if err := st.View(ctx, func(g *graph.Graph) error {
			for _, r := range g.Relations() {
				if r.From == "A" && r.Created != again {
					t.Errorf("relation A->B created at %v, want %v (made again)", r.Created, again)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
