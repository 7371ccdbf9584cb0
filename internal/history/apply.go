package history

import (
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Apply runs the write w on g at now, as both stores do under the
// memory's lock: the facts w adds are stamped with now (to the second), and
// the changes it makes become its record, stamped with the same instant
// and w's author, with an id that sorts after lastID() (called only when
// something changed). changed reports whether g changed; complete whether
// rec's changes hold the whole write (graph.Graph.TakeChanges: a Rewrite
// is not described). When w.Apply fails its error is returned, changed is
// false, and g may hold part of the write.
func Apply(g *graph.Graph, w graph.Write, now time.Time, lastID func() string) (rec Record, changed, complete bool, err error) {
	before := g.Version()
	g.TrackChanges()
	g.SetNow(graph.TimeOf(now))
	err = w.Apply(g)
	g.SetNow(0)
	changes, complete := g.TakeChanges()
	if err != nil || g.Version() == before {
		return Record{}, false, complete, err
	}
	rec = Record{Time: now.UTC().Truncate(time.Second), Tool: w.Tool, Client: w.Client, Changes: changes}
	if len(changes) > 0 {
		rec.ID = NewID(now, lastID())
	}
	return rec, true, complete, nil
}
