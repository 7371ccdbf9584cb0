package graph

import (
	"encoding/binary"
	"slices"
)

// trigramList is the trigram index's list of the ids posted under one
// trigram, ascending, packed: in blocks of trigramBlock ids, the first id of
// each block in skips and the others as uvarint differences from the id
// before them. A common trigram's ids are close together and take a byte
// each instead of four; the skips let an intersection jump to the one block
// that may hold an id instead of reading the list from its start.
type trigramList struct {
	data  []byte
	skips []trigramSkip
	last  uint32 // the last id added
	n     uint32 // ids in the list
}

// trigramSkip is where a block starts: its first id, and where its
// differences start in data.
type trigramSkip struct{ first, at uint32 }

const trigramBlock = 64

// add appends id, which must be greater than every id in l; an id equal to
// the last one is already there. expect is as reserve takes it.
func (l *trigramList) add(id uint32, expect float64) {
	switch {
	case l.n > 0 && l.last == id:
		return
	case l.n%trigramBlock == 0:
		l.skips = append(reserve(l.skips, 1, expect), trigramSkip{first: id, at: uint32(len(l.data))})
	default:
		l.data = reserve(l.data, binary.MaxVarintLen32, expect)
		l.data = binary.AppendUvarint(l.data, uint64(id-l.last))
	}
	l.last = id
	l.n++
}

// block decodes block b into buf and returns its ids.
func (l *trigramList) block(b int, buf *[trigramBlock]uint32) []uint32 {
	end := len(l.data)
	if b+1 < len(l.skips) {
		end = int(l.skips[b+1].at)
	}
	id := l.skips[b].first
	buf[0] = id
	n := 1
	for i := int(l.skips[b].at); i < end; n++ {
		d, w := binary.Uvarint(l.data[i:end])
		i += w
		id += uint32(d)
		buf[n] = id
	}
	return buf[:n]
}

// ids returns the list's ids.
func (l *trigramList) ids() []uint32 {
	out := make([]uint32, 0, l.n)
	var buf [trigramBlock]uint32
	for b := range l.skips {
		out = append(out, l.block(b, &buf)...)
	}
	return out
}

// intersect keeps the ids of a (ascending) that are in l, in place. For
// each id it finds the only block that may hold it among the skips after
// the last one used, so a short a costs a few blocks of l, not all of it.
func (l *trigramList) intersect(a []uint32) []uint32 {
	out := a[:0]
	var buf [trigramBlock]uint32
	var ids []uint32
	cur := -1 // the block decoded into ids
	from := 0
	for _, v := range a {
		// The block of v is the last one starting at or before v.
		k, found := slices.BinarySearchFunc(l.skips[from:], v, func(s trigramSkip, v uint32) int { return cmpUint32(s.first, v) })
		b := from + k
		if !found {
			b--
		}
		if b < 0 {
			continue
		}
		from = b
		if b != cur {
			ids, cur = l.block(b, &buf), b
		}
		if _, ok := slices.BinarySearch(ids, v); ok {
			out = append(out, v)
		}
	}
	return out
}

func cmpUint32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// join appends o's ids, which all follow l's, to l.
func (l *trigramList) join(o *trigramList) {
	var buf [trigramBlock]uint32
	for b := range o.skips {
		for _, id := range o.block(b, &buf) {
			l.add(id, 0)
		}
	}
}

// reserve returns s with room for need more items. expect says how far
// an index being built a step at a time in the background has got: the
// entities it will hold over those it holds so far; it is 0 for any other
// index, whose slices grow as append grows them. A slice of an index
// being built (a posting list, the ids, the terms) grows to what it will
// hold at the end of the build if it goes on as it did so far, and by an
// eighth at least, twice at most. append grows a big slice by a quarter
// at a time: at a million entities the build allocated five times its
// lists' final size in garbage, and each collection that brought marked
// the whole graph again while writes waited (eight collections in a
// build).
func reserve[E any](s []E, need int, expect float64) []E {
	if cap(s)-len(s) >= need || expect == 0 {
		return s
	}
	n := len(s)
	size := min(max(int(float64(n)*expect*1.05), n+n/8), 2*n) + need
	return append(make([]E, 0, max(size, 8)), s...)
}

// clip gives back the room appending left in l.
func (l *trigramList) clip() {
	if cap(l.data)-len(l.data) > 8 {
		l.data = slices.Clip(slices.Clone(l.data))
	}
	if cap(l.skips)-len(l.skips) > 1 {
		l.skips = slices.Clip(slices.Clone(l.skips))
	}
}
