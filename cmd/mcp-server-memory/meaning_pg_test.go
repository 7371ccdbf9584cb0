//go:build !windows

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

// Search by meaning on a memory in PostgreSQL, on named memories, and
// with the memory closing.

const meaningWriter = "meaning-writer-0123456789abcdef"

// startMeaningReplica starts the binary on stdio serving memory name of
// the database at url, with search by meaning through stub's model m1.
func startMeaningReplica(t *testing.T, url, name string, stub *meaningtest.Server) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(binary, "--memory", name)
	cmd.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+url, "MEMORY_FILE_PATH=", "MCP_SERVER_MEMORY_WATCH_INTERVAL=100ms",
		"MEMORY_EMBEDDINGS_URL="+stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m1")
	cs, _ := connectStdio(t, cmd)
	return cs
}

func createPeople(t *testing.T, cs *mcp.ClientSession, people ...map[string]any) {
	t.Helper()
	ents := make([]any, len(people))
	for i, p := range people {
		ents[i] = p
	}
	if text, isErr := callTool(t, cs, "create_entities", map[string]any{"entities": ents}); isErr {
		t.Fatal(text)
	}
}

func person(name, typ string, observations ...string) map[string]any {
	return map[string]any{"name": name, "entityType": typ, "observations": observations}
}

// embeddedOnce fails t unless each of the memory's texts was sent to the
// stub exactly once.
func embeddedOnce(t *testing.T, stub *meaningtest.Server, texts ...string) {
	t.Helper()
	sent := map[string]int{}
	for _, s := range stub.Texts("m1") {
		sent[s]++
	}
	for _, text := range texts {
		if sent[text] != 1 {
			t.Errorf("%q was embedded %d times, want once: %q", text, sent[text], stub.Texts("m1"))
		}
	}
}

