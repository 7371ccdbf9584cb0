package jsonl

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func itoa(i int) string { return strconv.Itoa(i) }

// encode appends the memory file for g to buf, as Write writes it.
func encode(buf []byte, g *graph.Graph, unreadable [][]byte) []byte {
	b := bytes.NewBuffer(buf)
	Write(b, g, unreadable) // a bytes.Buffer never fails
	return b.Bytes()
}

// snapshot copies the graph's entities and relations, Extra included, so
// tests can compare graphs as values.
func snapshot(g *graph.Graph) graph.Snapshot {
	s := graph.Snapshot{Entities: []graph.Entity{}, Relations: []graph.Relation{}}
	for _, e := range g.Entities() {
		s.Entities = append(s.Entities, graph.Entity{
			Name: e.Name, EntityType: e.EntityType, Observations: slices.Clone(e.Observations), Extra: e.Extra,
			Created: e.Created, Updated: e.Updated, ObservedAt: slices.Clone(e.ObservedAt),
		})
	}
	for _, r := range g.Relations() {
		s.Relations = append(s.Relations, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created})
	}
	return s
}

func equalSnapshots(a, b graph.Snapshot) bool {
	return slices.EqualFunc(a.Entities, b.Entities, func(x, y graph.Entity) bool {
		return x.Name == y.Name && x.EntityType == y.EntityType &&
			slices.Equal(x.Observations, y.Observations) && string(x.Extra) == string(y.Extra) &&
			x.Created == y.Created && x.Updated == y.Updated && graph.SameTimes(x.ObservedAt, y.ObservedAt)
	}) && slices.EqualFunc(a.Relations, b.Relations, func(x, y graph.Relation) bool {
		return x.From == y.From && x.To == y.To && x.RelationType == y.RelationType && string(x.Extra) == string(y.Extra) &&
			x.Created == y.Created
	})
}
