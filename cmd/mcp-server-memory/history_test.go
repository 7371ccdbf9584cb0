package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// historyRecord is a record as history --json prints it.
type historyRecord struct {
	ID      string `json:"id"`
	Time    string `json:"time"`
	Tool    string `json:"tool"`
	Client  string `json:"client"`
	Changes []struct {
		Op     string `json:"op"`
		Entity struct {
			Name string `json:"name"`
		} `json:"entity"`
	} `json:"changes"`
}

// readHistory runs the history command on the memory file, as a user does.
func readHistory(t *testing.T, memoryFile string, args ...string) []historyRecord {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"history", "--json", "--file", memoryFile}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("history --json: %v", err)
	}
	var recs []historyRecord
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatalf("history --json printed %s: %v", out, err)
	}
	return recs
}

// The tools record, in the history beside the memory file, which tool
// wrote and the name the client gave in its clientInfo: at initialize
// (2025 generation) or on each request (2026-07-28).
func TestHistoryRecordsToolAndClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := startServer(t, file, version, nil)
			srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person", "likes tea")))
			srv.mustCall(ctx, t, "delete_entities", map[string]any{"entityNames": []string{"Alice"}})
			srv.mustCall(ctx, t, "read_graph", map[string]any{})
			srv.close() // compacts: the records move to the history file
			if _, err := os.Stat(file + ".history"); err != nil {
				t.Fatalf("no history file after a clean exit: %v", err)
			}
			recs := readHistory(t, file)
			var got []string
			for _, r := range recs {
				got = append(got, r.Tool+"/"+r.Client+"/"+r.Changes[0].Op+"/"+r.Changes[0].Entity.Name)
			}
			want := []string{"delete_entities/e2e/deleteEntity/Alice", "create_entities/e2e/createEntity/Alice"}
			if !slices.Equal(got, want) {
				t.Errorf("history %q, want %q", got, want)
			}
		})
	}
}

