package meaning

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// QueryTimeout bounds the wait for a query's vector: past it, the search
// answers by words.
const QueryTimeout = 2 * time.Second

// Options tune an Index.
type Options struct {
	// Logf reports outages of the endpoint, once each, and trouble with
	// the vectors file.
	Logf func(format string, args ...any)
	// BatchSize is how many texts one request embeds; 0 is 64.
	BatchSize int
	// Retry is how long after a failed batch the next try comes, unless
	// a write comes first; 0 is 10 s.
	Retry time.Duration
	// Settle is how long Run waits after a change for the next ones
	// before it looks, so that a burst of writes costs one look; 0 is
	// 250 ms.
	Settle time.Duration
	// Shared is what the indexes of one server share (NewShared); nil is
	// this index's own.
	Shared *Shared
}

// Index holds the vectors of one memory's texts, keeps them in its
// Storage, and fills in the missing ones in the background (Run).
type Index struct {
	client *Client
	store  Storage
	opts   Options
	wake   chan struct{}
	opened chan struct{} // closed when the first pass has looked, or Run ends
	once   sync.Once     // closes opened
	shared *Shared

	mu       sync.RWMutex
	vectors  map[key]vector
	entities map[string][]key // each entity's texts' keys, at the last pass
	ready    bool             // a pass found every text with its vector
	want     int              // texts at the last pass
	have     int              // of which with a vector

	// Only Run's goroutine touches the storage.
	records int // vectors kept, live or not, as far as this Index knows

	// progress, set during Backfill, hears how far a pass has come.
	progress func(have, want int) error
}

// Open loads the vectors file at path (VectorsPath) for the texts'
// vectors by c's model. A file that is not a vectors file is an error; a
// missing one is empty, and created at the first vector.
func Open(path string, c *Client, opts Options) (*Index, error) {
	ix := OpenStorage(FileStorage(path), c, opts)
	if err := ix.refresh(context.Background(), c.Model()); err != nil {
		return nil, err
	}
	return ix, nil
}

// OpenStorage returns the Index of the vectors kept in st by c's model.
// It reads nothing yet: Run's first pass loads them.
func OpenStorage(st Storage, c *Client, opts Options) *Index {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	if opts.Retry <= 0 {
		opts.Retry = 10 * time.Second
	}
	if opts.Settle <= 0 {
		opts.Settle = 250 * time.Millisecond
	}
	if opts.Shared == nil {
		opts.Shared = NewShared()
	}
	ix := &Index{client: c, store: st, opts: opts, shared: opts.Shared, wake: make(chan struct{}, 1), opened: make(chan struct{}), vectors: make(map[key]vector)}
	ix.wake <- struct{}{}
	return ix
}

// refresh adds the vectors the storage holds that this Index has not
// seen: at first all, then those another server (a replica) added.
func (ix *Index) refresh(ctx context.Context, model string) error {
	recs, err := ix.store.Load(ctx, model)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	ix.mu.Lock()
	for _, r := range recs {
		ix.vectors[r.Key] = r.vector()
	}
	ix.mu.Unlock()
	ix.records += len(recs)
	return nil
}

// Release drops the vectors, for an Index whose memory is closed (Run has
// returned): search no longer uses them.
func (ix *Index) Release() {
	ix.mu.Lock()
	ix.vectors, ix.entities = make(map[key]vector), nil
	ix.ready, ix.want, ix.have = false, 0, 0
	ix.mu.Unlock()
}

