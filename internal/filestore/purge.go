package filestore

import (
	"context"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// PurgeHistory removes from the history, for good, every change naming
// entity (history.Purger). Under the lock it first folds the journal in,
// which moves the journal's records to the history, so none is left
// behind in the journal; then it rewrites the history file.
func (s *Store) PurgeHistory(ctx context.Context, entity string) (n int, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err = s.underLock(ctx, func(lock *Lock) error {
		if s.journal.exists() {
			if err := s.compactFreshLocked(lock); err != nil {
				s.g = nil
				return s.explain(err)
			}
		}
		n, err = history.PurgeFile(s.HistoryPath(), entity, durable.Mode(s.path))
		return err
	})
	return n, err
}
