package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of docs/design.md §6: several server processes writing one
// memory file through the lock file, stale locks, crashes, and change
// notifications across processes.

const breakingMessage = "Breaking stale memory file lock"

// TestSharingConcurrentWritersLoseNothing runs four processes on one file,
// each with fifty concurrent writers. The writes go through the journal;
// two of the processes compact it after a millisecond of quiet, so
// compactions run among the writes of the others.
func TestSharingConcurrentWritersLoseNothing(t *testing.T) {
	const processes, writers = 4, 50
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Every compaction replaces the file; the mode the user chose must
	// survive.
	if err := os.WriteFile(file, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}

	servers := make([]*serverProcess, processes)
	for i := range servers {
		idle := "MCP_SERVER_MEMORY_COMPACT_IDLE=1ms"
		if i%2 == 1 {
			idle = "MCP_SERVER_MEMORY_COMPACT_IDLE=1h"
		}
		servers[i] = startServer(t, file, sharingVersion, nil, idle)
	}
	if !servers[0].mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("shared", "board"))) {
		t.FailNow()
	}

	var wg sync.WaitGroup
	for p, srv := range servers {
		for w := range writers {
			wg.Go(func() {
				name := fmt.Sprintf("p%d-e%02d", p, w)
				srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(name, "note", "written by "+name)))
				srv.mustCall(ctx, t, "add_observations", addObservationsArgs("shared", "note from "+name))
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Every process sees every write.
	want := servers[0].readGraph(ctx, t)
	for i, srv := range servers[1:] {
		assertSameGraph(t, fmt.Sprintf("read_graph of process %d", i+1), srv.readGraph(ctx, t), want)
	}
	// After a clean exit the memory file alone holds them all.
	for _, srv := range servers {
		srv.close()
	}

	got := entitiesIn(decodeMemoryFile(t, file))
	if len(got) != processes*writers+1 {
		t.Errorf("the file holds %d entities, want %d", len(got), processes*writers+1)
	}
	var wantShared []string
	for p := range processes {
		for w := range writers {
			name := fmt.Sprintf("p%d-e%02d", p, w)
			if obs, ok := got[name]; !ok {
				t.Errorf("entity %s is missing from the file", name)
			} else if !slices.Equal(obs, []string{"written by " + name}) {
				t.Errorf("entity %s has observations %q", name, obs)
			}
			wantShared = append(wantShared, "note from "+name)
		}
	}
	gotShared := slices.Clone(got["shared"])
	slices.Sort(gotShared)
	slices.Sort(wantShared)
	if !slices.Equal(gotShared, wantShared) {
		t.Errorf("shared entity has %d observations, want %d: lost %q", len(gotShared), len(wantShared), missingFrom(wantShared, gotShared))
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("files left beside the memory file: %q", l)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the memory file's mode after the writes: %v (err %v); want -rw-r----- as the user set it", fi.Mode(), err)
	}
}

func missingFrom(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return out
}

// writeLock creates a lock file as another process would have.
func writeLock(t *testing.T, memoryFile string, pid int, hostname string) []byte {
	t.Helper()
	content := fmt.Appendf(nil, `{"pid":%d,"hostname":%q,"token":"0123456789abcdef0123456789abcdef"}`, pid, hostname)
	if err := os.WriteFile(memoryFile+".lock", content, 0o600); err != nil {
		t.Fatal(err)
	}
	return content
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running true: %v", err)
	}
	return cmd.Process.Pid
}

func TestSharingBreaksLockOfDeadProcessAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	hostname, err := os.Hostname()
	if err != nil || hostname == "" {
		t.Skipf("no hostname (%v): the dead-pid rule only applies to locks of this host", err)
	}
	writeLock(t, file, deadPID(t), hostname)

	// Stale-after keeps its 30 s default: only the dead-pid rule can free
	// the lock in time. The timeout is shortened so a failure is quick.
	srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	ok := srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person")))
	if elapsed := time.Since(start); ok && elapsed > 10*time.Second {
		t.Errorf("the write took %v: a lock of a dead process on this host must be broken at once, not after the 30 s stale timeout", elapsed)
	}
	srv.close()
	if _, ok := entitiesIn(decodeMemoryFile(t, file))["Alice"]; !ok {
		t.Error("the write is not in the file")
	}
	if !strings.Contains(srv.stderr.String(), breakingMessage+" "+file+".lock") {
		t.Errorf("stderr does not say %q:\n%s", breakingMessage, srv.stderr)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("files left beside the memory file: %q", l)
	}
}

