package graph

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// An entry of a log (a message of a chat stored one entity per message, a
// journal entry, an event of a list) is short, and the words that say what
// it is about are often in the entries around it: the question in the
// message before a reply, the topic named a line up. So an entry also
// holds, at half an observation's weight, the observations of the entries
// of its log just before and after it in graph order.
//
// A log is found by what it is, not by one entity's name: a run of at least
// minLogRun entities side by side in graph order (created in sequence), of
// one type, each with at most maxEntryObservations observations of at most
// maxEntryBytes in all, whose names are alike: the same once every run of
// digits is taken as one (msg-0042 and msg-0043, "2026-03-01 run" and
// "2026-03-02 run", D3:14 and D3:15). Entries are named by their place or
// time because their text cannot name them. The entities of a knowledge
// graph are named by words ("Alice Chen", "Acme offsite 2026" beside
// "Lisbon offsite 2025"), and keep their own words only: with names left
// out of the rule, the knowledge-graph memories of the evaluation lost
// questions to their neighbours' facts, and a person with hundreds of
// facts is never an entry. Measured on a held-out benchmark of questions
// over long chats: recall@5 0.63 -> 0.72; entries two away at a quarter
// weight added nothing.
const (
	maxEntryObservations = 4
	maxEntryBytes        = 1000
	minLogRun            = 3
)

// logReach is how far, in graph order, a change of one entity can change
// another's document: an entry's document holds the words of the alike
// entities next to it, and whether it is one depends on the minLogRun-1
// entities on either side of it.
const logReach = minLogRun - 1

// short reports whether e is small enough to be an entry of a log.
func short(e *Entity) bool {
	if len(e.Observations) > maxEntryObservations {
		return false
	}
	n := 0
	for _, o := range e.Observations {
		n += len(o)
	}
	return n <= maxEntryBytes
}

// alikeEntries reports whether a and b can be entries of one log: one type,
// both short, names the same but for their runs of digits, with a digit.
func alikeEntries(a, b *Entity) bool {
	return a.EntityType == b.EntityType && alikeNames(a.Name, b.Name) && short(a) && short(b)
}

// alikeNames reports whether a and b hold digits and are the same once
// each run of digits counts as one character.
func alikeNames(a, b string) bool {
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	digits := false
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if digit(a[i]) && digit(b[j]) {
			digits = true
			for i < len(a) && digit(a[i]) {
				i++
			}
			for j < len(b) && digit(b[j]) {
				j++
			}
			continue
		}
		if a[i] != b[j] {
			return false
		}
		i++
		j++
	}
	return digits && i == len(a) && j == len(b)
}

// position returns e's index in g.entities.
func (g *Graph) position(e *Entity) (int, bool) {
	return slices.BinarySearchFunc(g.entities, e.seq, func(x *Entity, seq uint64) int { return cmp.Compare(x.seq, seq) })
}

// isEntry reports whether the entity at position i is an entry of a log:
// one of a run of minLogRun alike entities side by side.
func (g *Graph) isEntry(i int) bool {
	ents := g.entities
	run := 1 // alike entities side by side, e included
	for j := i - 1; j >= 0 && run < minLogRun && alikeEntries(ents[j], ents[j+1]); j-- {
		run++
	}
	for j := i + 1; j < len(ents) && run < minLogRun && alikeEntries(ents[j-1], ents[j]); j++ {
		run++
	}
	return run >= minLogRun
}

// adjacent calls f with the entities within logReach of e in graph order
// (whatever their type and size): those whose documents may change when e
// changes, is added or is removed.
func (g *Graph) adjacent(e *Entity, f func(*Entity)) {
	i, found := g.position(e)
	if !found {
		return
	}
	for j := max(0, i-logReach); j < min(len(g.entities), i+logReach+1); j++ {
		if j != i {
			f(g.entities[j])
		}
	}
}

// sequenceNeighbours calls f with the entries next to e whose observations
// e's document holds: none unless e is an entry; of the two entities next
// to it, those that are entries of its log.
func (g *Graph) sequenceNeighbours(e *Entity, f func(*Entity)) {
	i, found := g.position(e)
	if !found || !g.isEntry(i) {
		return
	}
	// An alike neighbour is in e's run, so an entry too.
	if i > 0 && alikeEntries(g.entities[i-1], e) {
		f(g.entities[i-1])
	}
	if i+1 < len(g.entities) && alikeEntries(e, g.entities[i+1]) {
		f(g.entities[i+1])
	}
}

// An entry that follows a strongly matching entry of its log is often what
// answers it: the reply to the question, the next line of the story the
// question names. So each of the followFrom best-scoring entries passes
// followShare of its score to the entry after it in its log, on top of the
// words the two already share (their documents hold each other's at half
// weight), but never more than followCap of that entry's score: the entry
// that holds the question's words stays first, the answer comes next. Only the best pass, and only those holding at least
// followInformation of what the query's words say (Information): a word
// every entry holds lifts nothing.
//
// When the entry after is itself a question ("Ouch! Are you ok??", "Oh
// how's she doing?"), the answer is the entry after that one: it takes
// followAskShare of the score, under the same cap. In a chat the one who
// hears the news asks, and the one who told it answers, in the words of
// the answer, not the question's. An entry after that is a reaction of
// at most followBrief terms ("Oh no", "Sounds about right", "That's
// massive, congratulations") answers nothing and takes no share: lifted
// next to every strong match, such reactions took the places of answers.
const (
	followShare       = 0.5
	followFrom        = 50
	followInformation = 0.1
	followCap         = 0.99
	followAskShare    = 0.75
	followBrief       = 4
)

