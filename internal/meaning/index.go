package meaning

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
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
	entities map[string][]key // each entity's texts' keys, at the last look
	ready    bool             // a pass found every text with its vector
	want     int              // the entities' texts at the last look
	lacks    int              // of which without a vector
	// lacking are the keys of the entities' texts without a vector, with
	// the text and how many of the entities' texts have that key: what the
	// next batches embed.
	lacking map[key]*lack
	dims    int    // the model's vectors' length, once known (checkDims)
	graph   uint64 // the ID of the graph of the last look (graph.Graph.ID)
	version uint64 // and its Version then: entities of a revision above it changed since

	// Only Run's goroutine touches these, and the storage; it alone
	// writes the fields above, under mu.
	records int    // vectors kept, live or not, as far as this Index knows
	queue   []key  // lacking's keys in the order the looks found them, and some no longer lacking
	hash    []byte // look's buffer for the hashed text
	// keepFailing is set while appends to the storage fail: logged once.
	keepFailing bool

	// hashed counts the texts hashed (by looks, and by searches for
	// entities changed since the last look), for the tests.
	hashed atomic.Int64

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
	ix := &Index{client: c, store: st, opts: opts, shared: opts.Shared, wake: make(chan struct{}, 1), opened: make(chan struct{}),
		vectors: make(map[key]vector), entities: make(map[string][]key), lacking: make(map[key]*lack)}
	ix.wake <- struct{}{}
	return ix
}

// refresh adds the vectors the storage holds that this Index has not
// seen: at first all, then those another server (a replica) added.
func (ix *Index) refresh(ctx context.Context, model string) error {
	recs, err := ix.store.Load(ctx, model)
	var dmg *Damaged
	if errors.As(err, &dmg) {
		ix.opts.Logf("search by meaning: the kept vectors are damaged: %v", dmg)
	} else if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	bad, why := 0, ""
	ix.mu.Lock()
	if len(ix.vectors) == 0 {
		ix.vectors = make(map[key]vector, len(recs)) // not grown insert by insert
	}
	for _, r := range recs {
		if err := r.vector().check(); err != nil {
			bad, why = bad+1, err.Error()
			continue
		}
		ix.vectors[r.Key] = r.vector()
		ix.found(r.Key)
	}
	ix.mu.Unlock()
	if bad > 0 {
		ix.opts.Logf("search by meaning: %d kept vectors are refused (%s): their texts are embedded again", bad, why)
	}
	ix.records += len(recs)
	return nil
}

// found notes that the text of key k has its vector now. ix.mu is held.
func (ix *Index) found(k key) {
	if l := ix.lacking[k]; l != nil {
		ix.lacks -= l.n
		delete(ix.lacking, k)
	}
}

// Release drops the vectors, for an Index whose memory is closed (Run has
// returned): search no longer uses them.
func (ix *Index) Release() {
	ix.mu.Lock()
	ix.vectors, ix.entities, ix.lacking = make(map[key]vector), make(map[string][]key), make(map[key]*lack)
	ix.ready, ix.want, ix.lacks = false, 0, 0
	ix.graph, ix.version, ix.dims = 0, 0, 0
	ix.mu.Unlock()
	ix.queue = nil
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
	return ix.ready, ix.want - ix.lacks, ix.want
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
		out[i] = head + textSep + o
	}
	return out
}

// textSep parts an entity's name and type from an observation in a text.
const textSep = ": "

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

// lack is a text of the memory without a vector (Index.lacking).
type lack struct {
	text string
	n    int // how many of the entities' texts it is
}

