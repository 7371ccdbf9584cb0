package graph

import (
	"strings"
	"unicode"
)

// Names in a question: the entities a query names and the boost they and
// their neighbours get (SearchRankedFunc).

// namedBoost multiplies the score of an entity related to one the query
// names; namedSelfBoost the score of the named entity itself, so that the
// person asked about ranks above the people who mention her ("where does
// Alice work?": Carol, who supervised Alice and is related to her, says
// "Alice" twice).
const (
	namedBoost     = 1.5
	namedSelfBoost = namedBoost * namedBoost
)

// maxNameWords is the longest name, in words, looked for in a query.
const maxNameWords = 4

// boostNamed raises the scores of the entities related to an entity the
// query names ("When did Nadia hurt her ankle?" names Nadia; the messages
// Nadia sent_by are related to her), and the named entity more: among the
// entities sharing words with the query, who or what it is about comes
// first, then what is tied to it. Each is raised once, by the most it is
// owed, however many named entities it is related to.
func (g *Graph) boostNamed(x *wordIndex, query string) {
	named := g.namedIn(query)
	if len(named) == 0 {
		return
	}
	boosted := make(map[*Entity]float64)
	boost := func(name string, by float64) {
		e := g.byName[name]
		if e == nil || e.wid == 0 || boosted[e] >= by || x.scores[e.wid] == 0 {
			return
		}
		if was := boosted[e]; was > 0 {
			x.scores[e.wid] /= was
		}
		boosted[e] = by
		x.scores[e.wid] *= by
	}
	for _, n := range named {
		boost(n.Name, namedSelfBoost)
		for _, r := range g.outOf(n.Name) {
			boost(r.To, namedBoost)
		}
		for _, r := range g.inOf(n.Name) {
			boost(r.From, namedBoost)
		}
	}
}

// namedIn returns the entities whose name is a run of up to maxNameWords
// words of the query, as written or with each word capitalised, a
// possessive "'s" left off ("Nadia's" names Nadia); and, first, those
// named by two capitalised words whose first word is a word of the query
// and the first word of no other such name ("Alice" names Alice Chen).
func (g *Graph) namedIn(query string) []*Entity {
	words := nameWords(query)
	var out []*Entity
	seen := make(map[*Entity]bool)
	x := g.wordIndex()
	for _, w := range words {
		if e := x.namedByFirst(w); e != nil && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	for i := range words {
		for n := 1; n <= maxNameWords && i+n <= len(words); n++ {
			name := strings.Join(words[i:i+n], " ")
			if len(g.byName) == 0 {
				return nil
			}
			for k, cand := range [2]string{name, capitalised(name)} {
				if k == 1 && cand == name {
					break
				}
				if e := g.byName[cand]; e != nil && !seen[e] {
					seen[e] = true
					out = append(out, e)
				}
			}
		}
	}
	return out
}

// nameWords cuts a query into the words a name may be made of: letters,
// digits and the hyphens, apostrophes and dots inside them.
func nameWords(query string) []string {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '-' && r != '\'' && r != '’' && r != '.'
	})
	for i, w := range words {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		words[i] = strings.Trim(w, "-'’.")
	}
	return words
}

// capitalised returns s with the first letter of each word upper-case.
func capitalised(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	start := true
	for _, r := range s {
		if start {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		start = r == ' '
	}
	return b.String()
}

// firstName returns the folded first word of a name of two capitalised
// words ("Alice Chen", "Acme Robotics"), the kind a person goes by the
// first of; false for any other name ("Drone project", "msg-0042").
func firstName(name string) (string, bool) {
	first, last, ok := strings.Cut(name, " ")
	if !ok || !properWord(first) || !properWord(last) {
		return "", false
	}
	return Fold(first), true
}

// properWord reports whether w is a capitalised word of letters (and the
// hyphens and apostrophes inside one).
func properWord(w string) bool {
	for i, r := range w {
		switch {
		case i == 0 && !unicode.IsUpper(r):
			return false
		case !unicode.IsLetter(r) && !(i > 0 && (r == '-' || r == '\'' || r == '’')):
			return false
		}
	}
	return w != ""
}

// namedByFirst returns the one live entity whose two-word name begins with
// the query word w, or nil when none or several do. A stop word names
// nothing unless written capitalised ("May" may be a name, "may" is not).
func (x *wordIndex) namedByFirst(w string) *Entity {
	f := Fold(w)
	ids := x.firstNames[f]
	if len(ids) == 0 || f == w && stemmed(f) && wordTerm(f) == "" {
		return nil
	}
	var found *Entity
	for _, id := range ids {
		if e := x.byID[id]; e != nil && e != found {
			if found != nil {
				return nil
			}
			found = e
		}
	}
	return found
}