// carryForward passes the best entries' shares to the entries after them
// (and after a question, to the entry after it); the shares and caps are
// of the scores before any is passed, and an entry given two shares keeps
// the larger.
func (g *Graph) carryForward(x *wordIndex, query string) {
	if followShare == 0 || len(x.touched) == 0 {
		return
	}
	scores := make([]float64, len(x.touched))
	for i, id := range x.touched {
		scores[i] = x.scores[id]
	}
	cut := max(nthLargest(scores, min(followFrom, len(scores))), followInformation*x.information(query))
	var carries []carry
	for _, id := range x.touched {
		s := x.scores[id]
		if s <= 0 || s < cut {
			continue
		}
		next := g.nextEntry(x.byID[id])
		if next == nil || next.wid == 0 {
			continue
		}
		if c, ok := x.share(next, s, followShare); ok && !brief(next) {
			carries = append(carries, c)
		}
		if asks(next) {
			if c, ok := x.share(g.nextEntry(next), s, followAskShare); ok {
				carries = append(carries, c)
			}
		}
	}
	for _, c := range carries {
		if x.scores[c.to.wid] == 0 {
			x.touched = append(x.touched, c.to.wid)
		}
		x.scores[c.to.wid] = max(x.scores[c.to.wid], c.score)
	}
}

// carry is a share of a score passed to an entry: its new score.
type carry struct {
	to    *Entity
	score float64
}

// share returns what part of a strong match's score s gives e (nil: no
// entry), on top of its own, under the cap; false when e scores as much
// already.
func (x *wordIndex) share(e *Entity, s, part float64) (carry, bool) {
	if e == nil || e.wid == 0 {
		return carry{}, false
	}
	own := x.scores[e.wid]
	if own >= followCap*s {
		return carry{}, false
	}
	return carry{e, min(own+part*s, followCap*s)}, true
}

// nextEntry returns the entry of e's log just after it, nil when e is not
// an entry or ends its log.
func (g *Graph) nextEntry(e *Entity) *Entity {
	i, found := g.position(e)
	if !found || i+1 >= len(g.entities) || !alikeEntries(e, g.entities[i+1]) || !g.isEntry(i) {
		return nil
	}
	return g.entities[i+1]
}

// A field line of an entry ("speaker: Priya", "date: 13 January 2026")
// says what every entry of its log says in its own value, so a neighbour's
// field lines are left out of an entry's document: with them, every
// message of a two-person chat held both speakers' names, and a question
// naming one found nothing by it.
// A line of text written after its speaker's name ("caroline: i went to
// the support group yesterday") is no field line: its value is longer.
const (
	maxFieldLabel = 24
	maxFieldValue = 48
)

// fieldLabel returns the label of a folded field line, the text before
// its first ": " when that is at most maxFieldLabel bytes of letters and
// spaces and what follows at most maxFieldValue bytes, and false for any
// other text.
func fieldLabel(o string) (string, bool) {
	i := strings.Index(o, ": ")
	if i <= 0 || i > maxFieldLabel || len(o)-i-2 > maxFieldValue {
		return "", false
	}
	for _, r := range o[:i] {
		if !unicode.IsLetter(r) && r != ' ' && r != '_' {
			return "", false
		}
	}
	return o[:i], true
}

// entryFields are the labels of an entry's field lines, read once.
type entryFields struct {
	labels [maxEntryObservations]string
	n      int
	read   bool
}

// of reads the labels of st's field lines, the first time only.
func (fs *entryFields) of(st *searchText) {
	if fs.read {
		return
	}
	fs.read = true
	for _, o := range st.observations {
		if l, ok := fieldLabel(o.nfkc); ok && fs.n < len(fs.labels) {
			fs.labels[fs.n] = l
			fs.n++
		}
	}
}

// has reports whether the folded text o (a neighbour's) is a field line
// whose label is also one of the entry's.
func (fs *entryFields) has(o string) bool {
	if fs.n == 0 {
		return false
	}
	l, ok := fieldLabel(o)
	return ok && slices.Contains(fs.labels[:fs.n], l)
}

// asks reports whether e's text is a question: an observation ends with
// a question mark.
func asks(e *Entity) bool {
	for _, o := range e.Observations {
		o = strings.TrimRightFunc(o, unicode.IsSpace)
		if strings.HasSuffix(o, "?") || strings.HasSuffix(o, "？") {
			return true
		}
	}
	return false
}

// brief reports whether e's text is a reaction too short to answer
// anything: at most followBrief terms (stop words included) outside its
// field lines.
func brief(e *Entity) bool {
	n := 0
	for _, o := range e.searchText().observations {
		if _, field := fieldLabel(o.nfkc); !field {
			forEachToken(o.nfkc, func(string, bool) { n++ })
		}
	}
	return n <= followBrief
}
