package pgstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel carries one notice per committed write of any memory.
const notifyChannel = "mcp_memory_changed"

// notice is the payload of a notification: which memory, at which
// revision, written by which Store.
type notice struct {
	memory int64
	rev    int64
	origin string
}

func (n notice) String() string { return fmt.Sprintf("%d %d %s", n.memory, n.rev, n.origin) }

func parseNotice(s string) (n notice, ok bool) {
	_, err := fmt.Sscanf(s, "%d %d %s", &n.memory, &n.rev, &n.origin)
	return n, err == nil
}

// Watch calls onChange, until ctx ends, after this Store commits a change
// to this memory (as soon as it commits) or another Store (another replica
// or process) does. Changes that come quickly one after another may be
// reported once.
//
// Every Watch of a DB shares one listening connection. When it fails, the
// DB logs, waits interval (that of the Watch that started it) and connects
// again; notifications sent meanwhile are lost, so each Watch then compares
// the memory's revision and reports a change it missed. onChange runs on
// Watch's goroutine, never two at once.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	if interval <= 0 {
		interval = time.Second
	}
	own, stop := s.written.Listen()
	defer stop()
	seen := int64(-1) // the latest revision known; -1: none
	var waited *watcher
	if !s.Exists() {
		var ok bool
		if waited, seen, ok = s.awaitRow(ctx, interval); !ok {
			return
		}
		// Another replica created the memory, or wrote after this Store's
		// own first write: a change to report. (A foreign write followed
		// by one of this Store's own is reported with that own write.)
		if own := s.lastOwn.Load(); own == 0 || seen > own {
			onChange()
		}
	}
	w := &watcher{memory: s.id.Load(), origin: s.origin, wake: make(chan struct{}, 1)}
	s.db.hub.subscribe(w, interval)
	defer s.db.hub.unsubscribe(w)
	if waited != nil {
		// Only now does awaitRow's watcher let go, so the hub listened
		// throughout; compare the revision once for a write made between
		// finding the row and subscribing.
		s.db.hub.unsubscribe(waited)
		w.resync.Store(true)
		w.poke()
	} else if rev, ok := s.currentRevision(ctx); ok {
		seen = rev
		// Another Store's write since this Store first read the memory,
		// made before this Watch listened, is told at once (before, the
		// Watch took it as its baseline, and a replica's search by
		// meaning never looked at it).
		if first := s.firstRead(); first >= 0 && rev > first && rev != s.lastOwn.Load() {
			onChange()
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-own:
			onChange()
			continue
		case <-w.wake:
		}
		if s.wokeByChange(ctx, w, &seen, interval) {
			onChange()
		}
	}
}

// wokeByChange reports whether what woke w is a change to report: another
// Store's notification, or, after the listening connection was lost, a
// revision above seen that is not this Store's own write. seen becomes
// the latest revision known. When the revision cannot be read, it is
// asked for again after interval.
func (s *Store) wokeByChange(ctx context.Context, w *watcher, seen *int64, interval time.Duration) bool {
	changed := w.foreign.Swap(false)
	if !w.resync.Swap(false) {
		return changed
	}
	if rev, ok := s.currentRevision(ctx); ok {
		changed = changed || *seen >= 0 && rev > *seen && rev != s.lastOwn.Load()
		*seen = max(*seen, rev)
	} else {
		// The pool lost its connections too: ask again later.
		w.resync.Store(true)
		time.AfterFunc(interval, w.poke)
	}
	return changed
}

// currentRevision reads the memory's revision; false when the query fails.
func (s *Store) currentRevision(ctx context.Context) (int64, bool) {
	qctx, cancel := context.WithTimeout(ctx, s.db.opts.QueryTimeout)
	defer cancel()
	var rev int64
	err := s.db.pool.QueryRow(qctx, "SELECT revision FROM memories WHERE id = $1", s.id.Load()).Scan(&rev)
	return rev, err == nil
}

// awaitRow waits until the memory has its row (its first write, here or
// in another replica) and returns the watcher it waited with, still
// subscribed (so that the hub goes on listening until the caller's own
// watcher is), and the revision it found; or reports false when ctx ended
// first. It looks the row up after every notification of any memory, and
// every interval in case a notification was missed.
func (s *Store) awaitRow(ctx context.Context, interval time.Duration) (w *watcher, rev int64, ok bool) {
	w = &watcher{memory: 0, wake: make(chan struct{}, 1)}
	s.db.hub.subscribe(w, interval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, s.db.opts.QueryTimeout)
		var id int64
		err := s.db.pool.QueryRow(lctx, "SELECT id, revision FROM memories WHERE name = $1", s.name).Scan(&id, &rev)
		cancel()
		if err == nil {
			s.id.CompareAndSwap(0, id)
			return w, rev, true
		}
		select {
		case <-ctx.Done():
			s.db.hub.unsubscribe(w)
			return nil, 0, false
		case <-w.wake:
		case <-t.C:
		}
	}
}

// watcher is one Watch waiting for the hub.
type watcher struct {
	memory  int64 // 0: a memory with no row yet, woken by every notice
	origin  string
	wake    chan struct{} // capacity 1: wake-ups coalesce
	foreign atomic.Bool   // another Store wrote the memory
	resync  atomic.Bool   // the hub (re)connected: compare the revision
}

func (w *watcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// hub is a DB's one listening connection, shared by its Watches; it runs
// while any Watch does.
type hub struct {
	db   *DB
	mu   sync.Mutex
	subs map[int64]map[*watcher]bool // by memory id
	n    int
	stop context.CancelFunc // nil: not running
}

func (h *hub) subscribe(w *watcher, interval time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int64]map[*watcher]bool{}
	}
	if h.subs[w.memory] == nil {
		h.subs[w.memory] = map[*watcher]bool{}
	}
	h.subs[w.memory][w] = true
	h.n++
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		go h.run(ctx, interval)
	}
}

func (h *hub) unsubscribe(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs[w.memory], w)
	if len(h.subs[w.memory]) == 0 {
		delete(h.subs, w.memory)
	}
	if h.n--; h.n == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// close stops listening; DB.Close calls it.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

func (h *hub) run(ctx context.Context, interval time.Duration) {
	for {
		err := h.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		h.db.opts.Logf("change notifications from PostgreSQL stopped: %v; listening again in %v", err, interval)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (h *hub) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, h.db.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Listening from here on: whatever committed before shows in the
	// revision, which every Watch now compares.
	h.resyncAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		nt, ok := parseNotice(n.Payload)
		if !ok {
			continue
		}
		h.mu.Lock()
		for w := range h.subs[nt.memory] {
			if w.origin != nt.origin {
				w.foreign.Store(true)
				w.poke()
			}
		}
		for w := range h.subs[0] {
			w.poke() // a memory with no row yet: was it created?
		}
		h.mu.Unlock()
	}
}

// resyncAll has every Watch compare the revision.
func (h *hub) resyncAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ws := range h.subs {
		for w := range ws {
			w.resync.Store(true)
			w.poke()
		}
	}
}