// TestSharingBreaksLockWithOldMtime: a lock whose mtime is older than the
// stale timeout is broken whoever wrote it, even one whose content never got
// written, and so is an abandoned .break file left by a dead breaker.
func TestSharingBreaksLockWithOldMtime(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lock           string
		abandonedBreak bool
	}{
		// A foreign host: the pid means nothing here, only the mtime counts.
		{name: "foreign host", lock: `{"pid":1,"hostname":"another-host.invalid","token":"0123456789abcdef0123456789abcdef"}`},
		{name: "empty lock file", lock: ""},
		{name: "unparsable lock file", lock: `{"pid":`},
		{name: "abandoned break file", lock: `{"pid":1,"hostname":"another-host.invalid","token":"0123456789abcdef0123456789abcdef"}`, abandonedBreak: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "memory.jsonl")
			old := time.Now().Add(-time.Hour)
			paths := []string{file + ".lock"}
			if tc.abandonedBreak {
				paths = append(paths, file+".lock.break")
			}
			for _, path := range paths {
				if err := os.WriteFile(path, []byte(tc.lock), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			}

			srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person")))
			srv.close()
			if _, ok := entitiesIn(decodeMemoryFile(t, file))["Alice"]; !ok {
				t.Error("the write is not in the file")
			}
			if !strings.Contains(srv.stderr.String(), breakingMessage+" "+file+".lock") {
				t.Errorf("stderr does not say %q:\n%s", breakingMessage, srv.stderr)
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("files left beside the memory file: %q", l)
			}
		})
	}
}

// TestSharingLiveLockTimesOutAndTouchesNothing: a lock whose holder is alive
// is waited for, and a write that times out changes nothing.
func TestSharingLiveLockTimesOutAndTouchesNothing(t *testing.T) {
	hostname, _ := os.Hostname()
	for _, tc := range []struct {
		name     string
		pid      func(*testing.T) int
		hostname string
	}{
		// The dead-pid rule is for this host only: on another machine the
		// same pid may be alive.
		{"foreign host, pid dead here", deadPID, "another-host.invalid"},
		{"this host, live pid", func(*testing.T) int { return os.Getpid() }, hostname},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testLiveLock(t, tc.pid(t), tc.hostname)
		})
	}
}

func testLiveLock(t *testing.T, pid int, hostname string) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	before := []byte(`{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}` + "\n")
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	lockContent := writeLock(t, file, pid, hostname)

	// The holder is alive: it keeps the mtime fresh.
	stop := make(chan struct{})
	touched := make(chan struct{})
	go func() {
		defer close(touched)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				now := time.Now()
				os.Chtimes(file+".lock", now, now)
			}
		}
	}()
	defer func() { close(stop); <-touched }()

	srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_TIMEOUT=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, call := range []struct {
		tool string
		args any
	}{
		{"create_entities", createEntitiesArgs(entityArg("Bob", "person"))},
		{"add_observations", addObservationsArgs("Alice", "likes coffee")},
		{"delete_entities", map[string]any{"entityNames": []string{"Alice"}}},
	} {
		res := srv.call(ctx, t, call.tool, call.args)
		if res == nil {
			continue
		}
		want := "Timed out after 1000 ms waiting for the memory file lock " + file + ".lock"
		if !res.IsError || toolText(res) != want {
			t.Errorf("%s with the lock held elsewhere: isError=%v, text %q; want a tool error %q", call.tool, res.IsError, toolText(res), want)
		}
	}
	after, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("the memory file changed while the lock was held elsewhere (err %v):\n%s", err, after)
	}
	lockAfter, err := os.ReadFile(file + ".lock")
	if err != nil || !bytes.Equal(lockAfter, lockContent) {
		t.Errorf("the other holder's lock file is gone or changed (err %v): %q", err, lockAfter)
	}
	// Reads take no lock.
	g := typedGraph(t, srv.readGraph(ctx, t))
	if len(g.Entities) != 1 || g.Entities[0].Name != "Alice" {
		t.Errorf("read_graph while the lock is held elsewhere: %+v", g)
	}
	srv.close()
	if strings.Contains(srv.stderr.String(), breakingMessage) {
		t.Errorf("a live lock was broken:\n%s", srv.stderr)
	}
	if l := leftovers(t, dir); !slices.Equal(l, []string{"memory.jsonl.lock"}) {
		t.Errorf("files beside the memory file: %q; want only the other holder's lock", l)
	}
}

