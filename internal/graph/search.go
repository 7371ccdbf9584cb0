package graph

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxQueryLength is the longest search_nodes query accepted, in characters.
const MaxQueryLength = 2048

// searchText is an entity's text folded for matching, in the two forms Fold
// and foldCase produce. The forms are one string when they agree, as they
// do for all ASCII text.
type searchText struct {
	name, entityType folded
	observations     []folded
	dated            uint8 // 0: not yet known; 1: no date; 2: an observation holds one (see dated)
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
	var b []byte // nil until the first rune that changes
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				if b == nil {
					b = append(make([]byte, 0, len(s)), s[:i]...)
				}
				c += 'a' - 'A'
			}
			if b != nil {
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !simpleRune(r) {
			return "", false
		}
		if l := unicode.ToLower(r); l != r {
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			b = utf8.AppendRune(b, l)
		} else if b != nil {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	if b == nil {
		return s, true
	}
	return string(b), true
}

func simpleRune(r rune) bool {
	switch {
	case 0xC0 <= r && r <= 0xFF:
		return r != 0xDF // ß folds to "ss"
	case 0x400 <= r && r <= 0x45F, // Cyrillic
		0x3001 <= r && r <= 0x3011, // CJK punctuation and brackets (not U+3000, which NFKC makes a space)
		0x3041 <= r && r <= 0x3096, // hiragana
		0x30A1 <= r && r <= 0x30FE, // katakana
		0x4E00 <= r && r <= 0x9FFF: // CJK unified ideographs
		return r != utf8.RuneError
	}
	return false
}

func (e *Entity) searchText() *searchText {
	d := e.derived()
	if d.search == nil {
		st := &searchText{name: newFolded(e.Name), entityType: newFolded(e.EntityType), observations: make([]folded, len(e.Observations))}
		for i, o := range e.Observations {
			st.observations[i] = newFolded(o)
		}
		d.search = st
	}
	return d.search
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
	rank := func(st *searchText) int { return st.rank(q, words) }
	candidates := q
	if hasPrefixWord(query) {
		// Prefix words (prefix.go): candidates by what precedes the stars.
		qw := queryWords(query)
		words = words[:0]
		for _, w := range qw {
			words = append(words, w.f)
		}
		rank = func(st *searchText) int { return st.rankPrefix(q, qw) }
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
		if r := rank(e.searchText()); r != noMatch {
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
