package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// meaningServer serves a memory searched by meaning through stub, its
// background embedding running until the test ends.
func meaningServer(t *testing.T, stub *meaningtest.Server, memory string) (*Server, *meaning.Index) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(file, []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := meaning.OpenStorage(meaning.FileStorage(file+".vectors"), meaning.NewClient(stub.BaseURL(), "m", ""),
		meaning.Options{Settle: time.Millisecond, Retry: time.Hour, Logf: t.Logf})
	s := New(filestore.Open(file, filestore.Options{}), Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Meaning: ix})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Watch(ctx)
	return s, ix
}

func TestSearchByMeaning(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	s, ix := meaningServer(t, stub, `{"type":"entity","name":"Ada","entityType":"person","observations":["Standing preference: short answers","loves photography"]}`+"\n"+
		`{"type":"entity","name":"Bob","entityType":"person","observations":["plays chess"]}`+"\n")
	cs := connect(t, s, handshakeVersion, nil)
	waitFor(t, "the memory's texts to be embedded", func() bool { ready, have, _ := ix.Status(); return ready && have > 0 })

	failed, got := callText(t, cs, "search_nodes", map[string]any{"query": "hobby"})
	if failed || !strings.Contains(got, `"name":"Ada"`) || strings.Contains(got, `"name":"Bob"`) || !strings.Contains(got, meaningClosest) {
		t.Errorf("hobby by meaning:\n%s", got)
	}
	if !strings.Contains(got, "Standing preference: short answers") {
		t.Errorf("no standing note in a search by meaning:\n%s", got)
	}
	failed, got = callText(t, cs, "search_nodes", map[string]any{"query": "chess"})
	if failed || !strings.Contains(got, `"name":"Bob"`) {
		t.Errorf("chess by words and meaning: no Bob:\n%s", got)
	}

	stub.SetDown(true)
	failed, got = callText(t, cs, "search_nodes", map[string]any{"query": "chess player"})
	if failed || !strings.Contains(got, "Search by meaning is unavailable for this query: the embeddings endpoint at "+ix.Endpoint()+" does not answer") || !strings.Contains(got, `"name":"Bob"`) {
		t.Errorf("endpoint down at the query:\n%s", got)
	}
}

func TestSearchByMeaningNotReady(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	stub.SetDown(true)
	s, ix := meaningServer(t, stub, `{"type":"entity","name":"Bob","entityType":"person","observations":["plays chess"]}`+"\n")
	cs := connect(t, s, handshakeVersion, nil)
	waitFor(t, "the endpoint to be seen down", func() bool { down, _ := ix.Down(); return down })
	failed, got := callText(t, cs, "search_nodes", map[string]any{"query": "chess"})
	want := "Search by meaning is unavailable: the embeddings endpoint at " + ix.Endpoint() + " does not answer: "
	if failed || !strings.Contains(got, want) || !strings.Contains(got, "(0 of 1 texts embedded): these are matches by words only.") || !strings.Contains(got, `"name":"Bob"`) {
		t.Errorf("endpoint down from the start:\n%s\nwant a note containing %q", got, want)
	}
}

// The notes of a search by meaning that is not ready, and of a busy one.
func TestMeaningNotReadyYet(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	ix := meaning.OpenStorage(meaning.FileStorage(filepath.Join(t.TempDir(), "v")), meaning.NewClient(stub.BaseURL(), "m", ""), meaning.Options{})
	if got, want := meaningNotReady(ix, 3, 10), "Search by meaning is not ready yet (3 of 10 texts embedded): these are matches by words only."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := meaningUnavailable(ix, meaning.ErrBusy); !strings.HasPrefix(got, "Search by meaning is unavailable for this query: "+meaning.ErrBusy.Error()+". These are") {
		t.Errorf("busy: %q", got)
	}
}
