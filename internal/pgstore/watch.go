package pgstore

import (
	"context"
	"fmt"
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

// Watch calls onChange, until ctx ends, whenever another Store (another
// replica or process) commits a change to this memory; this Store's own
// writes are not reported. It listens on a connection of its own; when that
// connection fails it logs, waits interval and connects again, and reports
// a change if the revision moved meanwhile (notifications sent while nobody
// listened are lost). onChange runs on Watch's goroutine.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	if interval <= 0 {
		interval = time.Second
	}
	seen := int64(-1) // the latest revision heard of; -1: none yet
	for {
		err := s.listen(ctx, &seen, onChange)
		if ctx.Err() != nil {
			return
		}
		s.db.opts.Logf("memory %q: change notifications from PostgreSQL stopped: %v; listening again in %v", s.name, err, interval)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (s *Store) listen(ctx context.Context, seen *int64, onChange func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.db.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Listening from here on; whatever committed before is in the revision.
	var rev int64
	if err := conn.QueryRow(ctx, "SELECT revision FROM memories WHERE id = $1", s.id).Scan(&rev); err != nil {
		return err
	}
	if *seen >= 0 && rev > *seen && rev != s.lastOwn.Load() {
		onChange()
	}
	*seen = max(*seen, rev)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		nt, ok := parseNotice(n.Payload)
		if !ok || nt.memory != s.id {
			continue
		}
		*seen = max(*seen, nt.rev)
		if nt.origin != s.origin {
			onChange()
		}
	}
}
