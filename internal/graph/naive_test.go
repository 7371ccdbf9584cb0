package graph

import (
	"math"
	"regexp"
	"slices"
	"strings"
)

// A naive scorer, straight from the definitions, that the word index is
// checked against.

// naiveScores scores every entity of g for query straight from the
// definition: each entity's weighted terms counted afresh from its text and
// relations, document frequencies and lengths from all entities.
func naiveScores(g *Graph, query string) map[string]float64 {
	docs := make(map[string]map[string]int)
	lens := make(map[string]int)
	add := func(e, text string, w int) {
		for _, t := range cachedTerms(text) {
			docs[e][t] += w
			lens[e] += w
		}
	}
	for _, e := range g.entities {
		docs[e.Name] = make(map[string]int)
		add(e.Name, e.Name, weightName)
		add(e.Name, e.EntityType, weightType)
		for _, o := range e.Observations {
			add(e.Name, o, weightObservation)
		}
	}
	// Entries of a log hold their neighbours' observations at half weight:
	// a run of three alike entities side by side makes a log.
	isShort := func(e *Entity) bool {
		n := 0
		for _, o := range e.Observations {
			n += len(o)
		}
		return len(e.Observations) <= maxEntryObservations && n <= maxEntryBytes
	}
	skeleton := regexp.MustCompile(`[0-9]+`)
	alike := func(a, b *Entity) bool {
		return a.EntityType == b.EntityType && isShort(a) && isShort(b) && strings.ContainsAny(a.Name, "0123456789") &&
			skeleton.ReplaceAllString(a.Name, "0") == skeleton.ReplaceAllString(b.Name, "0")
	}
	entry := make([]bool, len(g.entities))
	for s := 0; s+2 < len(g.entities); s++ {
		if alike(g.entities[s], g.entities[s+1]) && alike(g.entities[s+1], g.entities[s+2]) {
			entry[s], entry[s+1], entry[s+2] = true, true, true
		}
	}
	for i, e := range g.entities {
		for _, j := range []int{i - 1, i + 1} {
			if j < 0 || j >= len(g.entities) {
				continue
			}
			if n := g.entities[j]; entry[i] && alike(e, n) {
				for _, o := range n.Observations {
					add(e.Name, o, weightSequence)
				}
			}
		}
	}
	for _, r := range g.relations {
		for _, end := range [2][2]string{{r.From, r.To}, {r.To, r.From}} {
			e, other := end[0], end[1]
			if docs[e] == nil {
				continue
			}
			add(e, r.RelationType, weightContext)
			add(e, other, weightContext)
			if o := g.byName[other]; o != nil {
				add(e, o.EntityType, weightContext)
			}
		}
	}
	total := 0
	for _, l := range lens {
		total += l
	}
	n := float64(len(docs))
	avg := float64(total) / unitsPerWord / n
	if total == 0 {
		avg = 1
	}
	scores := make(map[string]float64)
	seen := make(map[string]bool)
	for _, t := range terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		df := 0
		for _, d := range docs {
			if d[t] > 0 {
				df++
			}
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for e, d := range docs {
			if d[t] == 0 {
				continue
			}
			tf := float64(d[t]) / unitsPerWord
			norm := 1 - bm25B + bm25B*float64(lens[e])/unitsPerWord/avg
			scores[e] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
		}
	}
	return scores
}

// naiveRankedScores is naiveScores with the boost of what the query
// names, from the definition: an entity is named when its name's words are
// a run of the query's words, as written or capitalised; it and every
// entity related to it score namedBoost times more, once.
func naiveRankedScores(g *Graph, query string) map[string]float64 {
	scores := naiveScores(g, query)
	words := nameWords(query)
	isNamed := func(name string) bool {
		n := len(strings.Split(name, " "))
		for i := 0; i+n <= len(words); i++ {
			run := strings.Join(words[i:i+n], " ")
			if n <= maxNameWords && (run == name || capitalised(run) == name) {
				return true
			}
		}
		return false
	}
	// A first name: the first of two capitalised words of exactly one
	// entity's name, a word of the query (not a stop word written in
	// lower case).
	byFirst := make(map[string][]string)
	for _, e := range g.entities {
		f := strings.Fields(e.Name)
		if len(f) == 2 && len(strings.Split(e.Name, " ")) == 2 && properWord(f[0]) && properWord(f[1]) {
			byFirst[Fold(f[0])] = append(byFirst[Fold(f[0])], e.Name)
		}
	}
	for _, w := range words {
		if names := byFirst[Fold(w)]; len(names) == 1 && !(Fold(w) == w && stemmed(w) && wordTerm(w) == "") {
			words = append(words, names[0])
		}
	}
	boost := make(map[string]float64)
	owe := func(name string, by float64) { boost[name] = max(boost[name], by) }
	for _, e := range g.entities {
		if isNamed(e.Name) || slices.Contains(words, e.Name) {
			owe(e.Name, namedSelfBoost)
		}
	}
	for _, r := range g.relations {
		if boost[r.From] == namedSelfBoost && g.byName[r.From] != nil {
			owe(r.To, namedBoost)
		}
		if boost[r.To] == namedSelfBoost && g.byName[r.To] != nil {
			owe(r.From, namedBoost)
		}
	}
	for name, by := range boost {
		if scores[name] > 0 {
			scores[name] *= by
		}
	}
	if isTemporal(query) {
		for _, e := range g.entities {
			if scores[e.Name] > 0 && slices.ContainsFunc(e.Observations, func(o string) bool { return hasDate(Fold(o)) }) {
				scores[e.Name] *= dateBoost
			}
		}
	}
	return scores
}
