//go:build !windows

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

// startMeaningServer starts the server on memoryFile with search by
// meaning through stub's model (none: the variables unset), and returns
// the session and what the server logs.
func startMeaningServer(t *testing.T, memoryFile string, stub *meaningtest.Server, model string) (*mcp.ClientSession, *testlog.Buffer) {
	t.Helper()
	var env []string
	if model != "" {
		env = []string{"MEMORY_EMBEDDINGS_URL=" + stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=" + model}
	}
	return connectStdio(t, serverCmd(memoryFile, env...))
}

// connectStdio starts cmd, the server on stdio, and returns a session
// with it and what it logs.
func connectStdio(t *testing.T, cmd *exec.Cmd) (*mcp.ClientSession, *testlog.Buffer) {
	t.Helper()
	logs := testlog.OnFailure(t, "server stderr")
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

func search(t *testing.T, cs *mcp.ClientSession, query string) string {
	t.Helper()
	text, isErr := callTool(t, cs, "search_nodes", map[string]any{"query": query})
	if isErr {
		t.Fatalf("search_nodes %q: %s", query, text)
	}
	return text
}

// firstFound is the name of the first entity a search's answer shows.
func firstFound(t *testing.T, text string) string {
	t.Helper()
	var ans struct {
		Entities []struct{ Name string } `json:"entities"`
	}
	if err := json.NewDecoder(strings.NewReader(text)).Decode(&ans); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
	if len(ans.Entities) == 0 {
		return ""
	}
	return ans.Entities[0].Name
}

// waitMeaning searches for query until the background embedding has
// caught up and the first entity found is want, and returns that answer.
func waitMeaning(t *testing.T, cs *mcp.ClientSession, query, want string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		text := search(t, cs, query)
		if firstFound(t, text) == want {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("search by meaning for %q never found %s: %s", query, want, text)
		}
	}
}

const (
	unavailable = "Search by meaning is unavailable for this query"
	outageLog   = "searching by words only until the endpoint answers again"
)

// TestSearchByMeaningBinary: through the binary, a query sharing no word
// with its answer finds it by meaning; the endpoint going away, or
// answering slowly, mid-session falls back to words with a note and one
// log line, and the next query after it is back finds by meaning again;
// a write during the outage succeeds; a restart asks the endpoint for no
// vector again; a new model embeds everything again; with the variables
// unset the same query finds nothing by meaning.
func TestSearchByMeaningBinary(t *testing.T) {
	stub := meaningtest.New("m1", "m2")
	t.Cleanup(stub.Close)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cs, logs := startMeaningServer(t, file, stub, "m1")
	if text, isErr := callTool(t, cs, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": []string{"lives in Lisbon", "spends weekends on photography"}},
		map[string]any{"name": "Bob", "entityType": "person", "observations": []string{"works as a physician"}},
		map[string]any{"name": "Carnival", "entityType": "event", "observations": []string{"held every year in Rio"}},
	}}); isErr {
		t.Fatal(text)
	}
	text := waitMeaning(t, cs, "hobby", "Alice")
	if !strings.Contains(text, "and by meaning") {
		t.Fatalf("hobby by meaning: %s", text)
	}

	// The endpoint goes away.
	stub.SetDown(true)
	for _, q := range []string{"pastime", "camera"} {
		if text := search(t, cs, q); !strings.Contains(text, unavailable) || strings.Contains(text, `"Alice"`) {
			t.Errorf("%s with the endpoint down: %s", q, text)
		}
	}
	if text, isErr := callTool(t, cs, "add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "Bob", "contents": []string{"collects stamps"}}}}); isErr {
		t.Errorf("a write with the endpoint down: %s", text)
	}
	if n := strings.Count(logs.String(), outageLog); n != 1 {
		t.Errorf("the outage logged %d times, want once:\n%s", n, logs)
	}
	stub.SetDown(false)
	if text := search(t, cs, "pastime"); strings.Contains(text, unavailable) || !strings.Contains(text, `"Alice"`) {
		t.Errorf("pastime with the endpoint back: %s", text)
	}
	// The background catches up with the observation added while down.
	waitCaughtUp(t, stub, "m1", "Bob (person): collects stamps")
	// A bad answer (a vector short) is a fallback too.
	stub.SetBad(true)
	if text := search(t, cs, "hobbies"); !strings.Contains(text, unavailable) {
		t.Errorf("hobbies with the endpoint answering badly: %s", text)
	}
	stub.SetBad(false)
	// Slow answers are given up on.
	stub.SetDelay(time.Hour)
	if text := search(t, cs, "medic"); !strings.Contains(text, unavailable) {
		t.Errorf("medic with the endpoint slow: %s", text)
	}
	stub.SetDelay(0)
	if text := search(t, cs, "medic"); firstFound(t, text) != "Bob" {
		t.Errorf("medic with the endpoint fast again: %s", text)
	}
	cs.Close()

	// A restart reuses the stored vectors: only queries are sent.
	before := len(stub.Texts("m1"))
	cs, _ = startMeaningServer(t, file, stub, "m1")
	waitMeaning(t, cs, "brazil", "Carnival")
	if sent := stub.Texts("m1")[before:]; len(sent) != 1 || sent[0] != "brazil" {
		t.Errorf("after a restart the server sent %q, want only the query", sent)
	}
	cs.Close()

	// stats counts the vectors ready.
	stats := serverCmd(file, "MEMORY_EMBEDDINGS_URL="+stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m1")
	stats.Args = append(stats.Args, "stats", "--json")
	out, err := stats.Output()
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	var st struct {
		Vectors struct {
			Model        string
			Ready, Texts int
		}
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Vectors.Model != "m1" || st.Vectors.Ready != 5 || st.Vectors.Texts != 5 {
		t.Errorf("stats: %s (%v), want 5 of 5 vectors by m1", out, err)
	}

	// A new model embeds every text again.
	cs, _ = startMeaningServer(t, file, stub, "m2")
	waitMeaning(t, cs, "hobby", "Alice")
	if n := len(stub.Texts("m2")); n != 6 { // five texts and the query
		t.Errorf("the new model was sent %d texts, want 6: %q", n, stub.Texts("m2"))
	}
	cs.Close()

	// Off: words only, no note.
	requests := stub.Requests()
	cs, _ = startMeaningServer(t, file, stub, "")
	if text := search(t, cs, "hobby"); strings.Contains(text, "Alice") || strings.Contains(text, "meaning") {
		t.Errorf("hobby with search by meaning off: %s", text)
	}
	if n := stub.Requests() - requests; n != 0 {
		t.Errorf("with the variables unset the server made %d requests", n)
	}
}

// waitCaughtUp waits until the stub has been sent text.
func waitCaughtUp(t *testing.T, stub *meaningtest.Server, model, text string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		for _, s := range stub.Texts(model) {
			if s == text {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q was never embedded", text)
		}
	}
}

// TestNoMeaningWithoutVariables: with the MEMORY_EMBEDDINGS_* variables
// unset, writing and searching leaves no file but the memory's own beside
// it.
func TestNoMeaningWithoutVariables(t *testing.T) {
	dir := t.TempDir()
	cs, _ := startMeaningServer(t, filepath.Join(dir, "memory.jsonl"), nil, "")
	if text, isErr := callTool(t, cs, "create_entities", entityArgs("Alice")); isErr {
		t.Fatal(text)
	}
	search(t, cs, "hobby")
	cs.Close()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".vectors") {
			t.Errorf("with search by meaning off the server made %s", e.Name())
		}
	}
}

