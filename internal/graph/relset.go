package graph

import (
	"hash/maphash"
	"math/bits"
)

// relationSet finds a relation by its triple. It keys relations by a 64-bit
// hash of the triple rather than by the triple itself, so an entry is 16
// bytes instead of 56 (three string headers and a pointer): at 2,000,000
// relations that is 80 MB less before the map's own overhead, and hashing
// one key is cheaper than comparing three strings in every probe. Two
// triples with the same hash (never seen in practice, but possible) are told
// apart: the second one lives in overflow, keyed by the triple. A key is in
// one of the two maps at most.
type relationSet struct {
	byHash   map[uint64]*Relation
	overflow map[relationKey]*Relation
}

var relationSeeds = [3]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()}

func newRelationSet(size int) relationSet {
	return relationSet{byHash: make(map[uint64]*Relation, size)}
}

// relationHash is relationKey.hash; tests make every triple collide.
var relationHash = relationKey.hash

func (k relationKey) hash() uint64 {
	return maphash.String(relationSeeds[0], k.from) ^
		bits.RotateLeft64(maphash.String(relationSeeds[1], k.to), 21) ^
		bits.RotateLeft64(maphash.String(relationSeeds[2], k.relationType), 42)
}

// get returns the relation with the triple k, or nil.
func (s *relationSet) get(k relationKey) *Relation {
	r, _ := s.find(k)
	return r
}

// find returns the relation with the triple k, or nil, and the triple's
// hash: a relation of that triple put next needs no hash of its own
// (putHashed).
func (s *relationSet) find(k relationKey) (*Relation, uint64) {
	h := relationHash(k)
	if r := s.byHash[h]; r != nil && r.key() == k {
		return r, h
	}
	if len(s.overflow) > 0 {
		return s.overflow[k], h
	}
	return nil, h
}

// put makes r the relation of its triple.
func (s *relationSet) put(r *Relation) {
	s.putHashed(r, relationHash(r.key()))
}

// putHashed is put, given the hash of r's triple.
func (s *relationSet) putHashed(r *Relation, h uint64) {
	k := r.key()
	if cur := s.byHash[h]; cur == nil || cur.key() == k {
		s.byHash[h] = r
		if len(s.overflow) > 0 {
			delete(s.overflow, k)
		}
		return
	}
	if s.overflow == nil {
		s.overflow = make(map[relationKey]*Relation)
	}
	s.overflow[k] = r
}

// del forgets the relation of the triple k, if any.
func (s *relationSet) del(k relationKey) {
	h := relationHash(k)
	if cur := s.byHash[h]; cur != nil && cur.key() == k {
		delete(s.byHash, h)
	}
	if len(s.overflow) > 0 {
		delete(s.overflow, k)
	}
}

// len reports how many relations the set holds.
func (s *relationSet) len() int { return len(s.byHash) + len(s.overflow) }
