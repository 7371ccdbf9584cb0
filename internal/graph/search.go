package graph

import (
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxQueryLength is the longest search_nodes query accepted, in characters.
const MaxQueryLength = 2048

// searchText is an entity's text folded for matching, in the two forms Fold
// and foldCase produce. The forms are one string when they agree, as they
// do for all ASCII text, and a text that folds to itself is not copied.
type searchText struct {
	name, entityType folded
	observations     []folded
}

// folded is a text in both folded forms.
type folded struct{ nfkc, plain string }

func newFolded(s string) folded {
	if f, ok := simpleFold(s); ok {
		return folded{f, f}
	}
	return folded{Fold(s), foldCase(s)}
}

func (f folded) contains(q folded) bool {
	return strings.Contains(f.nfkc, q.nfkc) || (f.plain != f.nfkc || q.plain != q.nfkc) && strings.Contains(f.plain, q.plain)
}

// Match ranks, best first. Ties keep graph order.
const (
	matchName = iota
	matchType
	matchObservation
	matchAllWords
	noMatch
)

// Fold maps s to the form search compares: compatibility forms unified
// (NFKC) and case folded, so "ＰＹＴＨＯＮ", "Python" and "python" are equal,
// as are "ПРИВЕТ" and "привет".
//
// Search also compares the case-folded text without NFKC (foldCase), so
// that every entity the reference's plain lower-case substring rule finds is
// found: NFKC composes "e" and a following combining accent into "é", after
// which the query "cafe" no longer occurs in "cafe\u0301".
func Fold(s string) string {
	if f, ok := simpleFold(s); ok {
		return f
	}
	// Folding can produce text that is no longer NFKC (and NFKC can produce
	// text that folds further), so normalise on both sides.
	return norm.NFKC.String(foldCase(norm.NFKC.String(s)))
}

// foldCase case-folds s. Cherokee is mapped to capitals first: Unicode
// folds Cherokee to its capitals, but cases.Fold swaps the two cases, so
// without this "Ꭰ" and "ꭰ" would never meet.
func foldCase(s string) string {
	return cases.Fold().String(strings.Map(cherokeeCapital, s))
}

func cherokeeCapital(r rune) rune {
	switch {
	case 0xAB70 <= r && r <= 0xABBF: // Cherokee Small Letter A … YA
		return r - 0xAB70 + 0x13A0
	case 0x13F8 <= r && r <= 0x13FD: // Cherokee Small Letter YE … MV
		return r - 8
	}
	return r
}

// simpleFold folds s quickly when every rune of it is one that NFKC leaves
// alone and whose case folding is its simple lower-case mapping: ASCII,
// Latin-1 letters but ß, basic Cyrillic, kana, CJK ideographs and CJK
// brackets, which is nearly all text users store. It returns s itself when
// nothing changes. ok is false when s needs the full Fold.
func simpleFold(s string) (folded string, ok bool) {
	b, changed, ok := appendSimpleFold(nil, s, 0)
	switch {
	case !ok:
		return "", false
	case !changed:
		return s, true
	}
	return string(b), true
}

// appendSimpleFold appends s folded by simpleFold's rule to b, making room
// for at least reserve bytes when it first appends. When the fold is s
// itself (changed false) or simpleFold cannot fold s (ok false), b is
// returned as it was.
func appendSimpleFold(b []byte, s string, reserve int) (_ []byte, changed, ok bool) {
	start := len(b)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				if !changed {
					changed = true
					b = append(slices.Grow(b, max(len(s), reserve)), s[:i]...)
				}
				c += 'a' - 'A'
			}
			if changed {
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		l, ok := simpleLower(r)
		if !ok {
			return b[:start], false, false
		}
		if l != r {
			if !changed {
				changed = true
				b = append(slices.Grow(b, max(len(s), reserve)), s[:i]...)
			}
			b = utf8.AppendRune(b, l)
		} else if changed {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b, changed, true
}

// simpleLower returns the lower case of r (unicode.ToLower) when r is one
// of simpleFold's runes; ok is false for the others.
func simpleLower(r rune) (lower rune, ok bool) {
	switch {
	case 0xC0 <= r && r <= 0xDE:
		if r == 0xD7 { // ×
			return r, true
		}
		return r + 0x20, true
	case r == 0xDF: // ß folds to "ss"
		return r, false
	case 0xE0 <= r && r <= 0xFF:
		return r, true
	case 0x400 <= r && r <= 0x40F: // Cyrillic Ѐ … Џ
		return r + 0x50, true
	case 0x410 <= r && r <= 0x42F: // А … Я
		return r + 0x20, true
	case 0x430 <= r && r <= 0x45F, // а … џ
		0x3001 <= r && r <= 0x3011, // CJK punctuation and brackets (not U+3000, which NFKC makes a space)
		0x3041 <= r && r <= 0x3096, // hiragana
		0x30A1 <= r && r <= 0x30FE, // katakana
		0x4E00 <= r && r <= 0x9FFF: // CJK unified ideographs
		return r, true
	}
	return r, false
}

// searchText folds e's text. It is folded again on every call, not kept:
// kept for every entity, the folded text cost more memory than the file
// (the texts with a capital letter copied, 32 bytes a text), and folding is
// a scan of the text, like the match that follows it. Search and the
// trigram index fold a text at a time on the stack instead (Entity.rank,
// postEntity); the word index and ranking fold whole entities here.
func (e *Entity) searchText() *searchText {
	n := len(e.Observations)
	var st *searchText
	if n <= inlineObservations {
		// One allocation for the common entity.
		x := new(struct {
			searchText
			obs [inlineObservations]folded
		})
		st = &x.searchText
		st.observations = x.obs[:n:n]
	} else {
		st = &searchText{observations: make([]folded, n)}
	}
	e.foldInto(st, &folder{})
	return st
}

// foldInto folds e's texts into st, whose observations have e's length,
// with f, whose buffer the folded texts that change go to.
func (e *Entity) foldInto(st *searchText, f *folder) {
	f.left = len(e.Name) + len(e.EntityType)
	for _, o := range e.Observations {
		f.left += len(o)
	}
	f.fold(&st.name, e.Name)
	f.fold(&st.entityType, e.EntityType)
	for i, o := range e.Observations {
		f.fold(&st.observations[i], o)
	}
}

// foldScratch folds one entity's texts after another into memory it
// keeps, for a caller that is done with an entity's folded texts before
// it folds the next: an index build folds every entity, and the
// neighbours of every entry of a log, and a fresh searchText each time
// was most of what a build allocated.
type foldScratch struct {
	st  searchText
	obs []folded
	f   folder
}

// text returns e's folded texts, valid until the next call.
func (s *foldScratch) text(e *Entity) *searchText {
	n := len(e.Observations)
	s.obs = slices.Grow(s.obs[:0], n)[:n]
	s.st = searchText{observations: s.obs}
	s.f.buf = s.f.buf[:0]
	e.foldInto(&s.st, &s.f)
	return &s.st
}

// inlineObservations is how many observations a searchText holds without a
// second allocation.
const inlineObservations = 6

// folder folds the texts of one entity into one buffer, so that the texts
// that change cost one allocation between them. The folded texts point
// into the buffer: appending writes only past them, and a buffer that had
// to grow leaves the old one as it was.
type folder struct {
	buf  []byte
	left int // bytes of text not yet folded: about what buf still needs
}

// foldText returns s folded (Fold), in x's buffer when it changes.
func (x *folder) foldText(s string) string {
	var f folded
	x.left = len(s)
	x.fold(&f, s)
	return f.nfkc
}

func (x *folder) fold(f *folded, s string) {
	lo := len(x.buf)
	b, changed, ok := appendSimpleFold(x.buf, s, x.left)
	x.left -= len(s)
	switch {
	case !ok:
		*f = folded{Fold(s), foldCase(s)}
	case !changed:
		*f = folded{s, s}
	default:
		x.buf = b
		t := unsafe.String(&b[lo], len(b)-lo)
		*f = folded{t, t}
	}
}

// rank tells how well the query q (and its words) matches.
func (st *searchText) rank(q folded, words []folded) int {
	switch {
	case st.name.contains(q):
		return matchName
	case st.entityType.contains(q):
		return matchType
	case slices.ContainsFunc(st.observations, func(o folded) bool { return o.contains(q) }):
		return matchObservation
	case len(words) > 1 && st.hasAllWords(words):
		return matchAllWords
	}
	return noMatch
}

// rank is e.searchText().rank(q, words) without the searchText: it folds
// one text at a time into a buffer on the stack, and stops at the first
// that holds the query.
func (e *Entity) rank(q folded, words []folded) int {
	var scratch [256]byte
	switch {
	case foldInto(scratch[:0], e.Name).contains(q):
		return matchName
	case foldInto(scratch[:0], e.EntityType).contains(q):
		return matchType
	}
	for _, o := range e.Observations {
		if foldInto(scratch[:0], o).contains(q) {
			return matchObservation
		}
	}
	if len(words) > 1 && e.searchText().hasAllWords(words) {
		return matchAllWords
	}
	return noMatch
}

// foldInto is newFolded(s), folded into buf when simpleFold can fold it: the
// result is valid until buf is written again.
func foldInto(buf []byte, s string) folded {
	b, changed, ok := appendSimpleFold(buf, s, 0)
	switch {
	case !ok:
		return newFolded(s)
	case !changed:
		return folded{s, s}
	}
	t := unsafe.String(&b[0], len(b))
	return folded{t, t}
}

func (st *searchText) hasAllWords(words []folded) bool {
	for _, w := range words {
		if !st.name.contains(w) && !st.entityType.contains(w) &&
			!slices.ContainsFunc(st.observations, func(o folded) bool { return o.contains(w) }) {
			return false
		}
	}
	return true
}

// Search selects what search_nodes returns: the entities that match query,
// best first, and every relation with at least one end among them.
//
// An entity matches when the whole query occurs in its name, type or an
// observation, compared after Fold; or, for a query of several words, when
// every word occurs somewhere in those fields. Name matches come first, then
// type, then observation, then all-words matches; ties in graph order.
// SearchRanked adds the closest partial matches after these.
func (g *Graph) Search(query string) Selection {
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	ents, _ := g.search(query)
	return Selection{ents, g.touching(ents)}
}

// search returns the entities matching query, best first, and how many of
// them hold the whole query in one field (the others hold each of its
// words); it runs under searchMu.
func (g *Graph) search(query string) (ents []*Entity, whole int) {
	q := newFolded(query)
	var words []folded
	for _, w := range strings.Fields(query) {
		words = append(words, newFolded(w))
	}
	rank := func(e *Entity) int { return e.rank(q, words) }
	candidates := q
	if hasPrefixWord(query) {
		// Prefix words (prefix.go): candidates by what precedes the stars.
		qw := queryWords(query)
		words = words[:0]
		for _, w := range qw {
			words = append(words, w.f)
		}
		rank = func(e *Entity) int { return e.searchText().rankPrefix(q, qw) }
		if len(qw) == 1 { // what holds "auth*" holds "auth"
			candidates = qw[0].f
		}
	}
	type hit struct {
		e    *Entity
		rank int
	}
	var hits []hit
	for _, e := range g.searchCandidates(candidates, words) {
		if r := rank(e); r != noMatch {
			hits = append(hits, hit{e, r})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return bySeq(a.e, b.e)
	})
	ents = make([]*Entity, len(hits))
	for i, h := range hits {
		ents[i] = h.e
		if h.rank != matchAllWords {
			whole++
		}
	}
	return ents, whole
}

// searchCandidates returns the entities that may match: from the trigram
// index, or every entity when the query is too short for it, or when every
// word of a query of several words is. An entity holding every word holds
// the long ones, so the words too short for the index ("of", "in": questions
// are full of them) are left to the verification.
func (g *Graph) searchCandidates(q folded, words []folded) []*Entity {
	short := func(f folded) bool { return len(f.nfkc) < minIndexedQuery || len(f.plain) < minIndexedQuery }
	long := slices.DeleteFunc(slices.Clone(words), short)
	if short(q) || len(words) > 1 && len(long) == 0 {
		return g.entities
	}
	x := g.index()
	ids := x.candidatesFolded(q)
	if len(words) > 1 {
		all := x.candidatesFolded(long[0])
		for _, w := range long[1:] {
			if len(all) == 0 {
				break
			}
			all = intersect(all, x.candidatesFolded(w))
		}
		ids = union(ids, all)
	}
	cands := make([]*Entity, 0, len(ids))
	for _, id := range ids {
		if e := x.byID[id]; e != nil {
			cands = append(cands, e)
		}
	}
	return cands
}
