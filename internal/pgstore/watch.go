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

// Watch calls onChange, until ctx ends, after another Store (another
// replica or process) commits a change to this memory; this Store's own
// writes are not reported. Changes that come quickly one after another may
// be reported once.
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
	w := &watcher{memory: s.id, origin: s.origin, wake: make(chan struct{}, 1)}
	s.db.hub.subscribe(w, interval)
	defer s.db.hub.unsubscribe(w)
	seen := int64(-1) // the latest revision known; -1: none
	revision := func() (int64, bool) {
		var rev int64
		err := s.db.pool.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1", s.id).Scan(&rev)
		return rev, err == nil
	}
	if rev, ok := revision(); ok {
		seen = rev
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		changed := w.foreign.Swap(false)
		if w.resync.Swap(false) {
			if rev, ok := revision(); ok {
				changed = changed || seen >= 0 && rev > seen && rev != s.lastOwn.Load()
				seen = max(seen, rev)
			} else {
				// The pool lost its connections too: ask again later.
				w.resync.Store(true)
				time.AfterFunc(interval, w.poke)
			}
		}
		if changed {
			onChange()
		}
	}
}

// watcher is one Watch waiting for the hub.
type watcher struct {
	memory  int64
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
