// Package sharedstore lets several parts of one process use one memory
// store and hear each other's writes: under --http the MCP server and the
// web page share the process's store.
//
// A store's Watch (filestore.Store, pgstore.Store) reports the writes of
// other processes only, because a part that writes knows it wrote. Two
// parts of one process sharing the store would then never hear each other:
// an assistant's write would not show on the open page, and an edit on the
// page would not reach the MCP clients' subscriptions. Each Part of a
// Shared store also reports the writes made through the other Parts, and
// the store keeps one graph in memory for all of them.
package sharedstore

import (
	"context"
	"sync"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// Shared is one Store used by several Parts.
type Shared struct {
	store graph.Store

	mu      sync.Mutex
	watches map[*watch]bool
}

// New shares store.
func New(store graph.Store) *Shared { return &Shared{store: store, watches: make(map[*watch]bool)} }

// Part returns a new part: a Store whose Watch reports other processes'
// writes and the writes made through every other Part.
func (s *Shared) Part() graph.Store { return &part{shared: s} }

type part struct{ shared *Shared }

// watch is one running Watch of a part.
type watch struct {
	of     *part
	change chan struct{} // holds one pending change
}

func (w *watch) poke() {
	select {
	case w.change <- struct{}{}:
	default: // a change is already pending
	}
}

func (p *part) View(ctx context.Context, fn func(*graph.Graph) error) error {
	return p.shared.store.View(ctx, fn)
}

// History reads the shared store's history (history.Reader); a store that
// keeps none has none.
func (p *part) History(f history.Filter) ([]history.Record, error) {
	if r, ok := p.shared.store.(history.Reader); ok {
		return r.History(f)
	}
	return nil, nil
}

// Update writes through the store, and when it changed the memory, tells
// the Watches of the other parts.
func (p *part) Update(ctx context.Context, w graph.Write) (bool, error) {
	changed, err := p.shared.store.Update(ctx, w)
	if changed {
		p.shared.mu.Lock()
		for w := range p.shared.watches {
			if w.of != p {
				w.poke()
			}
		}
		p.shared.mu.Unlock()
	}
	return changed, err
}

// Watch calls onChange, until ctx ends, after another process or another
// part changed the memory; changes that come quickly one after another may
// be reported once. onChange runs on Watch's goroutine, never two at once.
func (p *part) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	w := &watch{of: p, change: make(chan struct{}, 1)}
	s := p.shared
	s.mu.Lock()
	s.watches[w] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.watches, w)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.store.Watch(ctx, interval, w.poke)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.change:
			onChange()
		}
	}
}
