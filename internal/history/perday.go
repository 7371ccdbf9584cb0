package history

import (
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// WritesPerDay counts the writes r recorded on each of the days days
// (UTC) that end with now's.
func WritesPerDay(r Reader, now graph.Time, days int) (graph.PerDay, error) {
	pd := graph.NewPerDay(now, days)
	recs, err := r.History(Filter{Since: time.Unix(int64(pd.From), 0).UTC()})
	if err != nil {
		return graph.PerDay{}, err
	}
	for i := range recs {
		pd.Add(graph.TimeOf(recs[i].Time))
	}
	return pd, nil
}