// TestSharingOneBreakerAtATime has two processes meet one stale lock at the
// same moment, several times: exactly one of them breaks it each time, and
// neither breaks the fresh lock the other took after breaking.
func TestSharingOneBreakerAtATime(t *testing.T) {
	const rounds = 5
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	// No compaction between the rounds: the test writes the lock file
	// itself, which must never be while a server holds it.
	a := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s", "MCP_SERVER_MEMORY_COMPACT_IDLE=1h")
	b := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s", "MCP_SERVER_MEMORY_COMPACT_IDLE=1h")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var want []string
	for round := range rounds {
		writeLock(t, file, 1, "another-host.invalid")
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(file+".lock", old, old); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, srv := range []*serverProcess{a, b} {
			name := fmt.Sprintf("round%d-%c", round, 'A'+i)
			want = append(want, name)
			wg.Go(func() {
				<-start
				srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(name, "note")))
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	a.close()
	b.close()
	got := entitiesIn(decodeMemoryFile(t, file))
	for _, name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("write %s is lost", name)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("files left beside the memory file: %q", l)
	}
	breaks := strings.Count(a.stderr.String(), breakingMessage) + strings.Count(b.stderr.String(), breakingMessage)
	if breaks != rounds {
		t.Errorf("%q logged %d times over %d stale locks; want exactly once per lock", breakingMessage, breaks, rounds)
	}
	for _, p := range []*serverProcess{a, b} {
		if s := p.stderr.String(); strings.Contains(s, "broken by another process") {
			t.Errorf("a process lost its lock while holding it:\n%s", s)
		}
	}
}

// TestSharingSurvivesSIGKILL kills a server in the middle of a stream of
// writes, a few times over: the file stays valid JSONL, a new server sees
// every acknowledged write and writes at once, and after its clean exit
// the file alone holds them all. The killed server compacts its journal
// after a millisecond or so of quiet, so the kill falls before, during or
// after compactions.
func TestSharingSurvivesSIGKILL(t *testing.T) {
	const rounds = 3
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	var acked []string

	for round := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		idle := []string{"500us", "2ms", "10ms"}[round%3]
		srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE="+idle)
		acked = append(acked, writeUntilKilled(ctx, t, srv, rng, round, 20+rng.IntN(41))...)

		// Whatever the kill interrupted, the file is whole: every line is
		// JSON. The newest writes may still be in the journal only.
		decodeMemoryFile(t, file)
		if l := leftovers(t, dir); len(l) > 0 {
			t.Logf("round %d: the killed server left %q", round, l)
		}

		// A lock left by the killed process names a dead pid on this host;
		// the short stale-after only bounds the wait if that rule failed.
		fresh := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_STALE_AFTER=2s", "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s")
		name := fmt.Sprintf("round%d-after-restart", round)
		if fresh.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(name, "note"))) {
			acked = append(acked, name)
		}
		g := typedGraph(t, fresh.readGraph(ctx, t))
		fresh.close()
		seen := map[string]bool{}
		for _, e := range g.Entities {
			seen[e.Name] = true
		}
		for _, name := range acked {
			if !seen[name] {
				t.Errorf("acknowledged write %s is missing from the restarted server's read_graph", name)
			}
		}
		got := entitiesIn(decodeMemoryFile(t, file))
		for _, name := range acked {
			if _, ok := got[name]; !ok {
				t.Errorf("acknowledged write %s is not in the memory file after the restarted server's clean exit", name)
			}
		}
		if _, err := os.Stat(file + ".journal"); err == nil {
			t.Errorf("round %d: the journal is left after the restarted server's clean exit", round)
		}
		if _, err := os.Stat(file + ".lock"); err == nil {
			t.Errorf("round %d: a lock file is left after the restarted server's write", round)
		}
		cancel()
		if t.Failed() {
			t.FailNow()
		}
	}
}