// pass looks at what changed in the memory and embeds the texts without
// vectors.
func (ix *Index) pass(ctx context.Context, store graph.Store) error {
	model := ix.client.Model()
	if err := ix.refresh(ctx, model); err != nil {
		return &storeError{"reading the kept vectors", err}
	}
	if err := ix.look(store, model); err != nil {
		return &storeError{"reading the memory", err}
	}
	if len(ix.lacking) == 0 {
		ix.mu.Lock()
		ix.ready = true
		ix.mu.Unlock()
	}
	ix.markOpened() // Status is known: a search waits no longer
	if err := ix.report(); err != nil {
		return err
	}
	for len(ix.lacking) > 0 {
		// Each batch is embedded alone among the servers sharing the
		// storage, after loading what they added: a text another replica
		// embedded meanwhile is not asked for again.
		var batchErr error
		err := ix.store.Exclusive(ctx, func() error {
			if err := ix.refresh(ctx, model); err != nil {
				batchErr = &storeError{"reading the kept vectors", err}
				return batchErr
			}
			if batch := ix.next(ix.opts.BatchSize); len(batch) > 0 {
				batchErr = ix.embed(ctx, model, batch)
			}
			return batchErr
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
	ix.queue = nil
	ix.mu.Lock()
	ix.ready = true
	ix.mu.Unlock()
	if ix.records > 2*ix.want+1024 {
		if err := ix.store.Exclusive(ctx, func() error { return ix.compact(ctx, store, model) }); err != nil {
			ix.opts.Logf("search by meaning: compacting the vectors: %v", err)
		}
	}
	return nil
}

// look brings ix.entities up to date with the memory: the entities
// created or changed since the last look (graph.Entity.Revision) get
// their texts' keys, and those gone lose theirs. Only their observations
// are copied while the graph is held (a write waits for a reader), and
// hashed after; the others cost a comparison. Another graph than the last
// look's (the memory read again from its storage) is looked at whole.
func (ix *Index) look(store graph.Store, model string) error {
	var (
		changed     []entityTexts
		gone        []string
		id, version uint64
	)
	err := store.View(func(g *graph.Graph) {
		id, version = g.ID(), g.Version()
		changed, gone = ix.changedSince(g)
	})
	if err != nil {
		return err
	}
	keyed := ix.keyTexts(model, changed)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.record(gone, keyed)
	ix.graph, ix.version = id, version
	ix.trimQueue()
	return nil
}

// entityTexts is what look copies of an entity while the graph is held.
type entityTexts struct {
	name, entityType string
	observations     []string
}

// entityKeys is an entity's texts' keys, one per observation (one for
// the name alone when it has none).
type entityKeys struct {
	name string
	keys []key
	lack []string // the texts, for the keys without a vector
}

// changedSince copies the entities of g changed since the last look (all
// of them when g is another graph than the last look's) and lists the
// names ix knows that g no longer has. It runs while g is held.
func (ix *Index) changedSince(g *graph.Graph) (changed []entityTexts, gone []string) {
	since := ix.version
	if g.ID() != ix.graph {
		since = 0
	} else if g.Version() == ix.version {
		return nil, nil
	}
	// ix.entities is written by this goroutine only: reading it here
	// needs no lock.
	ents, added := g.Entities(), 0
	for _, e := range ents {
		if e.Revision() <= since {
			continue
		}
		if _, ok := ix.entities[e.Name]; !ok {
			added++
		}
		changed = append(changed, entityTexts{e.Name, e.EntityType, slices.Clone(e.Observations)})
	}
	// Every entity the graph has is in ix.entities now: more there
	// means some are gone.
	if len(ix.entities)+added != len(ents) {
		for name := range ix.entities {
			if g.Entity(name) == nil {
				gone = append(gone, name)
			}
		}
	}
	return changed, gone
}

// keyTexts hashes the texts of the changed entities into their keys,
// noting the texts whose keys have no vector yet.
func (ix *Index) keyTexts(model string, changed []entityTexts) []entityKeys {
	keyed := make([]entityKeys, len(changed))
	ix.mu.RLock() // against Search only: this goroutine alone writes the vectors
	defer ix.mu.RUnlock()
	for i, et := range changed {
		head := et.name + " (" + et.entityType + ")"
		n := max(len(et.observations), 1)
		ek := entityKeys{name: et.name, keys: make([]key, n)}
		for j := range n {
			var o string
			if len(et.observations) > 0 {
				o = et.observations[j]
			}
			k := ix.textKey(model, head, o, len(et.observations) > 0)
			ek.keys[j] = k
			if _, ok := ix.vectors[k]; !ok {
				if ek.lack == nil {
					ek.lack = make([]string, n)
				}
				ek.lack[j] = head
				if len(et.observations) > 0 {
					ek.lack[j] = head + textSep + o
				}
			}
		}
		keyed[i] = ek
		ix.hashed.Add(int64(n))
	}
	return keyed
}

// record forgets the entities gone and takes the keys of those changed,
// queueing each key without a vector once. ix.mu is held.
func (ix *Index) record(gone []string, keyed []entityKeys) {
	for _, name := range gone {
		ix.forget(name)
	}
	for _, ek := range keyed {
		ix.forget(ek.name)
		ix.entities[ek.name] = ek.keys
		ix.want += len(ek.keys)
		for j, k := range ek.keys {
			if ek.lack == nil || ek.lack[j] == "" {
				continue
			}
			l := ix.lacking[k]
			if l == nil {
				l = &lack{text: ek.lack[j]}
				ix.lacking[k] = l
				ix.queue = append(ix.queue, k)
			}
			l.n++
			ix.lacks++
		}
	}
}

// trimQueue drops from the queue the keys no longer lacking and the
// repeats, once it has grown well past the keys lacking: texts changed
// again and again while the endpoint was down. ix.mu is held.
func (ix *Index) trimQueue() {
	if len(ix.queue) <= 2*len(ix.lacking)+1024 {
		return
	}
	queued := make(map[key]bool, len(ix.lacking))
	ix.queue = slices.DeleteFunc(ix.queue, func(k key) bool {
		drop := ix.lacking[k] == nil || queued[k]
		queued[k] = true
		return drop
	})
}

// textKey is keyOf(model, head+textSep+o) (head alone when !hasObs)
// without making the text.
func (ix *Index) textKey(model, head, o string, hasObs bool) key {
	b := append(ix.hash[:0], model...)
	b = append(b, 0)
	b = append(b, head...)
	if hasObs {
		b = append(b, textSep...)
		b = append(b, o...)
	}
	ix.hash = b
	return keyOfBytes(b)
}

// forget drops the keys of the entity named name. ix.mu is held.
func (ix *Index) forget(name string) {
	ks, ok := ix.entities[name]
	if !ok {
		return
	}
	delete(ix.entities, name)
	ix.want -= len(ks)
	for _, k := range ks {
		if l := ix.lacking[k]; l != nil {
			ix.lacks--
			if l.n--; l.n == 0 {
				delete(ix.lacking, k)
			}
		}
	}
}

// next returns up to n of the texts still without a vector, in the order
// they were found, and drops from the queue those found since.
func (ix *Index) next(n int) []job {
	for len(ix.queue) > 0 && ix.lacking[ix.queue[0]] == nil {
		ix.queue = ix.queue[1:]
	}
	var batch []job
	taken := make(map[key]bool, n)
	for _, k := range ix.queue {
		if len(batch) == n {
			break
		}
		if l := ix.lacking[k]; l != nil && !taken[k] {
			taken[k] = true
			batch = append(batch, job{k, l.text})
		}
	}
	if len(batch) == 0 && len(ix.lacking) > 0 {
		// Never so, as every lacking key is queued when it starts to lack;
		// but a pass must not go round without embedding.
		ix.queue = slices.Collect(maps.Keys(ix.lacking))
		return ix.next(n)
	}
	return batch
}

// compact drops the kept vectors no text of the memory has. The memory
// is looked at after the storage is read (refresh): a text whose vector
// another replica kept was written before it, so it is among the live
// ones.
func (ix *Index) compact(ctx context.Context, store graph.Store, model string) error {
	if err := ix.refresh(ctx, model); err != nil {
		return err
	}
	if err := ix.look(store, model); err != nil {
		return err
	}
	keep := make([]Record, 0, ix.want)
	live := make(map[key]vector, ix.want)
	ix.mu.RLock()
	for _, ks := range ix.entities {
		for _, k := range ks {
			if v, ok := ix.vectors[k]; ok {
				if _, dup := live[k]; !dup {
					keep = append(keep, record(k, v))
					live[k] = v
				}
			}
		}
	}
	ix.mu.RUnlock()
	if err := ix.store.Compact(ctx, model, keep); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.vectors = live
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
	if err == nil {
		err = ix.checkDims(len(vs[0]))
	}
	if err != nil {
		return err
	}
	ix.answered()
	recs := make([]Record, len(vs))
	ix.mu.Lock()
	for i, v := range vs {
		q := quantise(v)
		ix.vectors[batch[i].k] = q
		ix.found(batch[i].k)
		recs[i] = record(batch[i].k, q)
	}
	ix.mu.Unlock()
	if err := ix.store.Append(ctx, model, recs); err != nil {
		// The vectors are in memory; only a restart will ask for them
		// again. Logged once until an append succeeds.
		if !ix.keepFailing {
			ix.keepFailing = true
			ix.opts.Logf("search by meaning: keeping vectors: %v; they are kept in memory only until an append succeeds", err)
		}
		return nil
	}
	if ix.keepFailing {
		ix.keepFailing = false
		ix.opts.Logf("search by meaning: vectors are kept again")
	}
	ix.records += len(batch)
	return nil
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
