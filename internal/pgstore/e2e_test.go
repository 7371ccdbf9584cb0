package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// The end-to-end tests run the real binary: replicas of the server with
// MEMORY_DATABASE_URL set, serving Streamable HTTP, sharing one database.

const (
	e2eProtocol = "2025-11-25"
	graphURI    = "memory://knowledge-graph"
)

var mcpURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)

// replica is one server process.
type replica struct {
	url     string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	waitErr error         // how it exited, once exited is closed
	killed  bool          // by kill, so its exit is no failure
	mu      sync.Mutex
	stderr  strings.Builder
}

// kill ends the replica with SIGKILL, as a crash or an OOM kill would: no
// request in progress is finished, no connection closed in order.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.killed = true
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.exited
}

func (r *replica) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// buildServer builds the server binary from the module root.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcp-server-memory")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcp-server-memory")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the server: %v\n%s", err, out)
	}
	return bin
}

// startReplica starts the server on a free port of 127.0.0.1 with env
// added to the environment, and stops it (gracefully) when t ends.
func startReplica(t *testing.T, bin string, env ...string) *replica {
	t.Helper()
	cmd := exec.Command(bin, "--http", "127.0.0.1:0")
	// No token or answer limit from the caller's environment.
	cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_ANSWER_LIMIT=")
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, exited: make(chan struct{})}
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.stderr.WriteString(line + "\n")
			r.mu.Unlock()
			if u := mcpURL.FindString(line); u != "" {
				select {
				case found <- u:
				default:
				}
			}
		}
	}()
	go func() {
		<-scanned
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		if r.killed {
			return
		}
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-r.exited:
			if r.waitErr != nil {
				t.Errorf("replica %s exited with %v; its log:\n%s", r.url, r.waitErr, r.log())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-r.exited
			t.Errorf("replica %s did not stop within 15 s of SIGINT; its log:\n%s", r.url, r.log())
		}
	})
	select {
	case r.url = <-found:
		return r
	case <-r.exited:
		t.Fatalf("the server exited (%v) before serving; its log:\n%s", r.waitErr, r.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("the server logged no URL within 30 s; its log:\n%s", r.log())
	}
	return nil
}

// connectReplica opens an MCP session with r.
func connectReplica(t *testing.T, r *replica, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: r.url, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pgstore-e2e", Version: "1"}, opts).
		Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: e2eProtocol})
	if err != nil {
		t.Fatalf("connecting to %s: %v", r.url, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != e2eProtocol {
		t.Fatalf("negotiated %s, want %s", got, e2eProtocol)
	}
	return cs
}

func callTool(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
			break // the first item is the answer; others are notes
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: %s", name, text.String())
	}
	return text.String(), nil
}

// withParam returns the connection URL u with the query parameter key set.
func withParam(t *testing.T, u, key, value string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
}

func createNamed(ctx context.Context, cs *mcp.ClientSession, name string) error {
	_, err := callTool(ctx, cs, "create_entities", map[string]any{
		"entities": []any{map[string]any{"name": name, "entityType": "e2e", "observations": []string{"written through a replica"}}},
	})
	return err
}

// writeUntilHeard creates entities PREFIX-0, PREFIX-1, … through writer,
// waiting up to wait after each for a signal on heard, and returns how many
// it wrote until one came, or -1 after tries writes.
func writeUntilHeard(ctx context.Context, t *testing.T, writer *mcp.ClientSession, prefix string, heard <-chan struct{}, tries int, wait time.Duration) int {
	t.Helper()
	for i := range tries {
		if err := createNamed(ctx, writer, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
			return i + 1
		case <-time.After(wait):
		}
	}
	return -1
}

// graphNames reads the whole graph through cs, part by part, and returns
// its entity names, each with how often it appeared.
func graphNames(t *testing.T, cs *mcp.ClientSession) map[string]int {
	t.Helper()
	names := map[string]int{}
	ents, _ := readGraph(t, cs)
	for _, e := range ents {
		names[e.Name]++
	}
	return names
}

