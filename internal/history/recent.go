package history

import (
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// RecentWrites returns how many writes r recorded on each of the days
// days (UTC) that end with now's. It reads the records' headers only.
func RecentWrites(r Reader, now graph.Time, days int) (graph.PerDay, error) {
	pd := graph.NewPerDay(now, days)
	recs, err := r.History(Filter{Since: pd.From.UTC(), Headers: true})
	if err != nil {
		return graph.PerDay{}, err
	}
	for i := range recs {
		pd.Add(graph.TimeOf(recs[i].Time))
	}
	return pd, nil
}
