package meaning

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// memStore is a graph.Store in memory.
type memStore struct {
	mu sync.RWMutex
	g  *graph.Graph
}

func newStore(t *testing.T, ents ...graph.Entity) *memStore {
	t.Helper()
	s := &memStore{g: graph.New()}
	s.g.CreateEntities(ents)
	return s
}

func (s *memStore) View(_ context.Context, fn func(*graph.Graph) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fn(s.g)
}
func (s *memStore) Update(_ context.Context, w graph.Write) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return true, w.Apply(s.g)
}
func (s *memStore) Watch(context.Context, time.Duration, func()) {}

var people = []graph.Entity{
	{Name: "Alice", EntityType: "person", Observations: []string{"lives in Lisbon", "spends weekends on photography"}},
	{Name: "Bob", EntityType: "person", Observations: []string{"works as a physician"}},
	{Name: "Carnival", EntityType: "event", Observations: []string{"held every year in Rio"}},
	{Name: "Hobby shop", EntityType: "place"},
}

func open(t *testing.T, path string, stub *meaningtest.Server, model string) *Index {
	t.Helper()
	ix, err := Open(path, NewClient(stub.BaseURL(), model, stub.Key), Options{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func names(r Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Entity.Name)
	}
	return out
}

// TestClientSpeaksTheWireFormat: vectors come back in the order of the
// texts whatever order the answer lists them in, and batches are cut to
// BatchSize.
func TestClientSpeaksTheWireFormat(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	stub.MaxBatch = 2
	c := NewClient(stub.BaseURL()+"/", "m", "")
	texts := []string{"one photography", "two rio", "three"}
	if _, err := c.Embed(context.Background(), texts); err == nil || !strings.Contains(err.Error(), "between 1 and 2") {
		t.Fatalf("a batch over the endpoint's limit: %v, want its error message", err)
	}
	vs, err := c.Embed(context.Background(), texts[:2])
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		want := meaningtest.Vector("m", texts[i])
		for j := range v {
			if v[j] != want[j] {
				t.Fatalf("vector %d is not the one of %q", i, texts[i])
			}
		}
	}
}

// TestClientErrors: an endpoint's error message is passed on, without the
// API key even when the endpoint quotes it; a bad answer, an unknown
// model and a slow answer are errors.
func TestClientErrors(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	stub.Key = "sk-right"
	ctx := context.Background()
	const wrong = "sk-wrong-secret"
	_, err := NewClient(stub.BaseURL(), "m", wrong).Embed(ctx, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "Incorrect API key") || strings.Contains(err.Error(), wrong) {
		t.Errorf("wrong key: %v; want the endpoint's message without the key", err)
	}
	c := NewClient(stub.BaseURL(), "m", "sk-right")
	if _, err := NewClient(stub.BaseURL(), "other", "sk-right").Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown model: %v", err)
	}
	stub.SetBad(true)
	if _, err := c.Embed(ctx, []string{"x", "y"}); err == nil || !strings.Contains(err.Error(), "answered badly") {
		t.Errorf("one vector short: %v", err)
	}
	stub.SetBad(false)
	stub.SetDown(true)
	if _, err := c.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("down: %v", err)
	}
	stub.SetDown(false)
	stub.SetDelay(5 * time.Second)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Embed(short, []string{"x"}); err == nil || !strings.Contains(err.Error(), "in time") {
		t.Errorf("slow: %v", err)
	}
}