type e2eEntity struct {
	Name         string   `json:"name"`
	Observations []string `json:"observations"`
	Omitted      int      `json:"omittedObservations"` // by this part of an entity split over parts
}

type e2eRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// readGraph reads the whole graph part by part, following nextCursor, each
// part through the next of sessions in turn: a cursor from one replica works
// on another.
func readGraph(t *testing.T, sessions ...*mcp.ClientSession) ([]e2eEntity, []e2eRelation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		ents []e2eEntity
		rels []e2eRelation
	)
	args := map[string]any{}
	for part := 0; ; part++ {
		if part > 1000 {
			t.Fatal("read_graph keeps giving a nextCursor")
		}
		text, err := callTool(ctx, sessions[part%len(sessions)], "read_graph", args)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Entities   []e2eEntity   `json:"entities"`
			Relations  []e2eRelation `json:"relations"`
			NextCursor string        `json:"nextCursor"`
		}
		if err := json.Unmarshal([]byte(text), &page); err != nil {
			t.Fatalf("read_graph answered no JSON: %v\n%s", err, text)
		}
		for _, e := range page.Entities {
			// An entity too big for a part comes in several, one after
			// the other, each saying how many observations it leaves out;
			// Omitted counts those still to come.
			if n := len(ents); n > 0 && ents[n-1].Omitted > 0 && ents[n-1].Name == e.Name {
				ents[n-1].Observations = append(ents[n-1].Observations, e.Observations...)
				ents[n-1].Omitted -= len(e.Observations)
				continue
			}
			ents = append(ents, e)
		}
		rels = append(rels, page.Relations...)
		if page.NextCursor == "" {
			for _, e := range ents {
				if e.Omitted > 0 {
					t.Fatalf("read_graph ended with %d observations of %s left out", e.Omitted, e.Name)
				}
			}
			return ents, rels
		}
		args = map[string]any{"cursor": page.NextCursor}
	}
}

// TestReplicasShareTheDatabase runs two replicas of the binary on one
// database: a subscriber on one hears of a write through the other; 8
// clients × 100 mixed writes through both lose nothing; a stdio server
// shares the memory; a replica whose database connections die fails a call
// with a clear tool error and reconnects; a replica killed mid-write loses
// no acknowledged write.
func TestReplicasShareTheDatabase(t *testing.T) {
	db := startSharedDatabase(t)
	defer db.checkFilesUnused(t)
	t.Run("subscriber on A hears a write through B", db.subscriberHearsWriteElsewhere)
	t.Run("8 clients × 100 mixed writes through both lose nothing", db.mixedWritesLoseNothing)
	t.Run("a stdio server shares it too", db.stdioServerShares)
	t.Run("a replica whose connections die fails the call clearly and reconnects", db.connectionLoss)
	t.Run("killing a replica mid-write loses no acknowledged write", db.killMidWrite)
	db.checkSecretNotLogged(t)
}

// sharedDatabase is what the subtests of TestReplicasShareTheDatabase
// share: the server binary, the database, and replicas A and B on it.
type sharedDatabase struct {
	bin          string
	dbURL        string
	secret       string // the password in dbURL that no log may show; "" if none
	a, b         *replica
	fileA, fileB string // the memory files A and B are given and must not use
	run          string // names of this run start with it
}

