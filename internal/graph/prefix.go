package graph

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Prefix search: a query word ending in `*` ("auth*") matches the words
// that begin with it ("auth", "author", "authentication"), in the exact
// rule (Search) and in the ranking (SearchRanked). A query with no such
// word is searched exactly as before.

// minPrefixRunes is the shortest prefix a `*` makes one of: "a*" would
// match most of a memory, so a shorter one is an ordinary word, star
// included.
const minPrefixRunes = 2

// maxPrefixTerms bounds the words one prefix stands for in the ranking:
// the most frequent, ties by the word.
const maxPrefixTerms = 64

// queryWord is one space-separated word of a query, folded; prefix: it
// ended in `*`, which is cut off.
type queryWord struct {
	f      folded
	prefix bool
}

// prefixWord reports the folded prefix of a query word written "prefix*":
// at least minPrefixRunes letters or digits, and nothing else, before the
// star or stars.
func prefixWord(w string) (string, bool) {
	p := strings.TrimRight(w, "*")
	if len(p) == len(w) || utf8.RuneCountInString(p) < minPrefixRunes {
		return "", false
	}
	for _, r := range p {
		if !isWordRune(r) || isCJK(r) {
			return "", false
		}
	}
	return Fold(p), true
}

// hasPrefixWord reports whether the query has a prefix word.
func hasPrefixWord(query string) bool {
	if !strings.Contains(query, "*") {
		return false
	}
	for _, w := range strings.Fields(query) {
		if _, ok := prefixWord(w); ok {
			return true
		}
	}
	return false
}

// queryWords cuts a query into its folded words, a prefix word cut to its
// prefix.
func queryWords(query string) []queryWord {
	var ws []queryWord
	for _, w := range strings.Fields(query) {
		if p, ok := prefixWord(w); ok {
			ws = append(ws, queryWord{folded{p, p}, true})
		} else {
			ws = append(ws, queryWord{newFolded(w), false})
		}
	}
	return ws
}

// in reports whether f holds the word: as a substring, or for a prefix at
// the start of a word.
func (w queryWord) in(f folded) bool {
	if !w.prefix {
		return f.contains(w.f)
	}
	return wordStartsWith(f.nfkc, w.f.nfkc) || f.plain != f.nfkc && wordStartsWith(f.plain, w.f.nfkc)
}

// wordStartsWith reports whether a word of s begins with p.
func wordStartsWith(s, p string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], p)
		if j < 0 {
			return false
		}
		j += i
		if r, _ := utf8.DecodeLastRuneInString(s[:j]); j == 0 || !isWordRune(r) {
			return true
		}
		i = j + 1
	}
}

// rankPrefix is rank for a query with prefix words: the whole query as
// written (star and all) in one field as rank has it; else, for one word,
// the first field holding it; for several, each somewhere.
func (st *searchText) rankPrefix(q folded, words []queryWord) int {
	if r := st.rank(q, nil); r != noMatch {
		return r
	}
	if len(words) == 1 {
		switch w := words[0]; {
		case w.in(st.name):
			return matchName
		case w.in(st.entityType):
			return matchType
		case slices.ContainsFunc(st.observations, w.in):
			return matchObservation
		}
		return noMatch
	}
	for _, w := range words {
		if !w.in(st.name) && !w.in(st.entityType) && !slices.ContainsFunc(st.observations, w.in) {
			return noMatch
		}
	}
	return matchAllWords
}

// prefixTerms returns the terms (and their ids) of the indexed words that
// begin with the folded prefix p, at most maxPrefixTerms, the most
// frequent first: a stemmed word by its stem, any other by itself.
func (x *wordIndex) prefixTerms(p string) (terms []string, ids []uint32) {
	type term struct {
		s  string
		id uint32
	}
	found := make(map[uint32]string)
	for s, id := range x.termIDs {
		if strings.HasPrefix(s, p) {
			found[id] = s
		}
	}
	for w, id := range x.surface {
		if _, ok := found[id]; !ok && id != stopTerm && strings.HasPrefix(w, p) {
			found[id] = wordTerm(w)
		}
	}
	ts := make([]term, 0, len(found))
	for id, s := range found {
		ts = append(ts, term{s, id})
	}
	slices.SortFunc(ts, func(a, b term) int {
		if c := cmp.Compare(len(x.lists[b.id].data), len(x.lists[a.id].data)); c != 0 {
			return c
		}
		return cmp.Compare(a.s, b.s)
	})
	for _, t := range ts[:min(len(ts), maxPrefixTerms)] {
		terms = append(terms, t.s)
		ids = append(ids, t.id)
	}
	return terms, ids
}