// TestSearchFindsByMeaning: a query sharing no word with its answer finds
// it by meaning, which word ranking alone does not; an entity holding the
// whole query still comes first; the closest observation is shown first.
func TestSearchFindsByMeaning(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	ix := open(t, filepath.Join(t.TempDir(), "memory.jsonl.vectors"), stub, "m")
	if ready, _, _ := ix.Status(); ready {
		t.Fatal("ready before any pass")
	}
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if ready, have, want := ix.Status(); !ready || have != 5 || want != 5 {
		t.Fatalf("Status %t %d/%d, want ready 5/5", ready, have, want)
	}
	q, err := ix.Query(context.Background(), "hobby")
	if err != nil {
		t.Fatal(err)
	}
	store.View(context.Background(), func(g *graph.Graph) error {
		words := g.SearchRanked("hobby", 2)
		if len(words.Hits) != 1 || words.Hits[0].Entity.Name != "Hobby shop" {
			t.Fatalf("word ranking alone: %v", words.Selection().Entities)
		}
		r := ix.Search(g, "hobby", q, 2)
		if got := names(r); len(got) != 2 || got[0] != "Hobby shop" || got[1] != "Alice" || r.Exact != 1 {
			t.Fatalf("Search: %v (exact %d), want Hobby shop (exact) then Alice", got, r.Exact)
		}
		if h := r.Hits[1]; h.Word != nil || len(h.Closest) != 2 || h.Closest[0] != 1 {
			t.Errorf("Alice's closest observations %v, want the photography one (1) first", h.Closest)
		}
		return nil
	})
	// Alice's keys are those the look kept, until she changes: then her
	// texts are hashed again, the new one, without a vector yet, last.
	for _, change := range []bool{false, true} {
		if change {
			store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
				g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "Alice", Observations: []string{"lives in Lisbon"}}})
				_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Alice", Contents: []string{"owns a bakery"}}})
				return err
			}})
		}
		before := ix.hashed.Load()
		store.View(context.Background(), func(g *graph.Graph) error {
			r := ix.Search(g, "hobby", q, 2)
			want := []int{1, 0} // photography, Lisbon
			if change {
				want = []int{0, 1} // photography, the bakery without a vector
			}
			if h := r.Hits[1]; h.Entity.Name != "Alice" || !slices.Equal(h.Closest, want) {
				t.Errorf("changed %t: Alice's closest observations %v, want %v", change, h.Closest, want)
			}
			return nil
		})
		want := int64(0)
		if change {
			want = 2
		}
		if got := ix.hashed.Load() - before; got != want {
			t.Errorf("changed %t: the search hashed %d texts, want %d", change, got, want)
		}
	}
}

// TestVectorsSurviveARestart: a second index on the same file asks for
// nothing; a new model asks for everything again and is not ready until
// it has it.
func TestVectorsSurviveARestart(t *testing.T) {
	stub := meaningtest.New("m", "m2")
	defer stub.Close()
	store := newStore(t, people...)
	path := filepath.Join(t.TempDir(), "memory.jsonl.vectors")
	if err := open(t, path, stub, "m").pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	before := stub.Requests()
	again := open(t, path, stub, "m")
	if err := again.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if n := stub.Requests() - before; n != 0 {
		t.Errorf("a restart made %d requests, want 0", n)
	}
	if ready, have, _ := again.Status(); !ready || have != 5 {
		t.Errorf("after a restart: ready %t, %d vectors", ready, have)
	}
	other := open(t, path, stub, "m2")
	if ready, _, _ := other.Status(); ready {
		t.Error("a new model is ready before its vectors are")
	}
	if err := other.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if n := len(stub.Texts("m2")); n != 5 {
		t.Errorf("a new model embedded %d texts, want 5", n)
	}
}

// TestWritesEmbedOnlyWhatChanged: adding an observation embeds that one
// text, and a failed pass leaves search unready without losing anything.
func TestWritesEmbedOnlyWhatChanged(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	ix := open(t, filepath.Join(t.TempDir(), "v"), stub, "m")
	stub.SetDown(true)
	if err := ix.pass(context.Background(), store); err == nil {
		t.Fatal("a pass with the endpoint down did not fail")
	}
	if ready, _, _ := ix.Status(); ready {
		t.Fatal("ready with the endpoint down")
	}
	stub.SetDown(false)
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	n := len(stub.Texts("m"))
	store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"plays chess"}}})
		return err
	}})
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if got := stub.Texts("m")[n:]; len(got) != 1 || got[0] != "Bob (person): plays chess" {
		t.Errorf("after one new observation the index embedded %q", got)
	}
}

// TestTruncatedFile: a record cut short by a crash is dropped, and the
// next append writes over it.
func TestTruncatedFile(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	path := filepath.Join(t.TempDir(), "v")
	store := newStore(t, people[:2]...)
	if err := open(t, path, stub, "m").pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-7], 0o600)
	ix := open(t, path, stub, "m")
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	vs := make(map[key]vector)
	if _, err := load(path, vs); err != nil || len(vs) != 3 {
		t.Errorf("after repair the file holds %d vectors (%v), want 3", len(vs), err)
	}
	os.WriteFile(path, []byte("not vectors"), 0o600)
	if _, err := Open(path, NewClient(stub.BaseURL(), "m", ""), Options{}); err == nil {
		t.Error("a file that is not a vectors file opened")
	}
}

