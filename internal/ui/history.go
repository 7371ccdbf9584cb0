package ui

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// Limits of what the page shows of the history.
const (
	entityHistoryLimit = 50 // records in an entity's history, the newest
	deletedLimit       = 10 // records in the home view's "recently deleted"
	shownTexts         = 5  // observations named per record
	// shownRecordBytes bounds the records "recently deleted" reads whole:
	// a bigger one (a mass deletion) is listed by its header, and the undo
	// command restores it.
	shownRecordBytes = 1 << 20
)

// historyEntry is one recorded write as the page shows it.
type historyEntry struct {
	ID     string `json:"id"`
	Time   string `json:"time"`
	Tool   string `json:"tool"`
	Client string `json:"client"`
	// Summary says what changed, as the history command says it.
	Summary string `json:"summary"`
	// Observations are the texts of the observations the write added or
	// removed (of Entity, when the page asked for one entity's history),
	// at most shownTexts; More counts the others.
	Observations []string `json:"observations"`
	More         int      `json:"more"`
	// Restorable: the write only removed things, and restoring it (the
	// undo of the write) brings them back.
	Restorable bool `json:"restorable"`
	// Back: the write only removed things, and every one of them that can
	// come back (a relation to an entity now gone cannot) is in the memory
	// again.
	Back bool `json:"back"`
	// Headline says in a few words what the write did to entities, for
	// the home view's one line: "deleted Alice (person)", "renamed Alice
	// to Alicia", "merged Al into Alice".
	Headline string `json:"headline"`
	// Undo is the command that undoes the write, for those the page does
	// not restore.
	Undo string `json:"undo"`
	// Later: a newer write listed with this one deleted the same entity
	// again; that one is the deletion to restore.
	Later bool `json:"later,omitempty"`
	// Large: the write was too large to read here (Summary says so).
	Large bool `json:"large,omitempty"`

	rec *graph.Record
}

func entryOf(r *graph.Record, entity string) historyEntry {
	e := historyEntry{ID: r.ID, Time: r.Time.UTC().Format(time.RFC3339), Tool: r.Tool, Client: r.Client,
		Summary: history.Summary(r.Changes), Observations: []string{}, Restorable: deletionOnly(r), rec: r,
		Headline: headline(r.Changes), Undo: "mcp-server-memory undo " + r.Short()}
	if len(r.Changes) == 0 {
		// Read by its header only (history.Filter.MaxBytes).
		e.Large = true
		e.Summary = "a change too large to show here (mcp-server-memory history shows it)"
		e.Headline = "a large change"
		return e
	}
	for _, c := range r.Changes {
		if (c.Kind == graph.ObservationsAdded || c.Kind == graph.ObservationsDeleted) && (entity == "" || c.Entity.Name == entity) {
			for _, o := range c.Entity.Observations {
				if len(e.Observations) < shownTexts {
					e.Observations = append(e.Observations, o)
				} else {
					e.More++
				}
			}
		}
	}
	return e
}

// deletionOnly reports whether r only removed things: what the page
// restores. (A write that also added, a rename or a merge, is undone with
// the undo command, which says what it will change first.)
func deletionOnly(r *graph.Record) bool {
	for _, c := range r.Changes {
		switch c.Kind {
		case graph.EntityDeleted, graph.ObservationsDeleted, graph.RelationDeleted:
		default:
			return false
		}
	}
	return len(r.Changes) > 0
}

// headline says what changes did to entities in a few words: a rename (an
// entity deleted and one created), a merge (an entity deleted, its
// observations added to another), the entities deleted, else what
// history.Summary says.
func headline(changes []graph.Change) string {
	var deleted, created []graph.Entity
	var addedTo []string
	for _, c := range changes {
		switch c.Kind {
		case graph.EntityDeleted:
			deleted = append(deleted, c.Entity)
		case graph.EntityCreated:
			created = append(created, c.Entity)
		case graph.ObservationsAdded:
			addedTo = append(addedTo, c.Entity.Name)
		}
	}
	switch {
	case len(deleted) == 1 && len(created) == 1 && len(addedTo) == 0:
		return "renamed " + deleted[0].Name + " to " + created[0].Name
	case len(deleted) == 1 && len(created) == 0 && len(addedTo) == 1 && addedTo[0] != deleted[0].Name:
		return "merged " + deleted[0].Name + " into " + addedTo[0]
	case len(deleted) > 0 && len(created) == 0:
		return "deleted " + entityNames(deleted, 3)
	}
	return history.Summary(changes)
}

