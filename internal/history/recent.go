package history

import (
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// RecentWrites returns the writes r recorded over the days days (UTC) that
// end with now's, newest first, and how many on each day.
func RecentWrites(r Reader, now graph.Time, days int) (graph.PerDay, []Record, error) {
	pd := graph.NewPerDay(now, days)
	recs, err := r.History(Filter{Since: pd.From.UTC()})
	if err != nil {
		return graph.PerDay{}, nil, err
	}
	for i := range recs {
		pd.Add(graph.TimeOf(recs[i].Time))
	}
	return pd, recs, nil
}