// Changed tells Run that the memory changed: it looks for texts without
// vectors soon after. It never waits.
func (ix *Index) Changed() {
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

// Opened waits until Run's first pass has read the kept vectors and the
// memory (not for it to embed what lacks a vector), or until it failed,
// or ctx ended: then Status says whether all the memory's texts have one. A search that comes as its memory opens waits for it, so that
// it need not answer by words only because it came first.
func (ix *Index) Opened(ctx context.Context) {
	select {
	case <-ix.opened:
	case <-ctx.Done():
	}
}

func (ix *Index) markOpened() { ix.once.Do(func() { close(ix.opened) }) }

// Status reports whether search uses the vectors (a pass has found every
// text with its vector of the current model), and how many of the texts
// of the memory, at the last look, have one.
func (ix *Index) Status() (ready bool, have, want int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ready, ix.have, ix.want
}

// Run embeds the texts without vectors, in batches, whenever the memory
// changed (Changed), until ctx ends. A failed batch is tried again after
// Options.Retry, or at the next change.
func (ix *Index) Run(ctx context.Context, store graph.Store) {
	defer ix.markOpened()
	for first := true; ; first = false {
		var retry <-chan time.Time
		select {
		case <-ctx.Done():
			return
		case <-ix.wake:
		}
		if !first { // the first look is at opening: no write to wait for
			settle := time.NewTimer(ix.opts.Settle)
			select {
			case <-ctx.Done():
				settle.Stop()
				return
			case <-settle.C:
			}
			select { // the changes that came while settling are in this look
			case <-ix.wake:
			default:
			}
		}
		err := ix.pass(ctx, store)
		ix.markOpened()
		if err != nil && ctx.Err() == nil {
			if se, ok := err.(*storeError); ok {
				ix.opts.Logf("search by meaning: %s: %v", se.doing, se.err)
			} else {
				ix.failed(err)
			}
			retry = time.After(ix.opts.Retry)
			select {
			case <-ctx.Done():
				return
			case <-retry:
				ix.Changed()
			case <-ix.wake:
				ix.Changed()
			}
		}
	}
}

// Backfill embeds the texts of store's memory that have no vector yet,
// batch after batch, as Run does after a change, and returns when every
// text has one, or with the first failed batch's error. progress is
// called before the first batch and after each with how many of the
// texts have a vector; an error from it stops Backfill there, every
// batch done kept in the vectors file, and is returned. ctx bounds each
// request: to stop between batches, let progress fail instead. Not for
// an Index whose Run runs.
func (ix *Index) Backfill(ctx context.Context, store graph.Store, progress func(have, want int) error) error {
	ix.progress = progress
	defer func() { ix.progress = nil }()
	return ix.pass(ctx, store)
}

// report tells Backfill's progress how far the pass has come.
func (ix *Index) report() error {
	if ix.progress == nil {
		return nil
	}
	_, have, want := ix.Status()
	return ix.progress(have, want)
}

// texts are what an entity's vectors stand for: one per observation, each
// prefixed with the entity's name and type so that a short observation
// ("loves it") keeps who and what it is about; one for an entity with none.
func texts(e *graph.Entity) []string {
	head := e.Name + " (" + e.EntityType + ")"
	if len(e.Observations) == 0 {
		return []string{head}
	}
	out := make([]string, len(e.Observations))
	for i, o := range e.Observations {
		out[i] = head + ": " + o
	}
	return out
}

// storeError is a pass that could not read the memory or its kept
// vectors: the endpoint is not to blame.
type storeError struct {
	doing string
	err   error
}

func (e *storeError) Error() string { return e.err.Error() }

type job struct {
	k    key
	text string
}

// pass finds the texts without vectors and embeds them.
func (ix *Index) pass(ctx context.Context, store graph.Store) error {
	model := ix.client.Model()
	if err := ix.refresh(ctx, model); err != nil {
		return &storeError{"reading the kept vectors", err}
	}
	entities, all, err := scan(store, model)
	if err != nil {
		return &storeError{"reading the memory", err}
	}
	var missing []job
	ix.mu.RLock()
	for _, j := range all {
		if _, ok := ix.vectors[j.k]; !ok {
			missing = append(missing, j)
		}
	}
	ix.mu.RUnlock()
	ix.mu.Lock()
	ix.entities, ix.want, ix.have = entities, len(all), len(all)-len(missing)
	ix.mu.Unlock()
	ix.markOpened() // Status is known: a search waits no longer
	if err := ix.report(); err != nil {
		return err
	}
	for len(missing) > 0 {
		// Each batch is embedded alone among the servers sharing the
		// storage, after loading what they added: a text another replica
		// embedded meanwhile is not asked for again.
		var batchErr error
		err := ix.store.Exclusive(ctx, func() error {
			if err := ix.refresh(ctx, model); err != nil {
				batchErr = &storeError{"reading the kept vectors", err}
				return batchErr
			}
			missing = ix.stillMissing(missing)
			n := min(len(missing), ix.opts.BatchSize)
			if n == 0 {
				return nil
			}
			if batchErr = ix.embed(ctx, model, missing[:n]); batchErr != nil {
				return batchErr
			}
			missing = missing[n:]
			return nil
		})
		switch {
		case batchErr != nil:
			return batchErr
		case err != nil:
			return &storeError{"taking the turn to embed", err}
		}
		if err := ix.report(); err != nil {
			return err
		}
	}
	ix.mu.Lock()
	ix.ready = true
	ix.mu.Unlock()
	if ix.records > 2*len(all)+1024 {
		if err := ix.store.Exclusive(ctx, func() error { return ix.compact(ctx, store, model) }); err != nil {
			ix.opts.Logf("search by meaning: compacting the vectors: %v", err)
		}
	}
	return nil
}

// scan reads the memory's texts: each entity's texts' keys, and every
// text once.
func scan(store graph.Store, model string) (map[string][]key, []job, error) {
	// Only the texts are taken while the graph is held (a write waits for
	// a reader); hashing them is done after.
	type entityTexts struct {
		name  string
		texts []string
	}
	var ets []entityTexts
	err := store.View(func(g *graph.Graph) {
		ets = make([]entityTexts, 0, len(g.Entities()))
		for _, e := range g.Entities() {
			ets = append(ets, entityTexts{e.Name, texts(e)})
		}
	})
	if err != nil {
		return nil, nil, err
	}
	entities := make(map[string][]key, len(ets))
	var all []job
	seen := make(map[key]bool)
	for _, et := range ets {
		ks := make([]key, len(et.texts))
		for i, t := range et.texts {
			k := keyOf(model, t)
			ks[i] = k
			if !seen[k] {
				seen[k] = true
				all = append(all, job{k, t})
			}
		}
		entities[et.name] = ks
	}
	return entities, all, nil
}

// stillMissing returns the jobs of missing whose vectors are still
// missing, and counts the others as had.
func (ix *Index) stillMissing(missing []job) []job {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := missing[:0]
	for _, j := range missing {
		if _, ok := ix.vectors[j.k]; ok {
			ix.have++
		} else {
			out = append(out, j)
		}
	}
	return out
}

// compact drops the kept vectors no text of the memory has. The memory
// is read after the storage is (refresh): a text whose vector another
// replica kept was written before it, so it is among the live ones.
func (ix *Index) compact(ctx context.Context, store graph.Store, model string) error {
	if err := ix.refresh(ctx, model); err != nil {
		return err
	}
	entities, all, err := scan(store, model)
	if err != nil {
		return err
	}
	keep := make([]Record, 0, len(all))
	live := make(map[key]vector, len(all))
	ix.mu.RLock()
	for _, j := range all {
		if v, ok := ix.vectors[j.k]; ok {
			keep = append(keep, record(j.k, v))
			live[j.k] = v
		}
	}
	ix.mu.RUnlock()
	if err := ix.store.Compact(ctx, model, keep); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.vectors, ix.entities = live, entities
	ix.mu.Unlock()
	ix.records = len(keep)
	return nil
}

// embed asks for one batch and keeps its vectors.
func (ix *Index) embed(ctx context.Context, model string, batch []job) error {
	in := make([]string, len(batch))
	for i, j := range batch {
		in[i] = j.text
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	vs, err := ix.client.Embed(ctx, in)
	if err != nil {
		return err
	}
	ix.answered()
	recs := make([]Record, len(vs))
	ix.mu.Lock()
	for i, v := range vs {
		q := quantise(v)
		ix.vectors[batch[i].k] = q
		recs[i] = record(batch[i].k, q)
	}
	ix.have += len(batch)
	ix.mu.Unlock()
	if err := ix.store.Append(ctx, model, recs); err != nil {
		// The vectors are in memory; only a restart will ask for them again.
		ix.opts.Logf("search by meaning: keeping vectors: %v", err)
		return nil
	}
	ix.records += len(batch)
	return nil
}

// failed logs an outage of the endpoint once, at its start.
func (ix *Index) failed(err error) {
	if !ix.shared.down.Swap(true) {
		ix.opts.Logf("search by meaning: %v; searching by words only until the endpoint answers again", err)
	}
}

// answered logs the end of an outage.
func (ix *Index) answered() {
	if ix.shared.down.Swap(false) {
		ix.opts.Logf("search by meaning: the embeddings endpoint answers again")
	}
}

// A Query is a search's text as a vector.
type Query struct{ v vector }

// Query returns the vector of a search's text, from the cache of recent
// queries or from the endpoint within QueryTimeout. Its error says why
// there is none.
func (ix *Index) Query(ctx context.Context, text string) (Query, error) {
	now := time.Now()
	model := ix.client.Model()
	if v, ok := ix.shared.query(model, text, now); ok {
		return Query{v}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	vs, err := ix.client.Embed(ctx, []string{text})
	if err != nil {
		ix.failed(err)
		return Query{}, err
	}
	ix.answered()
	v := quantise(vs[0])
	ix.shared.keepQuery(model, text, v, now)
	return Query{v}, nil
}

// Hit is one entity of a search by words and meaning.
type Hit struct {
	Entity *graph.Entity
	// Word is the word ranking's hit, nil for an entity found by meaning
	// alone.
	Word *graph.Hit
	// Closest are the indexes of the entity's observations, most similar
	// to the query first, for an entity found by meaning alone.
	Closest []int
}

// Result is a search by words and meaning. Like graph.Ranked it points
// into the graph.
type Result struct {
	Hits      []Hit
	Exact     int // leading hits that match the whole query (graph.Ranked)
	Relations []*graph.Relation
}

// fuseDepth is how many of each ranking's best are fused, and rrfK the
// constant of reciprocal rank fusion (the usual 60: a hit's place counts,
// its raw score does not, so BM25 and cosine need no common scale).
const (
	fuseDepth = 50
	rrfK      = 60
)

// Search ranks g's entities for query by words and by the similarity of
// their texts' vectors to q: the entities matching the whole query come
// first, as graph.SearchRanked gives them; the rest, up to limit, are the
// best by reciprocal rank fusion of the word ranking and the similarity
// ranking (an entity's similarity is that of its closest text).
func (ix *Index) Search(g *graph.Graph, query string, q Query, limit int) Result {
	if limit <= 0 {
		limit = graph.DefaultSearchLimit
	}
	words := g.SearchRanked(query, max(limit, fuseDepth))
	exact := words.Exact
	res := Result{Exact: exact}
	for i := range words.Hits[:exact] {
		res.Hits = append(res.Hits, Hit{Entity: words.Hits[i].Entity, Word: &words.Hits[i]})
	}
	if want := limit - exact; want > 0 {
		res.Hits = append(res.Hits, ix.fuse(g, words, q, want)...)
	}
	ents := make([]*graph.Entity, len(res.Hits))
	for i, h := range res.Hits {
		ents[i] = h.Entity
	}
	res.Relations = g.Touching(ents)
	return res
}

// fuse returns the want best of the word ranking's partial matches and
// the entities closest in meaning, by reciprocal rank fusion.
func (ix *Index) fuse(g *graph.Graph, words graph.Ranked, q Query, want int) []Hit {
	type fused struct {
		hit   Hit
		score float64
		order int
	}
	byEntity := make(map[*graph.Entity]*fused)
	var all []*fused
	for i := words.Exact; i < len(words.Hits); i++ {
		f := &fused{hit: Hit{Entity: words.Hits[i].Entity, Word: &words.Hits[i]}, score: 1.0 / float64(rrfK+i-words.Exact+1), order: len(all)}
		byEntity[f.hit.Entity] = f
		all = append(all, f)
	}
	isExact := make(map[*graph.Entity]bool, words.Exact)
	for _, h := range words.Hits[:words.Exact] {
		isExact[h.Entity] = true
	}
	for rank, n := range ix.nearest(g, q, isExact) {
		f := byEntity[n.e]
		if f == nil {
			f = &fused{hit: Hit{Entity: n.e}, order: len(all)}
			byEntity[n.e] = f
			all = append(all, f)
		}
		f.score += 1.0 / float64(rrfK+rank+1)
	}
	slices.SortStableFunc(all, func(a, b *fused) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.order - b.order
	})
	all = all[:min(want, len(all))]
	out := make([]Hit, len(all))
	for i, f := range all {
		out[i] = f.hit
		if f.hit.Word == nil {
			out[i].Closest = ix.closest(f.hit.Entity, q)
		}
	}
	return out
}

type near struct {
	e   *graph.Entity
	sim float32
}

// nearest returns the fuseDepth entities of g closest to q, skipping
// those in skip, best first (ties in graph order).
func (ix *Index) nearest(g *graph.Graph, q Query, skip map[*graph.Entity]bool) []near {
	ix.mu.RLock()
	var ns []near
	for name, ks := range ix.entities {
		e := g.Entity(name)
		if e == nil || skip[e] {
			continue
		}
		best, found := float32(0), false
		for _, k := range ks {
			if v, ok := ix.vectors[k]; ok {
				s := cosine(q.v, v)
				if !found || s > best {
					best, found = s, true
				}
			}
		}
		if found {
			ns = append(ns, near{e, best})
		}
	}
	ix.mu.RUnlock()
	slices.SortFunc(ns, func(a, b near) int {
		if a.sim != b.sim {
			if a.sim > b.sim {
				return -1
			}
			return 1
		}
		return graph.CompareOrder(a.e, b.e)
	})
	return ns[:min(len(ns), fuseDepth)]
}

// closest returns the indexes of e's observations by similarity to q,
// most similar first; those without a vector yet come last.
func (ix *Index) closest(e *graph.Entity, q Query) []int {
	if len(e.Observations) == 0 {
		return nil
	}
	model := ix.client.Model()
	ts := texts(e)
	sims := make([]float32, len(ts))
	ix.mu.RLock()
	for i, t := range ts {
		sims[i] = -2
		if v, ok := ix.vectors[keyOf(model, t)]; ok {
			sims[i] = cosine(q.v, v)
		}
	}
	ix.mu.RUnlock()
	out := make([]int, len(ts))
	for i := range out {
		out[i] = i
	}
	slices.SortStableFunc(out, func(a, b int) int {
		switch {
		case sims[a] > sims[b]:
			return -1
		case sims[a] < sims[b]:
			return 1
		}
		return 0
	})
	return out
}

// Count reports how many of the texts of the graph view gives have a
// vector by model in st, for a command that shows it without running an
// Index. view is called once, after st is read.
func Count(st Storage, model string, view func(func(*graph.Graph)) error) (have, want int, err error) {
	recs, err := st.Load(context.Background(), model)
	if err != nil {
		return 0, 0, err
	}
	vs := make(map[key]bool, len(recs))
	for _, r := range recs {
		vs[r.Key] = true
	}
	err = view(func(g *graph.Graph) {
		seen := make(map[key]bool)
		for _, e := range g.Entities() {
			for _, t := range texts(e) {
				k := keyOf(model, t)
				if seen[k] {
					continue
				}
				seen[k] = true
				want++
				if _, ok := vs[k]; ok {
					have++
				}
			}
		}
	})
	return have, want, err
}