// TestQuantisationKeepsTheOrder: int8 cosine stays within 0.02 of the
// float one for random 768-dimension vectors.
func TestQuantisationKeepsTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, 768)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	for range 200 {
		a, b := vec(), vec()
		for i := range b {
			b[i] += a[i] * float32(r.Float64()*2)
		}
		var dot, na, nb float64
		for i := range a {
			dot += float64(a[i] * b[i])
			na += float64(a[i] * a[i])
			nb += float64(b[i] * b[i])
		}
		exact := dot / math.Sqrt(na*nb)
		if got := float64(cosine(quantise(a), quantise(b))); math.Abs(got-exact) > 0.02 {
			t.Fatalf("int8 cosine %v, float %v", got, exact)
		}
	}
}

// eventually waits for cond, failing after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestRunRetriesAtTheNextChange: Run tries at start, and after a failure
// tries again at the next change (the retry timer is an hour away); it
// returns when its context ends.
func TestRunRetriesAtTheNextChange(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	var logged []string
	var mu sync.Mutex
	ix, err := Open(filepath.Join(t.TempDir(), "v"), NewClient(stub.BaseURL(), "m", ""), Options{Settle: time.Millisecond, Retry: time.Hour, Logf: func(f string, args ...any) {
		mu.Lock()
		logged = append(logged, f)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	stub.SetDown(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ix.Run(ctx, store); close(done) }()
	eventually(t, "a first try", func() bool { return stub.Requests() > 0 })
	stub.SetDown(false)
	ix.Changed()
	eventually(t, "ready after the change", func() bool { ready, _, _ := ix.Status(); return ready })
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 || !strings.Contains(logged[0], "until the endpoint answers again") || !strings.Contains(logged[1], "answers again") {
		t.Errorf("logged %q, want the outage and its end once each", logged)
	}
}

// TestFileStorageFollowsAnotherServer: a vectors file's storage loads
// what another server appended since, and the whole file again after the
// other compacted it, so appending after that keeps the file readable.
func TestFileStorageFollowsAnotherServer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v")
	rec := func(i byte) Record { return Record{Key: Key{i}, Scale: 0.5, Values: []int8{int8(i), 1, -1}} }
	keys := func(rs []Record) []byte {
		var out []byte
		for _, r := range rs {
			out = append(out, r.Key[0])
		}
		return out
	}
	a, b := FileStorage(path), FileStorage(path)
	for _, st := range []Storage{a, b} {
		if got, err := st.Load(ctx, "m"); err != nil || len(got) != 0 {
			t.Fatalf("a missing file loads %v (%v)", got, err)
		}
	}
	if err := a.Append(ctx, "m", []Record{rec(1), rec(2)}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx, "m"); err != nil || string(keys(got)) != "\x01\x02" {
		t.Fatalf("b loaded %v (%v), want what a appended", keys(got), err)
	}
	if got, err := a.Load(ctx, "m"); err != nil || len(got) != 0 {
		t.Fatalf("a loaded its own records again: %v (%v)", keys(got), err)
	}
	if err := a.Compact(ctx, "m", []Record{rec(2)}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Load(ctx, "m"); err != nil || string(keys(got)) != "\x02" {
		t.Fatalf("after a's compaction b loaded %v (%v), want the file again", keys(got), err)
	}
	if err := b.Append(ctx, "m", []Record{rec(3)}); err != nil {
		t.Fatal(err)
	}
	vs := make(map[key]vector)
	if _, err := load(path, vs); err != nil || len(vs) != 2 || vs[rec(3).Key].q[0] != 3 {
		t.Errorf("the file holds %v (%v), want vectors 2 and 3", vs, err)
	}
}

// TestReleaseDropsTheVectors: a released index (its memory closed) holds
// no vector and searches by words until a pass runs again.
func TestReleaseDropsTheVectors(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	ix := open(t, filepath.Join(t.TempDir(), "v"), stub, "m")
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	ix.Release()
	if ready, have, want := ix.Status(); ready || have != 0 || want != 0 || len(ix.vectors) != 0 {
		t.Errorf("after Release: ready %t, %d of %d, %d vectors held", ready, have, want, len(ix.vectors))
	}
}

// TestOpened: Opened returns once Run's first look is done, with the
// kept vectors read, without waiting for what lacks a vector to be
// embedded; and also when Run ended before any look.
func TestOpened(t *testing.T) {
	stub := meaningtest.New("m", "m2")
	defer stub.Close()
	store := newStore(t, people...)
	path := filepath.Join(t.TempDir(), "v")
	if err := open(t, path, stub, "m").pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	ix := OpenStorage(FileStorage(path), NewClient(stub.BaseURL(), "m", ""), Options{Settle: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ix.Run(ctx, store)
	ix.Opened(context.Background()) // the first look does not wait to settle
	if ready, have, want := ix.Status(); !ready || have != 5 || want != 5 {
		t.Errorf("after Opened: ready %t, %d of %d", ready, have, want)
	}
	stub.SetDelay(time.Hour)
	slow := OpenStorage(FileStorage(path), NewClient(stub.BaseURL(), "m2", ""), Options{})
	go slow.Run(ctx, store)
	slow.Opened(context.Background())
	if ready, have, want := slow.Status(); ready || have != 0 || want != 5 {
		t.Errorf("a new model after Opened: ready %t, %d of %d", ready, have, want)
	}
	gone, stop := context.WithCancel(context.Background())
	stop()
	never := OpenStorage(FileStorage(path), NewClient(stub.BaseURL(), "m", ""), Options{})
	never.Run(gone, store)
	never.Opened(context.Background())
}

// TestSharedOutageAndQueries: indexes sharing a Shared log an outage
// once whichever meets it, and ask once for a query either asked.
func TestSharedOutageAndQueries(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	var mu sync.Mutex
	var logged []string
	shared := NewShared()
	opts := Options{Shared: shared, Logf: func(f string, args ...any) { mu.Lock(); logged = append(logged, f); mu.Unlock() }}
	dir := t.TempDir()
	a := OpenStorage(FileStorage(filepath.Join(dir, "a")), NewClient(stub.BaseURL(), "m", ""), opts)
	b := OpenStorage(FileStorage(filepath.Join(dir, "b")), NewClient(stub.BaseURL(), "m", ""), opts)
	stub.SetDown(true)
	for _, ix := range []*Index{a, b, a} {
		if _, err := ix.Query(context.Background(), "hobby"); err == nil {
			t.Fatal("a query with the endpoint down did not fail")
		}
	}
	stub.SetDown(false)
	for _, ix := range []*Index{a, b} {
		if _, err := ix.Query(context.Background(), "hobby"); err != nil {
			t.Fatal(err)
		}
	}
	if got := stub.Texts("m"); len(got) != 1 {
		t.Errorf("sent %q, want the query once", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 2 {
		t.Errorf("logged %q, want the outage and its end once each", logged)
	}
}

// TestPassLooksAtWhatChanged: a pass after a write hashes the texts of
// the entities the write changed only, not the whole memory, and still
// knows every entity's texts as a pass from scratch would: after adding,
// deleting, renaming and removing, and after the memory is read again
// from storage (another graph), which is looked at whole.
func TestPassLooksAtWhatChanged(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	var many []graph.Entity
	for i := range 100 {
		many = append(many, graph.Entity{Name: fmt.Sprintf("e%d", i), EntityType: "t", Observations: []string{"one", "two"}})
	}
	store := newStore(t, append(many, people...)...)
	ix := open(t, filepath.Join(t.TempDir(), "v"), stub, "m")
	ctx := context.Background()
	step := func(what string, wantHashed int64, write func(g *graph.Graph) error) {
		t.Helper()
		if write != nil {
			if _, err := store.Update(ctx, graph.Write{Apply: write}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		before := ix.hashed.Load()
		if err := ix.pass(ctx, store); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := ix.hashed.Load() - before; got != wantHashed {
			t.Errorf("%s: the pass hashed %d texts, want %d", what, got, wantHashed)
		}
		fresh := open(t, filepath.Join(t.TempDir(), "v"), stub, "m")
		fresh.client = ix.client
		fresh.vectors = ix.vectors
		fresh.look(store, "m")
		if !maps.EqualFunc(ix.entities, fresh.entities, slices.Equal) {
			t.Errorf("%s: the entities' keys differ from a look at the whole memory", what)
		}
		if ready, have, want := ix.Status(); !ready || have != want || want != fresh.want {
			t.Errorf("%s: Status %t %d/%d, want ready with %d texts", what, ready, have, want, fresh.want)
		}
	}
	step("the first pass", 205, nil)
	step("nothing changed", 0, nil)
	step("add_observations", 3, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "e7", Contents: []string{"three"}}})
		return err
	})
	step("create_entities", 1, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "new", EntityType: "t", Observations: []string{"fresh"}}})
		return nil
	})
	step("delete_entities", 0, func(g *graph.Graph) error { g.DeleteEntities([]string{"e3", "Bob"}); return nil })
	step("rename", 2, func(g *graph.Graph) error { _, err := g.Rename("e4", "e4b"); return err })
	step("delete_observations", 1, func(g *graph.Graph) error {
		g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "e5", Observations: []string{"one"}}})
		return nil
	})
	store.mu.Lock()
	store.g = graph.New()
	store.g.CreateEntities(people)
	store.mu.Unlock()
	step("the memory read again", 5, nil)
}