// TestMeaningReplicasShareVectorsBinary: two servers on one memory in
// PostgreSQL share its vectors. Replica B, started after replica A
// embedded the memory, answers by meaning having sent only the query; a
// write through A while both run is embedded once between them, and B
// finds it by meaning.
func TestMeaningReplicasShareVectorsBinary(t *testing.T) {
	url := pgtest.URL(t)
	name := pgtest.MemoryName(t)
	stub := meaningtest.New("m1")
	t.Cleanup(stub.Close)
	a := startMeaningReplica(t, url, name, stub)
	createPeople(t, a,
		person("Alice", "person", "lives in Lisbon", "spends weekends on photography"),
		person("Carnival", "event", "held every year in Rio"))
	waitMeaning(t, a, "hobby", "Alice")

	before := len(stub.Texts("m1"))
	b := startMeaningReplica(t, url, name, stub)
	waitMeaning(t, b, "brazil", "Carnival")
	if sent := stub.Texts("m1")[before:]; len(sent) != 1 || sent[0] != "brazil" {
		t.Errorf("replica B sent %q, want only its query", sent)
	}

	// The endpoint answers slowly, so that both replicas look for Bob's
	// text while one is embedding it.
	stub.SetDelay(500 * time.Millisecond)
	createPeople(t, a, person("Bob", "person", "works as a physician"))
	waitMeaning(t, b, "doctor", "Bob")
	stub.SetDelay(0)
	waitMeaning(t, a, "medic", "Bob")
	embeddedOnce(t, stub, "Alice (person): lives in Lisbon", "Alice (person): spends weekends on photography",
		"Carnival (event): held every year in Rio", "Bob (person): works as a physician")

	// stats counts the vectors in the database.
	stats := exec.Command(binary, "stats", "--json", "--memory", name)
	stats.Env = append(os.Environ(), "MEMORY_DATABASE_URL="+url, "MEMORY_FILE_PATH=", "MEMORY_EMBEDDINGS_URL="+stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m1")
	out, err := stats.Output()
	var st struct{ Vectors struct{ Ready, Texts int } }
	if err != nil || json.Unmarshal(out, &st) != nil || st.Vectors.Ready != 4 || st.Vectors.Texts != 4 {
		t.Errorf("stats: %s (%v), want 4 of 4 vectors", out, err)
	}
}

// startNamedMeaning runs the binary serving named memories, from the
// directory dir or (dir "") the database at url, with search by meaning
// through stub's model m1, and returns its base URL.
func startNamedMeaning(t *testing.T, dir, url string, stub *meaningtest.Server) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(meaningWriter+" * write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--http", "127.0.0.1:0", "--tokens", tokens}
	env := []string{"MEMORY_HTTP_TOKEN=", "MEMORY_FILE_PATH=", "MEMORY_DATABASE_URL=" + url, "MCP_SERVER_MEMORY_WATCH_INTERVAL=100ms",
		"MEMORY_EMBEDDINGS_URL=" + stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m1"}
	if dir != "" {
		args = append(args, "--memories", dir)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr := startChild(t, cmd).stderr
	base := "http://" + waitLog(t, stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
	if !strings.Contains(stderr.String(), "search by meaning: model \"m1\"") || strings.Contains(stderr.String(), "not used") {
		t.Errorf("the log does not say search by meaning is on:\n%s", stderr)
	}
	return base
}

// TestNamedMemoryMeaningBinary: a named memory, in a memory file and in
// PostgreSQL, finds by meaning; another memory does not see its
// entities, and asks again only for a query no memory asked for (the
// memories share the recent queries' vectors); and reading and searching
// a memory nobody wrote leaves nothing behind (no file, no vectors file,
// no row).
func TestNamedMemoryMeaningBinary(t *testing.T) {
	for _, where := range []string{"file", "database"} {
		t.Run(where, func(t *testing.T) {
			stub := meaningtest.New("m1")
			t.Cleanup(stub.Close)
			var dir, url string
			if where == "file" {
				dir = t.TempDir()
			} else {
				url = pgtest.URL(t)
			}
			base := startNamedMeaning(t, dir, url, stub)
			team, ghost := pgtest.MemoryName(t), pgtest.MemoryName(t)
			cs := mcpSession(t, base, team, "2025-11-25", meaningWriter)
			createPeople(t, cs,
				person("Alice", "person", "spends weekends on photography"),
				person("Carnival", "event", "held every year in Rio"))
			waitMeaning(t, cs, "hobby", "Alice")
			waitMeaning(t, cs, "brazil", "Carnival")

			requests := stub.Requests()
			other := mcpSession(t, base, ghost, "2026-07-28", meaningWriter)
			for _, q := range []string{"hobby", "Alice"} {
				if text := search(t, other, q); strings.Contains(text, "Alice") {
					t.Errorf("memory %s found %s's entities: %s", ghost, team, text)
				}
			}
			if text, _ := callTool(t, other, "read_graph", map[string]any{}); strings.Contains(text, `"name"`) {
				t.Errorf("memory %s reads %s", ghost, text)
			}
			other.Close()
			// The vector of "hobby" is the one the other memory asked for.
			if n := stub.Requests() - requests; n != 1 {
				t.Errorf("searching a memory nobody wrote made %d requests, want 1 (the new query)", n)
			}
			if dir != "" {
				files, _ := filepath.Glob(filepath.Join(dir, ghost+"*"))
				if len(files) != 0 {
					t.Errorf("reading a memory nobody wrote left %q", files)
				}
				if _, err := os.Stat(filepath.Join(dir, team+".jsonl.vectors")); err != nil {
					t.Errorf("memory %s has no vectors file: %v", team, err)
				}
				return
			}
			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var ghosts, vectors int
			err = conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM memories WHERE name = $1),
				(SELECT count(*) FROM memory_vectors v JOIN memories m ON m.id = v.memory_id WHERE m.name = $2)`, ghost, team).Scan(&ghosts, &vectors)
			if err != nil || ghosts != 0 || vectors != 2 {
				t.Errorf("%d rows of the memory nobody wrote, %d vectors of %s (%v); want none, and 2", ghosts, vectors, team, err)
			}
		})
	}
}

// indexesRunning counts the goroutines of this process running search
// by meaning's background embedding.
func indexesRunning(t *testing.T) int {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	return strings.Count(b.String(), "meaning.(*Index).Run(")
}

// waitIndexes waits until n indexes run.
func waitIndexes(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); indexesRunning(t) != n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d indexes running, want %d", indexesRunning(t), n)
		}
	}
}

// TestMeaningClosesWithItsMemory: the server of named memories, in this
// process, runs one index per open memory and stops it when the memory
// closes: a memory nobody wrote as soon as its request ends, a memory
// unused for the idle timeout then, and one closed to make room under
// --max-open-memories. Opened again, a memory's index reads its vectors
// again, and the first search finds by meaning having sent only the query.
func TestMeaningClosesWithItsMemory(t *testing.T) {
	for _, where := range []string{"file", "database"} {
		t.Run(where, func(t *testing.T) {
			waitIndexes(t, 0)
			stub := meaningtest.New("m1")
			t.Cleanup(stub.Close)
			vars := memoryconfig.Vars{"MEMORY_EMBEDDINGS_URL": stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL": "m1", "MCP_SERVER_MEMORY_WATCH_INTERVAL": "100ms"}
			o := options{addr: "127.0.0.1:0", tokens: filepath.Join(t.TempDir(), "tokens")}
			if where == "file" {
				o.memories = t.TempDir()
			} else {
				vars["MEMORY_DATABASE_URL"] = pgtest.URL(t)
			}
			if err := os.WriteFile(o.tokens, []byte(meaningWriter+" * write\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			o.env = memoryconfig.Read(vars)
			o.limits.MemoryIdleTimeout, o.limits.MaxOpenMemories = 400*time.Millisecond, 2
			logs, stop := serveInProcess(t, o)
			base := "http://" + waitLog(t, logs, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
			a, b, c, ghost := pgtest.MemoryName(t), pgtest.MemoryName(t), pgtest.MemoryName(t), pgtest.MemoryName(t)

			cs := mcpSession(t, base, a, "2025-11-25", meaningWriter)
			createPeople(t, cs, person("Alice", "person", "spends weekends on photography"))
			waitMeaning(t, cs, "hobby", "Alice")
			if n := indexesRunning(t); n != 1 {
				t.Errorf("%d indexes running with one memory open", n)
			}
			// A memory nobody wrote closes when its request ends.
			other := mcpSession(t, base, ghost, "2026-07-28", meaningWriter)
			search(t, other, "hobby")
			other.Close()
			waitIndexes(t, 1)
			// Unused past the idle timeout, memory a closes.
			cs.Close()
			waitLog(t, logs, regexp.MustCompile(`memory `+a+` closed: unused for`))
			waitIndexes(t, 0)

			// Opened again, it reads its vectors again, and the first
			// search finds by meaning, having sent only the query.
			before := len(stub.Texts("m1"))
			cs = mcpSession(t, base, a, "2025-11-25", meaningWriter)
			if text := search(t, cs, "pastime"); firstFound(t, text) != "Alice" {
				t.Errorf("the first search after memory %s opened again: %s", a, text)
			}
			if sent := stub.Texts("m1")[before:]; len(sent) != 1 || sent[0] != "pastime" {
				t.Errorf("memory %s opened again sent %q, want only the query", a, sent)
			}
			// At most two memories open: a third closes the one unused longest.
			cs2 := mcpSession(t, base, b, "2026-07-28", meaningWriter)
			createPeople(t, cs2, person("Carnival", "event", "held every year in Rio"))
			waitMeaning(t, cs2, "brazil", "Carnival")
			cs.Close()
			cs3 := mcpSession(t, base, c, "2026-07-28", meaningWriter)
			createPeople(t, cs3, person("Bob", "person", "works as a physician"))
			waitMeaning(t, cs3, "doctor", "Bob")
			if n := indexesRunning(t); n > 2 {
				t.Errorf("%d indexes running, over the two memories open", n)
			}
			cs2.Close()
			cs3.Close()
			if status := stop(); status != 0 {
				t.Errorf("exit status %d", status)
			}
			waitIndexes(t, 0)
		})
	}
}
