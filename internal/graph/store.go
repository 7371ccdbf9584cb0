package graph

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Store keeps a graph (a memory file: filestore.Store; a memory in
// PostgreSQL: pgstore.Store) and lets several instances, in this process or
// others, share it. It is the method set the server, the web page, the
// commands and the stores' contract suite use, defined once here beside the
// graph it holds.
type Store interface {
	// View runs fn on the latest committed graph and returns fn's error,
	// or the store's when it could not read the graph (fn did not run);
	// ctx bounds the reading. fn must not keep or modify the graph.
	View(ctx context.Context, fn func(*Graph) error) error
	// Update runs w.Apply on the latest graph as one all-or-nothing write
	// under the memory's lock, saves the graph if it changed, and reports
	// whether it did; when w.Apply fails nothing is saved and its error is
	// returned. The store reads the clock once, under the lock: that
	// instant stamps the facts the write adds and its history record,
	// which names w's author. An error whose Timeout method reports true
	// (both stores' lock timeouts) means another writer held the lock too
	// long: nothing was changed, and trying again later may work.
	Update(ctx context.Context, w Write) (changed bool, err error)
	// Watch calls onChange, until ctx ends, after the memory changed: by a
	// write of this instance (reported as soon as it is saved) or of
	// another (another process, another replica; reported within about
	// interval). Changes close together may be reported once; onChange
	// runs on Watch's goroutine, never two at once.
	Watch(ctx context.Context, interval time.Duration, onChange func())
}

// Write is one write to a memory: who makes it and what it does. The
// server, the page and the commands each describe their writes this way,
// and the store does the rest (the time, the history record).
type Write struct {
	// Tool is the tool or command writing (create_entities, import, undo,
	// page); Client the MCP client's name, a token's label, or "".
	Tool, Client string
	// Apply makes the change. It must validate before it changes
	// anything: when it returns an error nothing is saved.
	Apply func(*Graph) error
}

// Written tells a store's Watches of the store's own writes: Update calls
// Done after each write that changed the memory, and each Watch waits on
// a channel of Listen's. Its zero value is ready to use.
type Written struct {
	mu    sync.Mutex
	chans map[chan struct{}]bool
}

// Listen returns a channel that receives a value after each write Done
// reports (writes close together may give one), and the func that stops
// it.
func (w *Written) Listen() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	w.mu.Lock()
	if w.chans == nil {
		w.chans = make(map[chan struct{}]bool)
	}
	w.chans[c] = true
	w.mu.Unlock()
	return c, func() {
		w.mu.Lock()
		delete(w.chans, c)
		w.mu.Unlock()
	}
}

// Done reports a write that changed the memory to every listener.
func (w *Written) Done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.chans {
		select {
		case c <- struct{}{}:
		default: // one is already pending
		}
	}
}

// indexStepLen is how many entities a step of BuildIndexes indexes: about
// a millisecond of work. A search, and a write to a store that says it
// waits (Contended), do not wait for a step to end: it stops at the next
// entity. A search through ViewIndexed takes part in the steps; one that
// needs an index being built in a plain View finishes it under the
// store's lock.
const indexStepLen = 64

// Contended is implemented by a Store that can tell when a caller waits
// for its exclusive access (a write, a reload): the background index
// build, which runs as a reader a step at a time, then ends its step at
// the next entity instead of at its end, and the write goes first.
type Contended interface {
	ExclusiveWanted() bool
}

// RWMutex is a store's lock over the graph it holds: a sync.RWMutex that
// counts the callers waiting in Lock, for Contended.
type RWMutex struct {
	sync.RWMutex
	waiting atomic.Int32
}

// Lock locks m for writing, counted while it waits.
func (m *RWMutex) Lock() {
	m.waiting.Add(1)
	m.RWMutex.Lock()
	m.waiting.Add(-1)
}

// Wanted reports whether a caller waits in Lock.
func (m *RWMutex) Wanted() bool { return m.waiting.Load() > 0 }

// BuildIndexes builds the search indexes of the graph s holds in the
// background, a step (Graph.IndexStep) per View, so writes take their turn
// between steps, and returns when both are whole (reporting how many
// entities the graph holds then, and true), ctx ends or a View fails. A
// search that comes first takes part in the build (ViewIndexed). If s
// comes to hold another graph (one read again from storage), the steps go
// on on that one.
func BuildIndexes(ctx context.Context, s Store) (entities int, built bool) {
	err := ViewIndexed(ctx, s, func(g *Graph) error {
		entities = len(g.entities)
		return nil
	})
	return entities, err == nil
}

// ViewIndexed runs fn as s.View does, on a graph whose search indexes are
// whole. While they are still being built it builds what is left a step
// per View, as BuildIndexes does, so a search that arrives then waits for
// them outside the store's lock: writes and lookups take their turn
// between the steps, and the search waits no longer than the build. Once
// they are whole it is one View, fn's. It returns fn's error, ctx's or a
// View's.
func ViewIndexed(ctx context.Context, s Store, fn func(*Graph) error) error {
	wanted := never
	if c, ok := s.(Contended); ok {
		wanted = c.ExclusiveWanted
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ran := false
		err := s.View(ctx, func(g *Graph) error {
			if !g.indexStep(indexStepLen, wanted) {
				return nil
			}
			ran = true
			return fn(g)
		})
		if err != nil || ran {
			return err
		}
	}
}