// TestNearestKeepsTheBest: the entities closest to a query are those a
// sort of them all gives, ties in graph order, without the skipped ones
// and those gone from the graph since the last look.
func TestNearestKeepsTheBest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var distinct []vector // few, so that many similarities tie
	for range 6 {
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		distinct = append(distinct, quantise(v))
	}
	g := graph.New()
	ix := &Index{vectors: make(map[key]vector), entities: make(map[string][]key)}
	for i := range 300 {
		name := fmt.Sprintf("e%d", i)
		g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t"}})
		for j := range 1 + i%3 {
			k := keyOf("m", fmt.Sprintf("%s %d", name, j))
			ix.vectors[k] = distinct[r.IntN(len(distinct))]
			ix.entities[name] = append(ix.entities[name], k)
		}
	}
	g.DeleteEntities([]string{"e5", "e77"})
	skip := map[*graph.Entity]bool{g.Entity("e8"): true, g.Entity("e100"): true}
	q := Query{distinct[0]}
	var want []near
	for _, e := range g.Entities() {
		if skip[e] {
			continue
		}
		best := float32(-2)
		for _, k := range ix.entities[e.Name] {
			best = max(best, cosine(q.v, ix.vectors[k]))
		}
		want = append(want, near{e, best})
	}
	slices.SortStableFunc(want, func(a, b near) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return 0
	})
	want = want[:fuseDepth]
	got, _ := ix.nearest(g, q, skip)
	if !slices.Equal(got, want) {
		t.Errorf("nearest:\n got %v\nwant %v", got, want)
	}
}

// TestLackingStaysBounded: texts written and changed again many times
// before any is embedded (the endpoint down) leave the queue of texts to
// embed bounded by those still lacking, and only the live ones are
// embedded when the endpoint answers.
func TestLackingStaysBounded(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people...)
	ix := open(t, filepath.Join(t.TempDir(), "v"), stub, "m")
	ctx := context.Background()
	for i := range 3000 {
		store.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "Bob", Observations: []string{fmt.Sprint(i - 1)}}})
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{fmt.Sprint(i)}}})
			return err
		}})
		if err := ix.look(store, "m"); err != nil {
			t.Fatal(err)
		}
		if len(ix.queue) > 2*len(ix.lacking)+1024 {
			t.Fatalf("after %d writes the queue holds %d keys for %d texts lacking", i+1, len(ix.queue), len(ix.lacking))
		}
	}
	if err := ix.pass(ctx, store); err != nil {
		t.Fatal(err)
	}
	if ready, have, want := ix.Status(); !ready || have != 6 || want != 6 {
		t.Errorf("Status %t %d/%d, want ready 6/6", ready, have, want)
	}
	if n := len(stub.Texts("m")); n != 6 {
		t.Errorf("embedded %d texts, want the 6 live ones", n)
	}
}