// TestHistorySurvivesSIGKILL kills a server in the middle of a stream of
// writes, a few times over. After each kill and a restart the history and
// the memory say the same: every write in the memory (every acknowledged
// one, and an unacknowledged one that landed) has exactly one record, and
// no record names a write that did not land.
func TestHistorySurvivesSIGKILL(t *testing.T) {
	const rounds = 3
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	var acked []string
	for round := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		idle := []string{"500us", "2ms", "10ms"}[round%3]
		srv := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE="+idle)
		acked = append(acked, writeUntilKilled(ctx, t, srv, rng, round, 10+rng.IntN(30))...)

		// A restarted server reads what the killed one left and, at its
		// clean exit, compacts it.
		fresh := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_LOCK_STALE_AFTER=2s", "MCP_SERVER_MEMORY_LOCK_TIMEOUT=20s")
		fresh.readGraph(ctx, t)
		fresh.close()
		cancel()

		inMemory := entitiesIn(decodeMemoryFile(t, file))
		recorded := map[string]int{}
		for _, r := range readHistory(t, file) {
			for _, c := range r.Changes {
				recorded[c.Entity.Name]++
			}
		}
		for _, name := range acked {
			if _, ok := inMemory[name]; !ok {
				t.Errorf("acknowledged write %s is missing from the memory", name)
			}
		}
		for name := range inMemory {
			if recorded[name] != 1 {
				t.Errorf("round %d: write %s, in the memory, has %d history records, want 1", round, name, recorded[name])
			}
		}
		for name := range recorded {
			if _, ok := inMemory[name]; !ok {
				t.Errorf("round %d: the history records %s, a write that did not land", round, name)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// TestInteropHistory alternates writes by our server and by the reference
// on one memory file. The reference knows nothing of the history file and
// rewrites the memory file without times; nothing but times is lost, the
// history holds each of our writes once, and an undo of our deletion,
// made after the reference wrote, restores the entity with what the
// reference had added to it, which the reference then reads.
func TestInteropHistory(t *testing.T) {
	requireReference(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	ours := startServer(t, file, sharingVersion, nil)
	ours.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Alice", "person", trickyTexts[:2]...), entityArg("Bob", "person")))
	ours.mustCall(ctx, t, "create_relations", map[string]any{"relations": []map[string]any{relationArg("Alice", "Bob", "knows")}})
	ours.close()

	ref := startReference(t, file)
	ref.mustCall(ctx, t, "add_observations", addObservationsArgs("Alice", "added by the reference"))
	ref.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("Carol", "person", "from the reference")))
	ref.close()

	ours = startServer(t, file, sharingVersion, nil)
	before := ours.readGraph(ctx, t)
	ours.mustCall(ctx, t, "delete_entities", map[string]any{"entityNames": []string{"Alice"}})
	ours.close()

	ref = startReference(t, file)
	ref.mustCall(ctx, t, "create_relations", map[string]any{"relations": []map[string]any{relationArg("Carol", "Bob", "knows")}})
	ref.close()

	recs := readHistory(t, file)
	var tools []string
	for _, r := range recs {
		tools = append(tools, r.Tool)
	}
	if want := []string{"delete_entities", "create_relations", "create_entities"}; !slices.Equal(tools, want) {
		t.Fatalf("history %q, want our writes %q, newest first", tools, want)
	}
	undo := exec.Command(binary, "undo", "--file", file, "--yes", recs[0].ID)
	if out, err := undo.CombinedOutput(); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	ours = startServer(t, file, sharingVersion, nil)
	want := typedGraph(t, ours.readGraph(ctx, t))
	ours.close()
	alice := slices.IndexFunc(want.Entities, func(e wireEntity) bool { return e.Name == "Alice" })
	if alice < 0 || !slices.Contains(want.Entities[alice].Observations, "added by the reference") {
		t.Errorf("after the undo: %+v, want Alice back with the reference's observation", want.Entities)
	}
	if len(want.Relations) != 2 || len(want.Entities) != len(typedGraph(t, before).Entities) {
		t.Errorf("after the undo: %+v, want Alice, Bob, Carol and both relations", want)
	}
	ref = startReference(t, file)
	assertSameGraph(t, "the reference's read_graph after the undo", typedGraph(t, ref.readGraph(ctx, t)), want)
	ref.close()
	if got := readHistory(t, file); len(got) != 4 || got[0].Tool != "undo" {
		t.Errorf("history after the undo: %d records, newest %q; want 4, newest undo", len(got), got[0].Tool)
	}
}

// A mass deletion whose record alone is bigger than the history's bound
// (MEMORY_HISTORY_MAX_MB=1) is kept, the older records going first, and
// the log says the bound is exceeded; it can then be undone.
func TestMassDeletionOverTheBoundStaysUndoable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := startServer(t, file, sharingVersion, nil, "MEMORY_HISTORY_MAX_MB=1")
	pad := strings.Repeat("x", 1000)
	var all []string
	for batch := range 4 {
		var ents []map[string]any
		for i := range 300 {
			name := fmt.Sprintf("E%d-%d", batch, i)
			ents = append(ents, entityArg(name, "bulk", pad+name))
			all = append(all, name)
		}
		srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(ents...))
	}
	srv.mustCall(ctx, t, "delete_entities", map[string]any{"entityNames": all})
	srv.close()
	if !strings.Contains(srv.stderr.String(), "over its bound of 1.0 MB") {
		t.Errorf("the log does not say the bound is exceeded:\n%s", srv.stderr)
	}
	recs := readHistory(t, file)
	if len(recs) == 0 || recs[0].Tool != "delete_entities" || len(recs[0].Changes) != len(all) {
		t.Fatalf("the history lost the mass deletion: %d records", len(recs))
	}
	if fi, err := os.Stat(file + ".history"); err != nil || fi.Size() > 2<<20 {
		t.Errorf("the history is not bounded to its newest record: %v %v", fi.Size(), err)
	}
	undo := exec.Command(binary, "undo", "--file", file, "--yes", recs[0].ID)
	if out, err := undo.CombinedOutput(); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	if got := len(entitiesIn(decodeMemoryFile(t, file))); got != len(all) {
		t.Errorf("%d entities after the undo, want %d", got, len(all))
	}
}

// The history follows the memory file's current mode: made at 0644 beside
// a 0644 memory, it is 0600 after the owner narrows the memory and a
// server writes again.
func TestHistoryFollowsTheMemoryFilesMode(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(file, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, mode := range []os.FileMode{0o644, 0o600} {
		os.Chmod(file, mode)
		srv := startServer(t, file, sharingVersion, nil)
		srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(fmt.Sprint("E", i), "t", "secret")))
		srv.close()
		fi, err := os.Stat(file + ".history")
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("history mode %v with the memory file at %v", fi.Mode().Perm(), mode)
		}
	}
}

// A garbled line in the journal (a dead line, which the journal's reader
// skips) is not copied into the history when the journal is folded in.
func TestGarbledJournalLineStaysOutOfTheHistory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := startServer(t, file, sharingVersion, nil)
	srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("A", "t", "a")))
	srv.cmd.Process.Kill() // the journal stays
	srv.close()
	j, err := os.OpenFile(file+".journal", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("no journal after a kill: %v", err)
	}
	const garbled = `{"id":"01a2345678ab12cd34","time":"2026-12-01T00:00:00Z","changes":[{"op":"creat` + "\n"
	j.WriteString(garbled)
	j.Close()
	srv = startServer(t, file, sharingVersion, nil)
	srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg("B", "t", "b")))
	srv.close()
	data, err := os.ReadFile(file + ".history")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "01a2345678ab12cd34") {
		t.Errorf("the garbled journal line is in the history:\n%s", data)
	}
	if recs := readHistory(t, file); len(recs) != 2 {
		t.Errorf("%d records, want the two writes'", len(recs))
	}
}
