package meaning

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// TestClientFollowsNoRedirectAway: a redirect to another origin (here
// another port of the same host) is not followed, with or without a key:
// neither the key nor the texts reach it, and the error says why. One
// within the configured origin is followed.
func TestClientFollowsNoRedirectAway(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here/embeddings" {
			http.Redirect(w, r, "/v1/embeddings", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, other.URL+"/v1/embeddings", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	for _, key := range []string{"sk-secret-key-0123456789", ""} {
		_, err := NewClient(redirector.URL+"/v1", "m", key).Embed(context.Background(), []string{"Alice (person): private"})
		if err == nil || !strings.Contains(err.Error(), "another origin: not followed") || key != "" && strings.Contains(err.Error(), key) {
			t.Errorf("key %q: %v, want the redirect refused", key, err)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	// Within the origin: the stub's own path, through a redirect there.
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/here/embeddings" {
			http.Redirect(w, r, "/v1/embeddings", http.StatusTemporaryRedirect)
			return
		}
		stub.Config.Handler.ServeHTTP(w, r)
	}))
	defer same.Close()
	if _, err := NewClient(same.URL+"/here", "m", "").Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("a redirect within the origin: %v", err)
	}
}

// TestClientKeyAcrossTheCut: an error message that quotes the key where
// the 300-byte cut falls leaks no part of it, nor does one quoting the
// key's start only.
func TestClientKeyAcrossTheCut(t *testing.T) {
	const key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"
	var msg atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": msg.Load().(string)}})
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "m", key)
	for _, m := range []string{
		strings.Repeat("x", 280) + "key " + key + " refused",
		strings.Repeat("é", 100) + " key " + key[:20] + "... refused",
	} {
		msg.Store(m)
		_, err := c.Embed(context.Background(), []string{"x"})
		if err == nil {
			t.Fatal("no error")
		}
		for n := minQuoted; n <= len(key); n++ {
			if strings.Contains(err.Error(), key[:n]) || strings.Contains(err.Error(), key[len(key)-n:]) {
				t.Fatalf("the error holds %d bytes of the key: %v", n, err)
			}
		}
		if !strings.Contains(err.Error(), "[the API key]") || !strings.Contains(err.Error(), "401") {
			t.Errorf("error %v, want the message with the key taken out", err)
		}
	}
}

// TestClientBoundsTheAnswer: an endpoint sending an endless answer slowly
// is cut at the bound for the texts asked for, and within the context's
// deadline.
func TestClientBoundsTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"embedding":[`))
		chunk := []byte(strings.Repeat("0.000000000000001,", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := NewClient(srv.URL, "m", "")
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("an endless answer: %v, want the bound", err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"embedding":[`))
		for r.Context().Err() == nil {
			w.Write([]byte("0.1,"))
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = NewClient(slow.URL, "m", "").Embed(ctx, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "in time") {
		t.Errorf("a trickling answer: %v, want it late", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a trickling answer took %v past a 200 ms deadline", d)
	}
}

// TestModelDimensionChange: when the endpoint starts answering vectors of
// another length for the same model, its answers are refused, for the
// memory's texts and for queries, with one log line saying what happened
// and what to do.
func TestModelDimensionChange(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	var l logs
	ix, err := Open(t.TempDir()+"/memory.jsonl.vectors", NewClient(stub.BaseURL(), "m", ""), Options{Logf: l.logf})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	stub.SetDims(512)
	store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"plays chess"}}})
		return err
	}})
	err = ix.pass(context.Background(), store)
	if err == nil || !strings.Contains(err.Error(), "512 dimensions") || !strings.Contains(err.Error(), "have 256") {
		t.Fatalf("a pass after the change: %v, want the change refused", err)
	}
	ix.failed(err) // as Run does
	if _, err := ix.Query(context.Background(), "chess"); err == nil || !strings.Contains(err.Error(), "512 dimensions") {
		t.Errorf("a query after the change: %v, want the change refused", err)
	}
	if n := l.count("512 dimensions for model \"m\""); n != 1 {
		t.Errorf("log:\n%s\nwant the change once", l.String())
	}
	if _, have, want := ix.Status(); have != want-1 {
		t.Errorf("%d of %d texts have a vector, want all but the new one", have, want)
	}
}

// TestQueriesInFlightAreBounded: many searches at once ask the endpoint
// for at most maxAsking query vectors at a time; the others wait their
// turn within QueryTimeout, or answer by words.
func TestQueriesInFlightAreBounded(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	stub.SetDelay(300 * time.Millisecond)
	ix := OpenStorage(FileStorage(t.TempDir()+"/v"), NewClient(stub.BaseURL(), "m", ""), Options{})
	var wg sync.WaitGroup
	var busy atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			if _, err := ix.Query(context.Background(), fmt.Sprintf("query %d", i)); err != nil {
				busy.Add(1)
				if !strings.Contains(err.Error(), "busy") {
					t.Errorf("query %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	if n := stub.MostAsking(); n > maxAsking {
		t.Errorf("%d queries were asked for at once, want at most %d", n, maxAsking)
	}
	if n := int(busy.Load()) + stub.Requests(); n != 20 {
		t.Errorf("%d queries asked for and busy, want 20", n)
	}
}