// TestSharingRemovesTempFilesOfKilledWriters: a save removes the temporary
// files of this memory file that a writer killed mid-save left over a minute
// ago, and nothing else.
func TestSharingRemovesTempFilesOfKilledWriters(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	old := time.Now().Add(-2 * time.Minute)
	files := map[string]bool{ // name: kept
		"memory.jsonl.0123456789abcdef0123456789abcdef.tmp": false,
		"memory.jsonl.fedcba9876543210fedcba9876543210.tmp": true, // young: a live writer's
		"other.jsonl.0123456789abcdef0123456789abcdef.tmp":  true, // another memory file's
		"memory.jsonl.not-a-token.tmp":                      true,
		"memory.jsonl.0123456789ABCDEF0123456789ABCDEF.tmp": true, // tokens are lowercase
	}
	for name := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != "memory.jsonl.fedcba9876543210fedcba9876543210.tmp" {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv := startServer(t, file, sharingVersion, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person")))
	for name, kept := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists != kept {
			t.Errorf("%s: exists after a save: %v, want %v", name, exists, kept)
		}
	}
}

// TestSharingNotifiesAcrossProcesses subscribes a 2025 client and a
// 2026-07-28 client on two processes and writes through a third.
func TestSharingNotifiesAcrossProcesses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	updates := func(ch chan<- string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case ch <- req.Params.URI:
			default: // the test only needs to know one arrived
			}
		}}
	}
	aUpdates := make(chan string, 100)
	bUpdates := make(chan string, 100)
	a := startServer(t, file, "2025-06-18", updates(aUpdates))
	b := startServer(t, file, "2026-07-28", updates(bUpdates))
	c := startServer(t, file, sharingVersion, nil)

	if err := a.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "memory://knowledge-graph"}); err != nil {
		t.Fatalf("2025 client: resources/subscribe: %v", err)
	}
	// In the 2026-07-28 generation Subscribe holds the listen stream open
	// until the session closes.
	listenDone := make(chan error, 1)
	go func() {
		listenDone <- b.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "memory://knowledge-graph"})
	}()
	t.Cleanup(func() {
		b.close()
		select {
		case <-listenDone:
		case <-time.After(10 * time.Second):
			t.Error("the 2026-07-28 listen stream did not end when its session closed")
		}
	})

	// Wait for both subscriptions to be in place: write until both clients
	// have heard of a write.
	aHeard, bHeard := false, false
	for i, deadline := 0, time.Now().Add(15*time.Second); !aHeard || !bHeard; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("15 s of writes through another process: 2025 client notified: %v, 2026-07-28 client notified: %v", aHeard, bHeard)
		}
		if !c.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(fmt.Sprintf("warmup%d", i), "note"))) {
			t.FailNow()
		}
		aHeard = aHeard || receivedWithin(aUpdates, 500*time.Millisecond)
		bHeard = bHeard || receivedWithin(bUpdates, 500*time.Millisecond)
	}
	// Let late notifications of the warm-up writes arrive, then forget them.
	for receivedWithin(aUpdates, 500*time.Millisecond) || receivedWithin(bUpdates, 500*time.Millisecond) {
	}

	c.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Carol", "person", "wrote through process C")))
	for _, s := range []struct {
		who string
		ch  chan string
	}{{"2025 client (resources/subscribe)", aUpdates}, {"2026-07-28 client (subscriptions/listen)", bUpdates}} {
		select {
		case uri := <-s.ch:
			if uri != "memory://knowledge-graph" {
				t.Errorf("%s: update for %q", s.who, uri)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no notifications/resources/updated within 5 s of a write by another process", s.who)
		}
	}

	g := typedGraph(t, a.readGraph(ctx, t))
	if !slices.ContainsFunc(g.Entities, func(e wireEntity) bool { return e.Name == "Carol" }) {
		t.Errorf("read_graph through A does not show Carol, written through C: %+v", g)
	}
	res, err := a.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://knowledge-graph"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, `"Carol"`) {
		t.Errorf("resources/read through A does not show Carol (err %v): %+v", err, res)
	}
}

func receivedWithin(ch <-chan string, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestSharingExportGivesTheCurrentMemory: while a server holds writes that
// are only in its journal, and after it is killed with them there, the
// memory file alone is behind but export gives every write.
func TestSharingExportGivesTheCurrentMemory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE=1h")
	srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person", "in the journal")))

	export := func(when string) {
		t.Helper()
		cmd := serverCmd(file)
		cmd.Args = append(cmd.Args, "export")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: export: %v", when, err)
		}
		want := `{"type":"entity","name":"Alice","entityType":"person","observations":["in the journal"],"createdAt":"T","observationsHash":"91c0ae6f"}` + "\n"
		if out = stampTimes(out); string(out) != want {
			t.Errorf("%s: export gave %q, want %q", when, out, want)
		}
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("the write reached the memory file at once: the test no longer tests the journal")
	}
	export("while the server runs")
	srv.cmd.Process.Kill()
	srv.close()
	export("after the server was killed")
}