// TestMeaningKeyNeverShown: a malformed setting stops the server (exit 2)
// naming the variable, and an endpoint refusing the key, and quoting it,
// never gets it into the log.
func TestMeaningKeyNeverShown(t *testing.T) {
	const secret = "sk-never-shown-1234"
	dir := t.TempDir()
	cmd := serverCmd(filepath.Join(dir, "memory.jsonl"), "MEMORY_EMBEDDINGS_URL=http://127.0.0.1:9/v1", "MEMORY_EMBEDDINGS_API_KEY="+secret)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "MEMORY_EMBEDDINGS_MODEL") || strings.Contains(string(out), secret) {
		t.Errorf("no model: exit %d (%v), output %s; want 2, naming MEMORY_EMBEDDINGS_MODEL, without the key", code, err, out)
	}

	stub := meaningtest.New("m")
	t.Cleanup(stub.Close)
	stub.Key = "sk-the-right-one"
	cmd = serverCmd(filepath.Join(dir, "memory.jsonl"), "MEMORY_EMBEDDINGS_URL="+stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m", "MEMORY_EMBEDDINGS_API_KEY="+secret)
	logs := testlog.OnFailure(t, "server stderr")
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTool(t, cs, "create_entities", entityArgs("Alice")); isErr {
		t.Fatal(text)
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logs.String(), "Incorrect API key"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the refusal was never logged")
		}
	}
	cs.Close()
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the key is in the log:\n%s", logs)
	}
}

