package answer

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
)

// Cursors: a position in an answer and the digests that tell whether it
// still means what it meant (see the package doc).

// cursor is a position in an answer's sequence: item k, and for an entity
// split across parts the first observation (in shown order) still to show.
type cursor struct {
	request uint64
	k, obs  int
	prefix  uint64 // digest of the sequence up to and including item k
	// split, when obs > 0, digests the observations of the entity at k as
	// shown (splitDigest): obs counts from the start of that list, so any
	// change to it would make the next part skip or repeat one.
	split uint64
}

// cursorVersion 2 added split; a cursor of version 1 is refused, saying
// it is an older server's.
const cursorVersion = 2

func (c cursor) String() string {
	b := []byte{cursorVersion}
	b = binary.BigEndian.AppendUint64(b, c.request)
	b = binary.AppendUvarint(b, uint64(c.k))
	b = binary.AppendUvarint(b, uint64(c.obs))
	b = binary.BigEndian.AppendUint64(b, c.prefix)
	b = binary.BigEndian.AppendUint64(b, c.split)
	return base64.RawURLEncoding.EncodeToString(b)
}

func parseCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && len(b) > 0 && b[0] == 1 {
		return cursor{}, fmt.Errorf("%w: an older version of this server gave it; leave cursor out to start over", ErrCursor)
	}
	if err != nil || len(b) < 1+8+1+1+8+8 || b[0] != cursorVersion {
		return cursor{}, fmt.Errorf("%w: it is not one this server gave", ErrCursor)
	}
	c := cursor{request: binary.BigEndian.Uint64(b[1:])}
	rest := b[9:]
	k, n := binary.Uvarint(rest)
	if n <= 0 {
		return cursor{}, fmt.Errorf("%w: it is not one this server gave", ErrCursor)
	}
	rest = rest[n:]
	obs, n := binary.Uvarint(rest)
	if n <= 0 || len(rest[n:]) != 16 || k > 1<<31 || obs > 1<<31 {
		return cursor{}, fmt.Errorf("%w: it is not one this server gave", ErrCursor)
	}
	c.k, c.obs = int(k), int(obs)
	c.prefix = binary.BigEndian.Uint64(rest[n:])
	c.split = binary.BigEndian.Uint64(rest[n+8:])
	return c, nil
}

func digest(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// FNV-1a, 64 bits, as hash/fnv computes it, kept as a value so that a
// digest can go on from where an earlier one stopped: a page copied from
// the graph (Pick) digests the answer's items before it while the graph is
// held, and goes on over its own after.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// digestItems goes on with digest h over the identities of items.
func (a *Answer) digestItems(h uint64, items []item) uint64 {
	for _, it := range items {
		if it.ent >= 0 {
			h = fnvString(fnvByte(h, 'e'), a.Entities[it.ent].Entity.Name)
		} else {
			r := a.Relations[it.rel]
			h = fnvString(fnvByte(h, 'r'), r.From)
			h = fnvString(fnvByte(h, 0), r.To)
			h = fnvString(fnvByte(h, 0), r.RelationType)
		}
		h = fnvByte(h, 0)
	}
	return h
}

// prefixDigest digests the identities of the whole answer's sequence up
// to and including seq[k]; for a copied run (Pick), the items before the
// run and then seq[:k+1].
func (a *Answer) prefixDigest(seq []item, k int) uint64 {
	h := uint64(fnvOffset)
	if a.run != nil {
		h = a.run.prefix
	}
	return a.digestItems(h, seq[:k+1])
}

// splitDigest digests entity i's observations in the order they are shown:
// their number and each one.
func (a *Answer) splitDigest(i int) uint64 {
	h := fnv.New64a()
	obs := a.shown(i)
	h.Write(binary.AppendUvarint(nil, uint64(len(obs))))
	for _, o := range obs {
		h.Write(binary.AppendUvarint(nil, uint64(len(o))))
		h.Write([]byte(o))
	}
	return h.Sum64()
}

// start finds where cursor text points in seq, the whole answer's
// sequence; before is the digest of the items before it (prefixDigest
// goes on from it).
func (a *Answer) start(seq []item, text string) (k, obs int, before uint64, err error) {
	if text == "" {
		return 0, 0, fnvOffset, nil
	}
	c, err := parseCursor(text)
	if err != nil {
		return 0, 0, 0, err
	}
	if c.request != digest(a.Request) {
		return 0, 0, 0, fmt.Errorf("%w: it belongs to a call with other arguments; repeat that call's arguments with it, or leave cursor out to start over", ErrCursor)
	}
	changed := fmt.Errorf("%w: the memory changed since this cursor was given, so the rest of that answer is gone; call %s again without cursor to start over", ErrCursor, a.Tool)
	if c.k >= len(seq) {
		return 0, 0, 0, changed
	}
	before = a.digestItems(fnvOffset, seq[:c.k])
	if a.digestItems(before, seq[c.k:c.k+1]) != c.prefix {
		return 0, 0, 0, changed
	}
	if it := seq[c.k]; c.obs > 0 && (it.ent < 0 || c.obs >= a.obsCount(it) || a.splitDigest(int(it.ent)) != c.split) {
		return 0, 0, 0, changed
	}
	return c.k, c.obs, before, nil
}
