package graph

// What a caller that ranks the entities of an answer itself (search by
// meaning, internal/meaning) needs to give them as SearchRanked would.

// Touching returns the relations with at least one end among ents, in the
// order SearchRanked gives its Relations.
func (g *Graph) Touching(ents []*Entity) []*Relation { return g.touching(ents) }

// CompareOrder orders two entities of one graph as the graph holds them
// (by creation), for ties.
func CompareOrder(a, b *Entity) int { return bySeq(a, b) }