// TestPageCountsVectors: the page of `--http` and of the `ui` command says
// how many texts have their vector when search by meaning is on, and
// nothing of it when off.
func TestPageCountsVectors(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(`{"type":"entity","name":"Ada","entityType":"person","observations":["Took up photography","Lives in Lisbon"]}
{"type":"entity","name":"Lisbon","entityType":"city","observations":[]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	on := []string{"MEMORY_EMBEDDINGS_URL=" + stub.BaseURL(), "MEMORY_EMBEDDINGS_MODEL=m"}
	const token = "page-token-0123456789abcdef"
	vectors := func(t *testing.T, statsURL string) any {
		t.Helper()
		status, stats, _ := pageCall(t, "GET", statsURL, "", "Authorization", "Bearer "+token)
		if status != 200 {
			t.Fatalf("GET %s: %d", statsURL, status)
		}
		return stats["vectors"]
	}
	want := map[string]any{"ready": 3.0, "texts": 3.0}

	for _, env := range [][]string{on, nil} {
		cmd := serverCmd(file, append(env, "MEMORY_HTTP_TOKEN="+token, "MEMORY_DATABASE_URL=")...)
		cmd.Args = append(cmd.Args, "--http", "127.0.0.1:0")
		c := startChild(t, cmd)
		base := waitLog(t, c.stderr, regexp.MustCompile(`the memory's page at (http://127\.0\.0\.1:\d+)/; memory file `))[1]
		if env == nil {
			if v := vectors(t, base+"/api/stats"); v != nil {
				t.Errorf("--http without search by meaning: vectors %v, want none", v)
			}
			continue
		}
		// The server embeds in the background: the count reaches all.
		waitFor(t, "--http: every text with its vector", func() bool { return reflect.DeepEqual(vectors(t, base+"/api/stats"), want) })
		c.stop(t, os.Interrupt)
	}

	// The `ui` command counts the vectors file the server left.
	for _, env := range [][]string{on, nil} {
		cmd := serverCmd(file, append(env, "MEMORY_DATABASE_URL=")...)
		cmd.Args = append(cmd.Args, "ui", "--no-open")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		startChild(t, cmd)
		pageURL := ""
		for lines := bufio.NewScanner(out); pageURL == "" && lines.Scan(); {
			if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "http://"); ok {
				pageURL = "http://" + u
			}
		}
		got := vectors(t, pageURL+"api/stats")
		if env == nil && got != nil || env != nil && !reflect.DeepEqual(got, want) {
			t.Errorf("ui with %v: vectors %v", env, got)
		}
	}
}

// waitFor waits until cond holds, failing the test after a generous while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

// TestMeaningHearsAnotherServerBinary: two servers on one memory file; an
// entity the other one creates, and an observation it adds to an entity
// that was there, are found by meaning here once this server has heard of
// them (each look takes only what changed: the other process's changes
// too).
func TestMeaningHearsAnotherServerBinary(t *testing.T) {
	stub := meaningtest.New("m1")
	t.Cleanup(stub.Close)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	a, _ := startMeaningServer(t, file, stub, "m1")
	createPeople(t, a,
		person("Carnival", "event", "held every year in Rio"),
		person("Dave", "person", "likes tea"))
	b, _ := startMeaningServer(t, file, stub, "m1")
	waitMeaning(t, b, "brazil", "Carnival")

	if text, isErr := callTool(t, a, "add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "Dave", "contents": []string{"works as a physician"}}}}); isErr {
		t.Fatal(text)
	}
	waitMeaning(t, b, "doctor", "Dave")
	createPeople(t, a, person("Alice", "person", "spends weekends on photography"))
	waitMeaning(t, b, "hobby", "Alice")
}

