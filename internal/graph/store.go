package graph

import (
	"context"
	"time"
)

// Store keeps a graph (a memory file: filestore.Store; a memory in
// PostgreSQL: pgstore.Store) and lets several instances, in this process or
// others, share it. It is the method set the server, the web page, the
// commands and the stores' contract suite use, defined once here beside the
// graph it holds.
type Store interface {
	// View runs fn on the latest committed graph; fn must not keep or
	// modify it.
	View(fn func(*Graph)) error
	// Update runs fn on the latest graph as one all-or-nothing write under
	// the memory's lock, saves the graph if fn changed it, and reports
	// whether it did; when fn fails nothing is saved and its error is
	// returned. An error whose Timeout method reports true (both stores'
	// lock timeouts) means another writer held the lock too long: nothing
	// was changed, and trying again later may work.
	Update(ctx context.Context, fn func(*Graph) error) (changed bool, err error)
	// Watch calls onChange, until ctx ends, after another instance (another
	// process, another replica) changed the memory; changes close together
	// may be reported once. It does not report the instance's own writes.
	Watch(ctx context.Context, interval time.Duration, onChange func())
}
