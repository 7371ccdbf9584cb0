package graph

import (
	"cmp"
	"hash/maphash"
	"math/bits"
	"slices"
)

// relationSet finds a relation by its triple. It keys relations by a 64-bit
// hash of the triple rather than by the triple itself, so an entry is 16
// bytes instead of 56 (three string headers and a pointer): at 2,000,000
// relations that is 80 MB less before the map's own overhead, and hashing
// one key is cheaper than comparing three strings in every probe. Two
// triples with the same hash (never seen in practice, but possible) are told
// apart: the second one lives in overflow, keyed by the triple.
//
// The relations of a big load are not put one by one: a load finds its
// repeated triples once it is over (addLoaded), by sorting the loaded
// relations by hash, and keeps them so sorted (loaded). Put one by one, each
// would have cost a cache miss or two in a map of millions, on the
// goroutine that loads the file in order. A key is in one of the three
// places at most.
type relationSet struct {
	loaded   sortedRelations
	byHash   map[uint64]*Relation
	overflow map[relationKey]*Relation
}

var relationSeeds = [3]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()}

func newRelationSet() relationSet {
	return relationSet{byHash: make(map[uint64]*Relation)}
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
	return s.findHashed(k, relationHash(k))
}

// findHashed is find, given the hash of k.
func (s *relationSet) findHashed(k relationKey, h uint64) (*Relation, uint64) {
	if r := s.byHash[h]; r != nil && r.key() == k {
		return r, h
	}
	if e := s.loaded.find(h, k); e != nil {
		return e.r, h
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
	if e := s.loaded.find(h, k); e != nil {
		e.r = r
		return
	}
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
	if e := s.loaded.find(h, k); e != nil {
		e.r = nil
		s.loaded.live--
		if s.loaded.live < len(s.loaded.entries)/4 {
			s.unload()
		}
		return
	}
	if cur := s.byHash[h]; cur != nil && cur.key() == k {
		delete(s.byHash, h)
	}
	if len(s.overflow) > 0 {
		delete(s.overflow, k)
	}
}

// unload moves the relations of a load kept sorted into byHash, once
// deletions left most of its entries empty: the entries of a load take
// 16 bytes each for as long as they are kept.
func (s *relationSet) unload() {
	loaded := s.loaded
	s.loaded = sortedRelations{}
	for _, e := range loaded.entries {
		if e.r != nil {
			s.putHashed(e.r, e.h)
		}
	}
}

// len reports how many relations the set holds.
func (s *relationSet) len() int { return s.loaded.live + len(s.byHash) + len(s.overflow) }

// addLoaded adds the relations rels, whose triples' hashes are hashes, in
// the order they were loaded, and returns those whose triple an earlier one
// (of rels or of the set) has: they are left out. A set that holds nothing
// yet keeps a big load sorted (sortedRelations); the rest are put one by
// one.
func (s *relationSet) addLoaded(rels []*Relation, hashes []uint64) (repeats []*Relation) {
	if s.len() > 0 || s.loaded.entries != nil || len(rels) < sortedMin {
		for i, r := range rels {
			if old, _ := s.findHashed(r.key(), hashes[i]); old != nil {
				repeats = append(repeats, r)
				continue
			}
			s.putHashed(r, hashes[i])
		}
		return repeats
	}
	return s.loaded.build(rels, hashes)
}

// sortedMin is the size of a load from which addLoaded keeps it sorted; a
// variable so tests can lower it.
var sortedMin = 1 << 12

// sortedRelations holds relations sorted by the hash of their triple,
// found through a table of where each bucket of hashes (their top bits)
// starts. A relation deleted leaves its entry, with no relation.
type sortedRelations struct {
	entries []relationEntry
	starts  []uint32 // starts[b]: the first entry of bucket b; one more at the end
	shift   uint     // a hash's bucket is h >> shift
	live    int      // entries that hold a relation
}

// relationEntry is a relation and the hash of its triple.
type relationEntry struct {
	h uint64
	r *Relation // nil: deleted
}

// find returns the entry of the triple k, whose hash is h, or nil.
func (s *sortedRelations) find(h uint64, k relationKey) *relationEntry {
	if s.live == 0 {
		return nil
	}
	b := h >> s.shift
	for i := s.starts[b]; i < s.starts[b+1]; i++ {
		e := &s.entries[i]
		if e.h > h {
			break
		}
		if e.h == h && e.r != nil && e.r.key() == k {
			return e
		}
	}
	return nil
}

// build makes s hold rels, whose hashes are hashes, in the order they
// were loaded, but for those whose triple one loaded before has: it returns
// them, in order. A bucket holds about two relations. The entries are
// written to their buckets in rels' order, then sorted by hash within each
// bucket, which keeps that order among equal hashes; the relations of a
// triple are next to each other then, the first first.
func (s *sortedRelations) build(rels []*Relation, hashes []uint64) (repeats []*Relation) {
	nbits := max(1, bits.Len(uint(len(rels)))-1)
	s.shift = uint(64 - nbits)
	s.starts = make([]uint32, 1<<nbits+1)
	for _, h := range hashes {
		s.starts[h>>s.shift+1]++
	}
	for b := 1; b < len(s.starts); b++ {
		s.starts[b] += s.starts[b-1]
	}
	next := slices.Clone(s.starts[:1<<nbits])
	s.entries, s.live = make([]relationEntry, len(rels)), len(rels)
	for i, h := range hashes {
		b := h >> s.shift
		s.entries[next[b]] = relationEntry{h, rels[i]}
		next[b]++
	}
	for b := range len(s.starts) - 1 {
		bucket := s.entries[s.starts[b]:s.starts[b+1]]
		// Insertion sort, stable: a bucket holds a few entries.
		for i := 1; i < len(bucket); i++ {
			for j := i; j > 0 && bucket[j].h < bucket[j-1].h; j-- {
				bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
			}
		}
		for i := 1; i < len(bucket); i++ {
			e := &bucket[i]
			for j := i - 1; j >= 0 && bucket[j].h == e.h; j-- {
				if o := bucket[j].r; o != nil && o.key() == e.r.key() {
					repeats = append(repeats, e.r)
					e.r = nil
					s.live--
					break
				}
			}
		}
	}
	slices.SortFunc(repeats, func(a, b *Relation) int { return cmp.Compare(a.seq, b.seq) })
	return repeats
}
