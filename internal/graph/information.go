package graph

// Information is how much the words of query say among g's entities, for
// a caller that fuses the word ranking with another (search by meaning):
// the sum of the idf of its distinct terms, stop words left out, a term
// no entity holds counting as much as the rarest one can. A partial hit's
// Score over it is about the share of the query's information that the
// hit's words hold (BM25 saturates repeated words, and boosts raise
// some): a query whose every known word is in most entities tells little
// by words.
func (g *Graph) Information(query string) float64 {
	g.searchMu.Lock()
	defer g.searchMu.Unlock()
	return g.wordIndex().information(query)
}

// information is Information by x; g.searchMu is held.
func (x *wordIndex) information(query string) float64 {
	seen := make(map[string]bool)
	var sum float64
	forEachToken(Fold(query), func(tok string, word bool) {
		term, id, ok := x.lookupToken(tok, word)
		if term == "" || seen[term] {
			return
		}
		seen[term] = true
		df := 0
		if ok {
			df = x.docFreq(id)
		}
		sum += x.idf(df)
	})
	return sum
}