// startSharedDatabase starts replicas A and B on one database and checks
// that both say they use the database instead of their file.
func startSharedDatabase(t *testing.T) *sharedDatabase {
	db := &sharedDatabase{}
	// A password in the URL must never reach the log.
	db.dbURL, db.secret = pgtest.URLWithPassword(t, "e2e-password-not-for-logs")
	db.bin = buildServer(t)
	// Each replica is given a memory file of its own, which it must not
	// use: through files they would not share a thing.
	db.fileA, db.fileB = filepath.Join(t.TempDir(), "a.jsonl"), filepath.Join(t.TempDir(), "b.jsonl")
	// A small answer limit makes every read_graph below come in parts.
	db.a = startReplica(t, db.bin, "MEMORY_DATABASE_URL="+db.dbURL, "MEMORY_FILE_PATH="+db.fileA, "MEMORY_ANSWER_LIMIT=4000")
	db.b = startReplica(t, db.bin, "MEMORY_DATABASE_URL="+db.dbURL, "MEMORY_FILE_PATH="+db.fileB, "MEMORY_ANSWER_LIMIT=4000")
	for _, r := range []*replica{db.a, db.b} {
		log := r.log()
		if !strings.Contains(log, "in PostgreSQL database") || !strings.Contains(log, "MEMORY_FILE_PATH is not used") {
			t.Errorf("replica %s does not say it uses the database instead of the file:\n%s", r.url, log)
		}
	}
	db.run = fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	return db
}

// checkFilesUnused fails t if A or B wrote its memory file.
func (db *sharedDatabase) checkFilesUnused(t *testing.T) {
	for _, f := range []string{db.fileA, db.fileB} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written although MEMORY_DATABASE_URL is set", f)
		}
	}
}

// checkSecretNotLogged fails t if A or B logged the database password.
func (db *sharedDatabase) checkSecretNotLogged(t *testing.T) {
	if db.secret == "" {
		return
	}
	for _, r := range []*replica{db.a, db.b} {
		if strings.Contains(r.log(), db.secret) {
			t.Errorf("replica %s logged the database password:\n%s", r.url, r.log())
		}
	}
}

// subscribe opens a session with r that signals on the channel returned
// whenever a resource it subscribed to (and whose URI only accepts, if not
// nil) is updated, and subscribes it to the graph.
func subscribe(ctx context.Context, t *testing.T, r *replica, only func(uri string) bool) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	heard := make(chan struct{}, 1)
	sub := connectReplica(t, r, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if only == nil || only(req.Params.URI) {
			select {
			case heard <- struct{}{}:
			default:
			}
		}
	}})
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: graphURI}); err != nil {
		t.Fatal(err)
	}
	return sub, heard
}

func (db *sharedDatabase) subscriberHearsWriteElsewhere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, heard := subscribe(ctx, t, db.a, func(uri string) bool { return uri == graphURI })
	writer := connectReplica(t, db.b, nil)
	// The session's event stream opens in the background after
	// initialize; a notification sent before it is up is not delivered,
	// so write again until one is heard.
	if writeUntilHeard(ctx, t, writer, db.run+"-notify", heard, 40, 250*time.Millisecond) < 0 {
		t.Fatal("no notifications/resources/updated on A after 40 writes through B")
	}
	if graphNames(t, sub)[db.run+"-notify-0"] != 1 {
		t.Errorf("A does not read the entity written through B")
	}
}

// mixedPlan is the writes of the mixed-writes subtest. Each client has a
// session on A and one on B and alternates between them call by call, so
// every call depends on what the client's previous call wrote through the
// other replica. Client c's k-th entity (k a multiple of 5) is created with
// "made", gets "a1" and "a2" (and the shared hub an observation naming
// it), a relation to the hub and one from the entity before it, loses
// "a1", and then, by k, is deleted, loses its relation to the hub, or
// gains one from the hub.
type mixedPlan struct {
	clients, writes int
	prefix, hub     string
}

// toolCall is one call of a tool with its arguments.
type toolCall struct {
	tool string
	args map[string]any
}

func (p mixedPlan) name(c, k int) string { return fmt.Sprintf("%s-%d-%02d", p.prefix, c, k) }
func (p mixedPlan) deleted(k int) bool   { return k%20 == 5 }

func relationArg(from, relType, to string) map[string]any {
	return map[string]any{"from": from, "to": to, "relationType": relType}
}

