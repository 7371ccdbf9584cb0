package graph

import "fmt"

// MaxDepth is the deepest neighbourhood Neighbours returns. Two steps
// already reach most of a well-connected memory; more would answer with the
// whole graph.
const MaxDepth = 2

// DepthError is returned for a depth Neighbours does not accept.
type DepthError struct{ Depth int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("depth must be between 0 and %d, not %d", MaxDepth, e.Depth)
}

// Neighbours selects the named entities that exist and, at depth 1, every
// entity directly related to one of them (either direction), at depth 2
// also the entities related to those; with the relations whose both ends are
// among the selected entities. Entities and relations are in graph order;
// unknown names are skipped. Depth 0 selects what Open does. A depth below
// 0 or above MaxDepth returns a *DepthError.
func (g *Graph) Neighbours(names []string, depth int) (Selection, error) {
	if depth < 0 || depth > MaxDepth {
		return Selection{}, &DepthError{depth}
	}
	ents, _ := g.reach(names, depth, 0)
	reached := make([]string, len(ents))
	for i, e := range ents {
		reached[i] = e.Name
	}
	return g.Open(reached), nil
}

// reach returns the named entities that exist and those within depth
// relations of them (either direction), breadth first, at most limit in all
// (0: no limit); truncated reports that the limit cut it short.
func (g *Graph) reach(names []string, depth, limit int) (ents []*Entity, truncated bool) {
	seen := make(map[*Entity]bool, len(names))
	var frontier []*Entity
	add := func(e *Entity) {
		if e == nil || seen[e] {
			return
		}
		if limit > 0 && len(ents) >= limit {
			truncated = true
			return
		}
		seen[e] = true
		ents = append(ents, e)
		frontier = append(frontier, e)
	}
	for _, n := range names {
		add(g.byName[n])
	}
	for range depth {
		current := frontier
		frontier = nil
		for _, e := range current {
			// Relations in graph order, so a limit keeps the oldest.
			for _, r := range g.touching([]*Entity{e}) {
				add(g.byName[r.From])
				add(g.byName[r.To])
			}
		}
	}
	return ents, truncated
}
