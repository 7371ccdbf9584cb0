// Package history is the history of a memory's writes as kept and used:
// the history file (<memory file>.history) the file store moves its
// journal's records to, read, appended to and trimmed to its bounds
// (file.go), the filters both stores read a history with, and what is
// made of records: the summary of a write, the inverse of writes (undo)
// and its preview, the purge of an entity (docs/history.md). The record of
// a write and the step that makes it are graph's (graph.Record,
// graph.Graph.Write), and so is its line (graph.AppendRecord).
package history

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// lineTime returns the time of a record line, or the zero time.
func lineTime(line []byte) time.Time {
	var l struct {
		Time string `json:"time"`
	}
	if json.Unmarshal(line, &l) != nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339, l.Time)
	return t
}

// Filter chooses records; its zero value chooses every one.
type Filter struct {
	Since  time.Time // at or after; zero: from the start
	Client string    // exactly this client; "": any
	Entity string    // changes naming this entity (or a relation of it); "": any
	ID     string    // the record with this id; "": any
	// DeletesEntity chooses the records that delete an entity.
	DeletesEntity bool
	// Limit, when above 0, keeps the newest Limit records chosen: a
	// reader stops there (Match does not look at it).
	Limit int
	// Headers: the records come without their Changes, which a reader
	// then need not decode (to count writes); only with no Entity and no
	// DeletesEntity. A line whose header reads but whose changes do not
	// is then kept.
	Headers bool
	// MaxBytes, when above 0, bounds what a reader decodes: a record whose
	// changes take more than MaxBytes comes with its header only (Changes
	// nil), chosen by DeletesEntity when its changes name the entity
	// deletion op, undecoded. With an Entity, every record is decoded.
	MaxBytes int
}

// headerOnly reports whether a record whose line (or changes) take size
// bytes is read as its header only.
func (f Filter) headerOnly(size int) bool {
	return f.Entity == "" && (f.Headers && !f.DeletesEntity || f.MaxBytes > 0 && size > f.MaxBytes)
}

// Match reports whether r passes f.
func (f Filter) Match(r *graph.Record) bool {
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if f.Client != "" && r.Client != f.Client {
		return false
	}
	if f.ID != "" && r.ID != f.ID {
		return false
	}
	if f.DeletesEntity && !slices.ContainsFunc(r.Changes, func(c graph.Change) bool { return c.Kind == graph.EntityDeleted }) {
		return false
	}
	if f.Entity == "" {
		return true
	}
	for _, c := range r.Changes {
		if c.Entity.Name == f.Entity || c.Relation.From == f.Entity || c.Relation.To == f.Entity {
			return true
		}
	}
	return false
}

// Reader is a memory whose history can be read: both stores.
type Reader interface {
	// History returns the records f chooses, newest first, at most
	// f.Limit of them when it is above 0.
	History(f Filter) ([]graph.Record, error)
}