// call is client c's i-th call.
func (p mixedPlan) call(c, i int) toolCall {
	k := i - i%5
	e := p.name(c, k)
	switch i % 5 {
	case 0:
		return toolCall{"create_entities", map[string]any{"entities": []any{
			map[string]any{"name": e, "entityType": "e2e", "observations": []string{"made"}}}}}
	case 1:
		return toolCall{"add_observations", map[string]any{"observations": []any{
			map[string]any{"entityName": e, "contents": []string{"a1", "a2"}},
			map[string]any{"entityName": p.hub, "contents": []string{e}}}}}
	case 2:
		rels := []any{relationArg(e, "belongs_to", p.hub)}
		if k > 0 && !p.deleted(k-5) {
			rels = append(rels, relationArg(p.name(c, k-5), "next", e))
		}
		return toolCall{"create_relations", map[string]any{"relations": rels}}
	case 3:
		return toolCall{"delete_observations", map[string]any{"deletions": []any{
			map[string]any{"entityName": e, "observations": []string{"a1"}}}}}
	default:
		switch {
		case p.deleted(k):
			return toolCall{"delete_entities", map[string]any{"entityNames": []string{e}}}
		case k%10 == 0:
			return toolCall{"delete_relations", map[string]any{"relations": []any{relationArg(e, "belongs_to", p.hub)}}}
		default:
			return toolCall{"create_relations", map[string]any{"relations": []any{relationArg(p.hub, "has", e)}}}
		}
	}
}

// want is what the memory must hold afterwards: the clients' entities with
// their observations, their relations, and the hub's observations, sorted.
func (p mixedPlan) want(t *testing.T) (ents map[string]string, rels map[string]bool, hubObs []string) {
	ents, rels = map[string]string{}, map[string]bool{}
	for c := range p.clients {
		for k := 0; k < p.writes; k += 5 {
			e := p.name(c, k)
			hubObs = append(hubObs, e)
			if p.deleted(k) {
				continue
			}
			ents[e] = `["made" "a2"]`
			if k%10 != 0 { // else its relation to the hub was deleted
				rels[e+" belongs_to "+p.hub] = true
				rels[p.hub+" has "+e] = true
			}
			if k > 0 && !p.deleted(k-5) {
				rels[p.name(c, k-5)+" next "+e] = true
			}
		}
	}
	if p.deleted(0) || p.deleted(p.writes-5) {
		t.Fatal("the plan deletes a first or last entity; the expectations above assume not")
	}
	slices.Sort(hubObs)
	return ents, rels, hubObs
}

func (db *sharedDatabase) mixedWritesLoseNothing(t *testing.T) {
	plan := mixedPlan{clients: 8, writes: 100, prefix: db.run + "-mix"}
	plan.hub = plan.prefix + "-hub"
	if err := createNamed(context.Background(), connectReplica(t, db.a, nil), plan.hub); err != nil {
		t.Fatal(err)
	}
	wantEnts, wantRels, hubObs := plan.want(t)
	db.runMixedWrites(t, plan)
	for _, r := range []*replica{db.a, db.b} {
		// Part by part, alternating between the replicas.
		other := map[*replica]*replica{db.a: db.b, db.b: db.a}[r]
		ents, rels := readGraph(t, connectReplica(t, r, nil), connectReplica(t, other, nil))
		gotEnts := map[string]string{}
		for _, e := range ents {
			switch {
			case e.Name == plan.hub:
				got := slices.Sorted(slices.Values(e.Observations))
				got = slices.DeleteFunc(got, func(o string) bool { return o == "written through a replica" })
				if !slices.Equal(got, hubObs) {
					t.Errorf("through %s: the hub holds %d observations of the clients, want %d", r.url, len(got), len(hubObs))
				}
			case strings.HasPrefix(e.Name, plan.prefix+"-"):
				if _, twice := gotEnts[e.Name]; twice {
					t.Errorf("through %s: %s appears twice", r.url, e.Name)
				}
				gotEnts[e.Name] = fmt.Sprintf("%q", e.Observations)
			}
		}
		gotRels := map[string]bool{}
		for _, rl := range rels {
			if strings.HasPrefix(rl.From, plan.prefix+"-") || strings.HasPrefix(rl.To, plan.prefix+"-") {
				gotRels[rl.From+" "+rl.RelationType+" "+rl.To] = true
			}
		}
		if !maps.Equal(gotEnts, wantEnts) {
			t.Errorf("through %s: %d entities of the clients, want %d:\n%v\nwant\n%v", r.url, len(gotEnts), len(wantEnts), gotEnts, wantEnts)
		}
		if !maps.Equal(gotRels, wantRels) {
			t.Errorf("through %s: %d relations of the clients, want %d:\n%v\nwant\n%v", r.url, len(gotRels), len(wantRels), gotRels, wantRels)
		}
	}
}

