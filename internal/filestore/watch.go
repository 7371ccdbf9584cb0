package filestore

import (
	"context"
	"time"
)

// Watch calls onChange, until ctx ends, after each write of this Store
// (as soon as it is saved), and after another process changed the memory,
// which it finds by polling the memory file and its journal every
// interval. Another process's compaction, which rewrites the file with
// what this Store already holds, is no change. Polling a stat is cheap,
// portable, needs no dependency, and sees renames over the file that
// directory watchers report inconsistently across platforms.
func (s *Store) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	own, stop := s.written.Listen()
	defer stop()
	t := time.NewTicker(interval)
	defer t.Stop()
	// What the memory holds now is what later changes are told against;
	// a change another process made since this Store first read the
	// memory, read by a call before this Watch began, is told at once
	// (before, the Watch took it as its baseline, and a server's search by
	// meaning never looked at it).
	lastSeen, _ := s.watchStamp()
	s.mu.Lock()
	s.refreshLocked()
	heard := s.foreign
	s.mu.Unlock()
	if heard != 0 {
		onChange()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-own:
			onChange()
			continue
		case <-t.C:
		}
		st, err := s.watchStamp()
		if err != nil || st == lastSeen {
			continue
		}
		lastSeen = st
		// Read what changed: the count tells whether another process's
		// write reached this Store since the last look, whoever read it
		// (this Watch, another, a call).
		s.mu.Lock()
		if err := s.refreshLocked(); err != nil {
			s.foreign++ // cannot tell: report
		}
		foreign := s.foreign
		s.mu.Unlock()
		if foreign != heard {
			heard = foreign
			onChange()
		}
	}
}

func (s *Store) watchStamp() (watchStamp, error) {
	st, err := s.statFile()
	if err != nil {
		return watchStamp{}, err
	}
	j, err := s.statJournal()
	if err != nil {
		return watchStamp{}, err
	}
	return watchStamp{file: st, jexists: j.exists(), jid: j.id, jsize: j.size}, nil
}

// Journal returns, as of the last read, how many writes the journal
// holds that the memory file does not, and the journal's size (0, 0:
// none). Until a compaction folds them in, the memory file alone is
// behind the memory by those writes.
func (s *Store) Journal() (writes int, size int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.journal.exists() {
		return 0, 0
	}
	return s.journal.records, s.journal.size
}