// TestMeaningEndpointDownNote: with the endpoint not answering at all,
// a search says so, naming it and what happened, rather than "not ready
// yet", and still answers by words: on a memory whose texts lack vectors,
// and for a query on a memory without texts then.
func TestMeaningEndpointDownNote(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(file, []byte(`{"type":"entity","name":"Alice","entityType":"person","observations":["spends weekends on photography"]}`+"\n"), 0o600)
	cs, _ := connectStdio(t, serverCmd(file, "MEMORY_EMBEDDINGS_URL=http://127.0.0.1:9/v1", "MEMORY_EMBEDDINGS_MODEL=m"))
	want := "Search by meaning is unavailable: the embeddings endpoint at http://127.0.0.1:9/v1 does not answer: "
	waitFor(t, "the note that the endpoint does not answer", func() bool {
		text := search(t, cs, "photography")
		if !strings.Contains(text, want) {
			return false
		}
		if !strings.Contains(text, "connection refused") || !strings.Contains(text, "(0 of 1 texts embedded)") || !strings.Contains(text, `"Alice"`) {
			t.Fatalf("the note: %s; want why, the count, and the answer by words", text)
		}
		return true
	})
	cs.Close()

	cs, _ = connectStdio(t, serverCmd(filepath.Join(t.TempDir(), "memory.jsonl"), "MEMORY_EMBEDDINGS_URL=http://127.0.0.1:9/v1", "MEMORY_EMBEDDINGS_MODEL=m"))
	want = unavailable + ": the embeddings endpoint at http://127.0.0.1:9/v1 does not answer: "
	if text := search(t, cs, "photography"); !strings.Contains(text, want) || !strings.Contains(text, "connection refused") {
		t.Errorf("a query with the endpoint down: %s; want %q and why", text, want)
	}
}

// TestFusionBinary: 30 filler people named "Person NN" and three people
// with hobbies; each question's common word ("person") matches every
// filler, and its hobby word none: through the binary, the hobbyist the
// stand-in model ranks first comes first, not the fillers.
func TestFusionBinary(t *testing.T) {
	stub := meaningtest.New("m")
	t.Cleanup(stub.Close)
	cs, _ := startMeaningServer(t, filepath.Join(t.TempDir(), "memory.jsonl"), stub, "m")
	var ents []any
	for i := range 30 {
		ents = append(ents, map[string]any{"name": fmt.Sprintf("Person %02d", i+1), "entityType": "person", "observations": []string{
			fmt.Sprintf("registered on day %d at the front desk of the city office", i+1), "lives in a flat near the station with a view of the river"}})
	}
	ents = append(ents,
		map[string]any{"name": "Carol Tanaka", "entityType": "person", "observations": []string{"plays violin", "works at the library"}},
		map[string]any{"name": "Dmitri Ivanov", "entityType": "person", "observations": []string{"takes photography", "drives a blue van"}},
		map[string]any{"name": "Erin Walsh", "entityType": "person", "observations": []string{"bakes sourdough", "has two cats"}})
	if text, isErr := callTool(t, cs, "create_entities", map[string]any{"entities": ents}); isErr {
		t.Fatal(text)
	}
	waitMeaning(t, cs, "Which person is into music?", "Carol Tanaka")
	for q, want := range map[string]string{"Which person likes taking pictures?": "Dmitri Ivanov", "Which person enjoys cooking?": "Erin Walsh"} {
		if got := firstFound(t, search(t, cs, q)); got != want {
			t.Errorf("%q found %s first, want %s", q, got, want)
		}
	}
}

// TestMeaningNoRedirectAwayBinary: an endpoint that redirects to another
// origin (another port of the same host) gets no text and no key sent
// there by the binary; the log says why, without the key or any part of
// it.
func TestMeaningNoRedirectAwayBinary(t *testing.T) {
	const secret = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(other.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	os.WriteFile(file, []byte(`{"type":"entity","name":"Alice","entityType":"person","observations":["a private fact"]}`+"\n"), 0o600)
	cs, logs := connectStdio(t, serverCmd(file, "MEMORY_EMBEDDINGS_URL="+redirector.URL+"/v1", "MEMORY_EMBEDDINGS_MODEL=m", "MEMORY_EMBEDDINGS_API_KEY="+secret))
	waitFor(t, "the refused redirect in the log", func() bool { return strings.Contains(logs.String(), "another origin: not followed") })
	if text := search(t, cs, "private"); !strings.Contains(text, "another origin: not followed") {
		t.Errorf("search: %s; want the note to say why", text)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	if strings.Contains(logs.String(), secret[:8]) {
		t.Errorf("the log holds the key's start:\n%s", logs)
	}
}