// runMixedWrites makes the plan's calls, its clients at once, each
// alternating between A and B, and fails t for every call that fails.
func (db *sharedDatabase) runMixedWrites(t *testing.T, plan mixedPlan) {
	sessions := make([][2]*mcp.ClientSession, plan.clients)
	for c := range sessions {
		sessions[c] = [2]*mcp.ClientSession{connectReplica(t, db.a, nil), connectReplica(t, db.b, nil)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, plan.clients)
	for c := range plan.clients {
		wg.Go(func() {
			for i := range plan.writes {
				cl := plan.call(c, i)
				if _, err := callTool(ctx, sessions[c][(c+i)%2], cl.tool, cl.args); err != nil {
					errs <- fmt.Errorf("client %d, call %d (%s through %s): %w", c, i, cl.tool, []string{"A", "B"}[(c+i)%2], err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d mixed writes by %d clients alternating between 2 replicas in %v", plan.clients*plan.writes, plan.clients, time.Since(start).Round(time.Millisecond))
}

func (db *sharedDatabase) stdioServerShares(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fileC := filepath.Join(t.TempDir(), "c.jsonl")
	cmd := exec.Command(db.bin)
	cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+db.dbURL, "MEMORY_FILE_PATH="+fileC)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdio, err := mcp.NewClient(&mcp.Implementation{Name: "pgstore-e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: e2eProtocol})
	if err != nil {
		t.Fatal(err)
	}
	if err := createNamed(ctx, stdio, db.run+"-stdio"); err != nil {
		t.Error(err)
	}
	seen := graphNames(t, stdio)[db.run+"-notify-0"]
	if err := stdio.Close(); err != nil {
		t.Errorf("closing the stdio server: %v", err)
	}
	if seen != 1 {
		t.Errorf("the stdio server does not read what the HTTP replicas wrote")
	}
	if graphNames(t, connectReplica(t, db.a, nil))[db.run+"-stdio"] != 1 {
		t.Errorf("A does not read what the stdio server wrote")
	}
	if _, err := os.Stat(fileC); err == nil {
		t.Errorf("the stdio server wrote %s although MEMORY_DATABASE_URL is set", fileC)
	}
	if !strings.Contains(stderr.String(), "serving MCP on stdio; memory \"default\" in PostgreSQL database") {
		t.Errorf("the stdio server does not say it uses the database:\n%s", stderr.String())
	}
	if db.secret != "" && strings.Contains(stderr.String(), db.secret) {
		t.Errorf("the stdio server logged the database password:\n%s", stderr.String())
	}
}

// connectionCutter ends every database connection of the replica whose
// connections carry application name app, as a database restart or a
// network cut would.
type connectionCutter struct {
	admin *pgx.Conn
	app   string
}

func (c connectionCutter) cut(ctx context.Context, t *testing.T) {
	t.Helper()
	var n int
	// Wait (up to 5 s each) until the backends have exited.
	err := c.admin.QueryRow(ctx, `WITH l AS MATERIALIZED (SELECT pid FROM pg_stat_activity WHERE application_name = $1)
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM l`, c.app).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("replica L holds no connection to end")
	}
}

// tryAfterCut makes a call that may fail once after the connections died,
// as a tool error that says the database failed and never shows secret;
// the next attempt must succeed. It returns how many attempts failed.
func tryAfterCut(t *testing.T, secret, what string, call func() error) (failures int) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil {
			return failures
		}
		failures++
		msg := err.Error()
		t.Logf("%s after the connections died: %s", what, msg)
		if !strings.Contains(msg, "in PostgreSQL") || !strings.Contains(msg, "the next call connects again") || strings.Contains(msg, "calling \"tools/call\"") {
			t.Fatalf("%s failed without a clear tool error: %s", what, msg)
		}
		if secret != "" && strings.Contains(msg, secret) {
			t.Fatalf("the error shows the database password: %s", msg)
		}
		if attempt == 1 {
			t.Fatalf("%s failed twice; replica L does not reconnect", what)
		}
	}
}

func (db *sharedDatabase) connectionLoss(t *testing.T) {
	// Replica L names its connections, so the test can end every one of
	// them (its pool's and the one listening for notifications).
	const app = "e2e-connection-loss"
	l := startReplica(t, db.bin, "MEMORY_DATABASE_URL="+withParam(t, db.dbURL, "application_name", app),
		"MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "l.jsonl"))
	adminConn, err := pgx.Connect(context.Background(), withParam(t, db.dbURL, "application_name", "e2e-admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cutter := connectionCutter{admin: adminConn, app: app}
	_, heard := subscribe(ctx, t, l, nil)
	viaL, viaB := connectReplica(t, l, nil), connectReplica(t, db.b, nil)
	prefix := db.run + "-loss"
	if err := createNamed(ctx, viaL, prefix+"-before"); err != nil {
		t.Fatal(err)
	}

	// A call may fail once, as a tool error that says the database
	// failed and never shows the password; the next succeeds.
	failures := 0
	cutter.cut(ctx, t)
	failures += tryAfterCut(t, db.secret, "a read", func() error {
		text, err := callTool(ctx, viaL, "open_nodes", map[string]any{"names": []string{prefix + "-before"}})
		if err == nil && !strings.Contains(text, prefix+"-before") {
			t.Fatalf("after reconnecting, L does not show what it wrote before: %s", text)
		}
		return err
	})
	cutter.cut(ctx, t)
	failures += tryAfterCut(t, db.secret, "a write", func() error { return createNamed(ctx, viaL, prefix+"-after") })
	if n := graphNames(t, viaB)[prefix+"-after"]; n != 1 {
		t.Errorf("the write through L after the cut appears %d times through B, want once", n)
	}

	// The subscriber on L hears writes through B again once L's
	// listening connection is back; writes made while it was down are
	// reported by the revision check, not lost.
	for len(heard) > 0 {
		<-heard
	}
	cutter.cut(ctx, t)
	n := writeUntilHeard(ctx, t, viaB, prefix+"-notify", heard, 100, 100*time.Millisecond)
	if n < 0 {
		t.Fatal("the subscriber on L heard nothing of 100 writes through B after L's connections died")
	}
	t.Logf("heard on L after %d writes through B; %d calls failed in all", n, failures)
}

// writesUntilKill is what clients writing through a replica until it was
// killed sent and heard back.
type writesUntilKill struct {
	acked  map[string]bool // the calls whose answer arrived, by call name
	tried  map[string]bool // every call sent
	failed []string        // how each client's last call failed
}

// writeUntilKilled has clients sessions write pairs of entities (PREFIX-c-w
// -a and -b, each with observations obs) through k without pause, kills k
// once 150 writes have succeeded, and returns what the clients sent and
// heard once each has seen a call fail.
func writeUntilKilled(ctx context.Context, t *testing.T, k *replica, clients int, prefix string, obs []string) *writesUntilKill {
	sessions := make([]*mcp.ClientSession, clients)
	for c := range sessions {
		sessions[c] = connectReplica(t, k, nil)
	}
	var (
		mu      sync.Mutex
		w       = &writesUntilKill{acked: map[string]bool{}, tried: map[string]bool{}}
		enough  = make(chan struct{})
		wg      sync.WaitGroup
		started = time.Now()
	)
	for c, cs := range sessions {
		wg.Go(func() {
			for n := 0; ; n++ {
				call := fmt.Sprintf("%s-%d-%d", prefix, c, n)
				mu.Lock()
				w.tried[call] = true
				mu.Unlock()
				_, err := callTool(ctx, cs, "create_entities", map[string]any{"entities": []any{
					map[string]any{"name": call + "-a", "entityType": "e2e", "observations": obs},
					map[string]any{"name": call + "-b", "entityType": "e2e", "observations": obs},
				}})
				mu.Lock()
				if err != nil {
					w.failed = append(w.failed, err.Error())
					mu.Unlock()
					return
				}
				w.acked[call] = true
				if len(w.acked) == 150 {
					close(enough)
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-enough:
	case <-time.After(10 * time.Second):
		t.Fatal("150 writes through K did not succeed within 10 s")
	}
	k.kill(t)
	killedAt := time.Since(started)
	wg.Wait()
	t.Logf("K killed after %v with %d writes acknowledged, %d sent; the clients' last calls failed with: %q",
		killedAt.Round(time.Millisecond), len(w.acked), len(w.tried), w.failed)
	return w
}

func (db *sharedDatabase) killMidWrite(t *testing.T) {
	// Clients write through replica K without pause; K is killed with
	// SIGKILL while they write. Every write whose answer arrived must be
	// there through B, every write whole (both entities of a call, each
	// with its three observations) or not at all, none twice.
	k := startReplica(t, db.bin, "MEMORY_DATABASE_URL="+db.dbURL, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "k.jsonl"))
	const clients = 4
	prefix := db.run + "-kill"
	obs := []string{"first", "second", "third"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := writeUntilKilled(ctx, t, k, clients, prefix, obs)
	if len(w.failed) != clients {
		t.Errorf("%d of %d clients saw their write fail after the kill", len(w.failed), clients)
	}

	// B still writes: the killed replica holds no lock on the memory.
	viaB := connectReplica(t, db.b, nil)
	if err := createNamed(ctx, viaB, prefix+"-after"); err != nil {
		t.Fatalf("writing through B after K was killed: %v", err)
	}
	seen := map[string]int{}
	ents, _ := readGraph(t, viaB)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, prefix+"-") {
			continue
		}
		seen[e.Name]++
		if e.Name != prefix+"-after" && !slices.Equal(e.Observations, obs) {
			t.Errorf("%s has observations %q, want %q", e.Name, e.Observations, obs)
		}
	}
	if seen[prefix+"-after"] != 1 {
		t.Errorf("the write through B after the kill appears %d times, want once", seen[prefix+"-after"])
	}
	delete(seen, prefix+"-after")
	checkWholeWrites(t, seen, w)
	t.Logf("through B: %d calls whole in the memory, %d acknowledged, %d sent", len(seen)/2, len(w.acked), len(w.tried))
}

// checkWholeWrites checks the calls' entities seen in the memory (by name,
// how often): each was sent, appears once, with the other half of its
// call; and every acknowledged call is there.
func checkWholeWrites(t *testing.T, seen map[string]int, w *writesUntilKill) {
	t.Helper()
	for name, n := range seen {
		call := name[:len(name)-2]
		if !w.tried[call] {
			t.Errorf("%s is in the memory but was never written", name)
		}
		if n != 1 {
			t.Errorf("%s appears %d times, want once", name, n)
		}
		if seen[call+"-a"] != seen[call+"-b"] {
			t.Errorf("half of call %s is in the memory: -a %d times, -b %d times", call, seen[call+"-a"], seen[call+"-b"])
		}
	}
	for call := range w.acked {
		if seen[call+"-a"] != 1 || seen[call+"-b"] != 1 {
			t.Errorf("acknowledged write %s is lost through B (-a %d, -b %d)", call, seen[call+"-a"], seen[call+"-b"])
		}
	}
}
