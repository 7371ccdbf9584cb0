package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// notified lets a write's answer follow its resources/updated
// notification, as a client reading the session in order expects: the
// notification is sent by Server.Watch alone (the store's Watch reports
// this server's writes too), which counts what it told, and Server.update
// waits, at most notifyWait, until Watch has told of a change after its
// write.
type notified struct {
	watching atomic.Int32 // Watches running
	mu       sync.Mutex
	n        uint64        // changes told
	grew     chan struct{} // closed when n grows
}

// notifyWait bounds how long a write's answer waits for its notification.
const notifyWait = time.Second

// mark returns how many changes were told so far, and a channel closed
// when there are more.
func (n *notified) mark() (uint64, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.grew == nil {
		n.grew = make(chan struct{})
	}
	return n.n, n.grew
}

// told counts a change Watch told the subscribers of.
func (n *notified) told() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.n++
	if n.grew != nil {
		close(n.grew)
		n.grew = nil
	}
}

// wait returns once a change after the mark (at, grew) was told, ctx
// ended or notifyWait passed, and reports true; when no Watch runs it
// returns false at once: nobody will tell of the change.
func (n *notified) wait(ctx context.Context, at uint64, grew <-chan struct{}) bool {
	if n.watching.Load() == 0 {
		return false
	}
	timeout := time.NewTimer(notifyWait)
	defer timeout.Stop()
	for {
		select {
		case <-grew:
		case <-ctx.Done():
			return true
		case <-timeout.C:
			return true
		}
		var now uint64
		if now, grew = n.mark(); now > at {
			return true
		}
	}
}
