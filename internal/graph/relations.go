// Relations: the type, their loading, their end lists on entities and the loose lists of names without one.

package graph

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// Relation is a directed edge From → To. The exact triple is its identity.
type Relation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`

	// Extra: see Entity.Extra.
	Extra []byte `json:"-"`

	// Created is when the relation was first written; zero is unknown.
	Created Time `json:"-"`

	seq uint64
}

type relationKey struct{ from, to, relationType string }

func (r *Relation) key() relationKey { return relationKey{r.From, r.To, r.RelationType} }

// LoadRelation adds a relation read from storage. A triple already present is
// dropped, and LoadRelation reports it (between BeginLoad and EndLoad,
// EndLoad does). Relations whose ends do not exist are kept: the file is
// the truth, and deleting the entity later removes them. It returns the
// graph's relation with r's triple. The graph keeps none of r's strings
// for the ends: an end names an entity by the entity's own Name, or by a
// copy where no entity has that name, so r may point into a buffer the
// caller reuses.
func (g *Graph) LoadRelation(r Relation) (gr *Relation, duplicate bool) {
	if g.loading {
		h := relationHash(r.key())
		g.loadHashes = append(g.loadHashes, h)
		return g.insertRelation(r, h), false
	}
	old, h := g.relSet.find(r.key())
	if old != nil {
		return old, true
	}
	return g.insertRelation(r, h), false
}

// insertRelation adds r, which the graph does not hold (while loading:
// which EndLoad finds out); h is the hash of its triple
// (relationSet.find).
func (g *Graph) insertRelation(r Relation, h uint64) *Relation {
	g.version++
	g.nextSeq++
	nr := &Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created, seq: g.nextSeq}
	g.relations = append(g.relations, nr)
	if g.loading {
		return nr // in relSet and its ends' lists at EndLoad
	}
	g.relSet.putHashed(nr, h)
	var from, to *endLists
	nr.From, from = g.end(r.From)
	nr.To, to = g.end(r.To)
	from.out = append(from.out, nr)
	to.in = append(to.in, nr)
	g.relationChanged(nr)
	return nr
}

// BeginLoad and EndLoad bracket the load of a memory into a new graph.
// Between them LoadRelation leaves a relation out of the set that finds
// relations by triple and out of its ends' lists, and EndLoad puts every
// relation loaded since into them at once: the set sorted by hash, which
// finds the repeated triples, then the lists from and the lists to on a
// goroutine each. Finding each end's entity by its name, and each triple
// among those loaded before, is most of what loading a relation costs,
// and the rest of a load runs in the file's order on one goroutine.
// Between the two only LoadEntity and LoadRelation may be called, and the
// strings a loaded relation names its ends with must stay as they are
// until EndLoad (at other times LoadRelation keeps none of them).
func (g *Graph) BeginLoad() {
	g.loading, g.loadedFrom = true, len(g.relations)
}

// Repeat is a relation loaded between BeginLoad and EndLoad whose triple
// one loaded before it has: EndLoad drops it.
type Repeat struct {
	Index    int // among the relations loaded since BeginLoad, from 0
	Relation Relation
}

// EndLoad ends what BeginLoad began, and returns the relations it dropped
// as repeats, in the order they were loaded.
func (g *Graph) EndLoad() []Repeat {
	if !g.loading {
		return nil
	}
	g.loading = false
	var repeats []Repeat
	if dup := g.relSet.addLoaded(g.relations[g.loadedFrom:], g.loadHashes); len(dup) > 0 {
		loaded := g.relations[g.loadedFrom:]
		dropped := make(map[*Relation]bool, len(dup))
		for _, r := range dup {
			i, _ := slices.BinarySearchFunc(loaded, r.seq, func(r *Relation, seq uint64) int { return cmp.Compare(r.seq, seq) })
			repeats = append(repeats, Repeat{Index: i, Relation: r.clone()})
			dropped[r] = true
		}
		g.relations = withoutDead(g.relations, dropped)
	}
	g.loadHashes = nil
	loaded := g.relations[g.loadedFrom:]
	from := func(r *Relation) *string { return &r.From }
	out := func(l *endLists) *[]*Relation { return &l.out }
	to := func(r *Relation) *string { return &r.To }
	in := func(l *endLists) *[]*Relation { return &l.in }
	var wg sync.WaitGroup
	var looseFrom, looseTo []*Relation
	wg.Go(func() { looseFrom = g.linkEnds(loaded, from, out) })
	wg.Go(func() { looseTo = g.linkEnds(loaded, to, in) })
	wg.Wait()
	g.linkLoose(looseFrom, from, out)
	g.linkLoose(looseTo, to, in)
	for _, r := range loaded {
		g.relationChanged(r)
	}
	return repeats
}

// linkEnds puts each relation of rels into the list (list) of the entity
// its end (end) names, and names that end by the entity's own Name. It
// returns, in order, the relations whose end no entity has. It only reads
// the graph's tables, so the two ends can be linked side by side.
func (g *Graph) linkEnds(rels []*Relation, end func(*Relation) *string, list func(*endLists) *[]*Relation) (loose []*Relation) {
	for _, r := range rels {
		e := g.byName[*end(r)]
		if e == nil {
			loose = append(loose, r)
			continue
		}
		*end(r) = e.Name
		l := list(&e.rels)
		if *l == nil {
			// Room for a few at once: growing a list copies it, and its
			// old array is cold by the time the next relation comes.
			*l = make([]*Relation, 0, firstEnds)
		}
		*l = append(*l, r)
	}
	return loose
}

// firstEnds is the room a load gives an entity's list of relations from
// or to it when it links the first.
const firstEnds = 2

// linkLoose puts each relation of rels into the loose list (list) of the
// name its end (end) holds, which no entity has.
func (g *Graph) linkLoose(rels []*Relation, end func(*Relation) *string, list func(*endLists) *[]*Relation) {
	for _, r := range rels {
		var ls *endLists
		*end(r), ls = g.end(*end(r))
		l := list(ls)
		*l = append(*l, r)
	}
}

// removeRelations drops the marked relations from every index.
func (g *Graph) removeRelations(dead map[*Relation]bool) {
	if len(dead) == 0 {
		return
	}
	g.version++
	g.relations = withoutDead(g.relations, dead)
	for r := range dead {
		g.relationChanged(r)
		g.relSet.del(r.key())
		if l := g.ends(r.From); l != nil {
			l.out = dropRelation(l.out, r)
			g.tidy(r.From)
		}
		if l := g.ends(r.To); l != nil {
			l.in = dropRelation(l.in, r)
			g.tidy(r.To)
		}
	}
}

// endLists are the relations from (out) and to (in) one name, each in
// graph order.
type endLists struct{ out, in []*Relation }

// ends returns the lists of the relations from and to name: its entity's,
// or the loose ones of a name without an entity; nil when it has none.
func (g *Graph) ends(name string) *endLists {
	if e := g.byName[name]; e != nil {
		return &e.rels
	}
	return g.loose[name]
}

// end returns what a new relation holds for an end naming name: the name
// as its entity holds it, so the relation costs no copy of it, or a copy
// for a name no entity has; and the lists the relation joins, the
// entity's or the loose lists of the name, made when it has none.
func (g *Graph) end(name string) (string, *endLists) {
	if e := g.byName[name]; e != nil {
		return e.Name, &e.rels
	}
	name = strings.Clone(name)
	l := g.loose[name]
	if l == nil {
		l = &endLists{}
		g.loose[name] = l
	}
	return name, l
}

// tidy forgets the loose lists of name once they are empty.
func (g *Graph) tidy(name string) {
	if l := g.loose[name]; l != nil && len(l.out) == 0 && len(l.in) == 0 {
		delete(g.loose, name)
	}
}

// outOf returns the relations from name, in graph order.
func (g *Graph) outOf(name string) []*Relation {
	if l := g.ends(name); l != nil {
		return l.out
	}
	return nil
}

// inOf returns the relations to name, in graph order.
func (g *Graph) inOf(name string) []*Relation {
	if l := g.ends(name); l != nil {
		return l.in
	}
	return nil
}

// name makes e the entity of its name. The relations that waited for an
// entity of that name (loose lists) are now its own.
func (g *Graph) name(e *Entity) {
	g.byName[e.Name] = e
	if l := g.loose[e.Name]; l != nil {
		e.rels.out = mergeBySeq(e.rels.out, l.out)
		e.rels.in = mergeBySeq(e.rels.in, l.in)
		delete(g.loose, e.Name)
	}
}

func dropRelation(list []*Relation, r *Relation) []*Relation {
	if i := slices.Index(list, r); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

func (r *Relation) clone() Relation {
	return Relation{From: r.From, To: r.To, RelationType: r.RelationType, Extra: r.Extra, Created: r.Created}
}

// HasRelation reports whether the graph holds the relation r (its exact
// triple).
func (g *Graph) HasRelation(r Relation) bool { return g.relSet.get(r.key()) != nil }