// entityNames names the entities, the first shown of them with their
// types, then how many more.
func entityNames(es []graph.Entity, shown int) string {
	if len(es) == 1 {
		return es[0].Name + " (" + es[0].EntityType + ")"
	}
	var names []string
	for _, e := range es[:min(len(es), shown)] {
		names = append(names, e.Name)
	}
	if len(es) > shown {
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", len(es)-shown)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// markLater sets Later on each entry, newest first, that deleted an entity
// a newer one deleted again: only the newest deletion of an entity is
// offered for restoring (restoring an older one would bring back what a
// restore already brought back once).
func (a *historyAnswer) markLater() {
	seen := map[string]bool{}
	for i := range a.Records {
		e := &a.Records[i]
		for _, c := range e.rec.Changes {
			if c.Kind != graph.EntityDeleted {
				continue
			}
			if seen[c.Entity.Name] {
				e.Later = true
			}
		}
		for _, c := range e.rec.Changes {
			if c.Kind == graph.EntityDeleted {
				seen[c.Entity.Name] = true
			}
		}
		if e.Later {
			e.Restorable = false
		}
	}
}

// historyAnswer is an entity's history, or the writes that deleted
// entities, newest first.
type historyAnswer struct {
	Records []historyEntry `json:"records"`
	// More: records were left out past the limit (older ones, which the
	// history command shows).
	More bool `json:"more"`
}

// entityHistory answers the page's history of one entity: the writes that
// changed it or its relations, newest first.
func (h *Handler) entityHistory(w http.ResponseWriter, name string) {
	r := historyOf(h.store)
	if r == nil {
		writeError(w, http.StatusNotFound, "This memory keeps no history.")
		return
	}
	// One past the limit tells whether there are more: the read stops
	// there, however long the history.
	recs, err := r.History(history.Filter{Entity: name, Limit: entityHistoryLimit + 1})
	if err != nil {
		h.historyFailed(w, err)
		return
	}
	a := listHistory(recs, name, entityHistoryLimit)
	h.view(w, func(g *graph.Graph) (any, int) {
		a.seeBack(g)
		return a, http.StatusOK
	})
}

// listHistory lists the records, newest first as given, at most limit.
func listHistory(recs []graph.Record, entity string, limit int) historyAnswer {
	a := historyAnswer{Records: []historyEntry{}}
	for i := range recs {
		if len(a.Records) == limit {
			a.More = true
			break
		}
		a.Records = append(a.Records, entryOf(&recs[i], entity))
	}
	return a
}

// seeBack sets Back on each entry that only removed things: whether g
// holds each of them again.
func (a *historyAnswer) seeBack(g *graph.Graph) {
	for i := range a.Records {
		e := &a.Records[i]
		e.Back = e.Restorable
		for _, c := range e.rec.Changes {
			switch c.Kind {
			case graph.EntityDeleted, graph.ObservationsDeleted:
				cur := g.Entity(c.Entity.Name)
				e.Back = e.Back && cur != nil
				for _, o := range c.Entity.Observations {
					e.Back = e.Back && slices.Contains(cur.Observations, o)
				}
			case graph.RelationDeleted:
				// A relation to an entity now gone cannot come back: a
				// restore leaves it out (history.Undo says so).
				r := c.Relation
				e.Back = e.Back && (g.HasRelation(r) || g.Entity(r.From) == nil || g.Entity(r.To) == nil)
			}
			if !e.Back {
				break
			}
		}
	}
}

func (h *Handler) historyFailed(w http.ResponseWriter, err error) {
	h.opts.Logf("the page could not read the history: %v", err)
	writeError(w, http.StatusInternalServerError, h.hide.Error(err))
}

// restoreFunc returns the write that restores what the recorded write id
// removed: its undo, recorded in its turn (as the page's). It leaves what
// it did in *message.
func (h *Handler) restoreFunc(id string, message *string) (func(*graph.Graph) error, error) {
	r := historyOf(h.store)
	if r == nil {
		return nil, errors.New("this memory keeps no history")
	}
	if id == "" {
		return nil, errors.New("the change to restore is empty")
	}
	recs, err := r.History(history.Filter{ID: id})
	if err != nil {
		return nil, fmt.Errorf("reading the history: %w", err)
	}
	var rec *graph.Record
	for i := range recs {
		if recs[i].ID == id {
			rec = &recs[i]
		}
	}
	switch {
	case rec == nil:
		return nil, fmt.Errorf("there is no change %q in the history (any more)", id)
	case !deletionOnly(rec):
		return nil, fmt.Errorf("the change %s did more than delete: undo it with mcp-server-memory undo %s, which says what it will change first", rec.Short(), rec.Short())
	}
	return func(g *graph.Graph) error {
		conflicts := history.Undo(g, []graph.Record{*rec})
		*message = "Restored: " + history.Summary(history.Inverse(rec.Changes)) + "."
		if len(conflicts) > 0 {
			*message += " The memory changed since: " + strings.Join(conflicts, "; ") + "."
		}
		return nil
	}, nil
}
