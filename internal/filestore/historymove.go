package filestore

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// keepHistoryLocked moves the journal's records to the history file
// (AppendFile skips those a move cut short already wrote) and bounds the
// history. A history that cannot be written loses records, never a write:
// the log says so once.
func (s *Store) keepHistoryLocked() {
	lim := *s.opts.History
	var lines [][]byte
	if s.journal.exists() && !lim.Off() {
		data, _, err := readJournal(s.journalPath())
		if err != nil {
			s.historyFailure(err)
			return
		}
		// The record lines are the history's own: copied, not decoded.
		for raw := range bytes.Lines(data) {
			if raw[len(raw)-1] != '\n' || bytes.HasPrefix(raw, []byte(`{"journal":`)) || bytes.HasPrefix(raw, []byte(`{"compacting":`)) {
				continue
			}
			if line, ok := jsonl.RecordLineOf(raw); ok {
				lines = append(lines, line)
			}
		}
	}
	err := history.AppendLines(s.HistoryPath(), lines, durable.Mode(s.path))
	if err == nil {
		_, err = history.Trim(s.HistoryPath(), lim, time.Now())
	}
	if over := (*history.OverBoundError)(nil); errors.As(err, &over) {
		s.opts.Logf("%s: %v", s.HistoryPath(), over)
		err = nil
	}
	if err != nil {
		s.historyFailure(err)
		return
	}
	s.historyOutage.ok()
}

func (s *Store) historyFailure(err error) {
	s.historyOutage.fail(s.opts.Logf, "the history %s could not be written (the memory was saved; until this is fixed its history misses writes): %v", s.HistoryPath(), err)
}

// History returns the records f chooses, newest first (at most f.Limit):
// the history file's and those of the journal not yet moved to it. It takes no lock:
// it reads the journal first, so a record a compaction moves meanwhile is
// read from the history (and a record read twice is kept once).
func (s *Store) History(f history.Filter) ([]graph.Record, error) {
	data, _, err := readJournal(s.journalPath())
	if err != nil {
		return nil, err
	}
	var recs []graph.Record
	for _, r := range parseJournal(data, 0, func(string, ...any) {}, s.journalPath()).records {
		if r.record != nil && f.Match(r.record) {
			recs = append(recs, *r.record)
			if f.Headers {
				recs[len(recs)-1].Changes = nil
			}
		}
	}
	// The journal's records are the newest: the history file's reader
	// stops at f.Limit of its own, and what the two hold twice is kept
	// once before the limit is applied.
	old, _, err := history.ReadFile(s.HistoryPath(), f)
	if err != nil {
		return nil, fmt.Errorf("reading the history %s: %w", s.HistoryPath(), err)
	}
	recs = history.Newest(append(old, recs...))
	if f.Limit > 0 && len(recs) > f.Limit {
		recs = recs[:f.Limit]
	}
	return recs, nil
}
