// Package answer lays out and encodes what every tool returns, so that
// every answer fits the assistant that asked (docs/design.md §8): the read
// tools' answers in parts (this file), the write tools' lists cut short
// (result.go). An answer is encoded once (encodeBoth): the text item, the
// reference's indented JSON, and the structured content, the same value
// compact, come from one pass over the graph.
//
// An Answer is the whole of what a call asked for: entities in answer order
// and relations in graph order. Page cuts it into parts whose text stays
// within a byte limit. Each part but the last carries a cursor; calling Page
// again with it gives the next part. Following the cursors yields every
// entity and relation of the answer exactly once.
//
// The parts are cut from one sequence: the entities, then the relations,
// each in the answer's order. A page is a run of that sequence, so the
// parts put together are the whole answer in its order. An entity too big
// for a page on its own is split by its observations and says how many
// each part leaves out.
//
// A search shows evidence first (Hit): an entity holding the whole query is
// shown whole, the others only by their best-matching observations, the
// rest counted in omittedObservations with a note that open_nodes shows
// them; so the facts that answer a question come within the first few
// thousand bytes, whichever entity holds them.
//
// A cursor carries no server state: it names the request it belongs to and a
// digest of everything before its position. A cursor used after the memory
// changed still works when everything before it is unchanged (the rest is
// read from the memory as it is now); otherwise Page refuses it with an
// error that says to start over. A cursor inside an entity split across
// parts also digests that entity's observations as shown: when any of
// them changed, the position of the next one means something else, so the
// cursor is refused. It never returns wrong data silently: it never skips
// or repeats an entity, a relation or an observation.
package answer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// View is one entity of an answer as it is to be shown.
type View struct {
	Entity *graph.Entity
	// First, when not nil, returns the indexes of the observations shown
	// before the others, in order (a search shows what matched first). It
	// is called only for the entities a page shows.
	First func() []int
	// Most, when above 0 and below the entity's number of observations,
	// shows only the first Most observations in shown order; the others
	// are counted in omittedObservations, and a note says that open_nodes
	// shows them.
	Most int
}

// HitObservations is how many observations a closest match of a search
// shows: its best-matching ones.
const HitObservations = 10

// Hit shows one entity that a search found. An entity holding the whole
// query in its name, type or an observation is shown whole, as the
// reference shows it, with the observations that matched first. Any other
// (one holding each of the query's words somewhere, or only some of them)
// shows only its HitObservations best-matching observations, best first: a
// person with three hundred facts otherwise fills the first few thousand
// bytes of the answer with facts that share a word with the question, and
// the fact asked about, on the second entity, comes after them.
func Hit(h graph.Hit) View {
	v := View{Entity: h.Entity, First: h.Matched}
	if !h.Whole {
		v.Most = HitObservations
	}
	return v
}

// limited reports whether view i shows only some of its observations.
func (a *Answer) limited(i int) bool {
	v := a.Entities[i]
	return !a.Outline && v.Most > 0 && v.Most < len(v.Entity.Observations)
}

// omittedNote is the note of an answer whose entities show only some of
// their observations.
const omittedNote = "Entities with omittedObservations show only their observations that best match the query; open_nodes with their names shows them whole."

// notes returns the answer's notes, omittedNote when an entity shows only
// some of its observations, and omittedRelationsNote when relations are
// left out.
func (a *Answer) notes() []string {
	if a.run != nil {
		return a.run.notes
	}
	notes := a.Notes
	for i := range a.Entities {
		if a.limited(i) {
			notes = append(slices.Clip(notes), omittedNote)
			break
		}
	}
	if a.OmittedRelations > 0 {
		notes = append(slices.Clip(notes), fmt.Sprintf(omittedRelationsNote, a.OmittedRelations))
	}
	return notes
}

// Answer is the whole answer of a read tool, before it is cut into parts.
type Answer struct {
	// Tool names the tool in the text that says how to get the rest.
	Tool string
	// Request identifies the call's arguments other than the cursor; a
	// cursor is good only for the request that issued it.
	Request string
	// Outline shows each entity's name, type and number of observations
	// instead of its observations.
	Outline   bool
	Entities  []View
	Relations []*graph.Relation // graph order; a search's, most relevant first
	// OmittedRelations counts the relations of the answer's entities left
	// out (a search shows its most relevant ones: SearchRelations).
	OmittedRelations int
	// Notes are further text items shown after the JSON on every part.
	Notes []string
	// Hint ends the sentence that says how to get the rest, naming
	// narrower requests (", or …"); it may be empty.
	Hint string
	// Times shows when each fact was written, as far as known (see
	// writeTimes).
	Times bool

	ordered map[int][]string // shown order of entities with First, once asked
	run     *run             // a page's run, copied from a whole answer (Pick)
}

// Result is one tool answer as MCP carries it: a part of a read tool's
// answer, or a write tool's answer.
type Result struct {
	// Structured is the structured content: the result as compact JSON.
	Structured []byte
	// Texts are the text items: the result as JSON.stringify(result, null,
	// 2) writes it (a delete tool's message instead), then notes.
	Texts      []string
	NextCursor string // empty on the last part
}

// ResourceURI is the resource that holds the whole graph, uncut.
const ResourceURI = "memory://knowledge-graph"

// DefaultLimit is the answer limit when none is set (MEMORY_ANSWER_LIMIT):
// about 15–20k tokens, well inside what clients take (Claude Code refuses a
// tool result over 25,000 tokens).
const DefaultLimit = 60000

// MinLimit is the smallest limit Page accepts: room for one entity with a
// few observations and the text that says how to go on.
const MinLimit = 2000

// ErrCursor is wrapped by every error about a cursor.
var ErrCursor = errors.New("bad cursor")

// item is one element of the answer's sequence: an entity (ent ≥ 0, an index
// into Entities) or a relation (rel, an index into Relations).
type item struct{ ent, rel int32 }

func (a *Answer) sequence() []item {
	seq := make([]item, 0, len(a.Entities)+len(a.Relations))
	for i := range a.Entities {
		seq = append(seq, item{int32(i), -1})
	}
	for i := range a.Relations {
		seq = append(seq, item{-1, int32(i)})
	}
	return seq
}

// shown returns the observations of entity i in the order they are shown.
func (a *Answer) shown(i int) []string {
	v := a.Entities[i]
	obs := v.Entity.Observations
	if v.First == nil {
		return obs
	}
	if out, ok := a.ordered[i]; ok {
		return out
	}
	first := v.First()
	if len(first) == 0 {
		return obs
	}
	out := make([]string, 0, len(obs))
	picked := make([]bool, len(obs))
	defer func() {
		if a.ordered == nil {
			a.ordered = make(map[int][]string)
		}
		a.ordered[i] = out
	}()
	for _, j := range first {
		if j >= 0 && j < len(obs) && !picked[j] {
			picked[j] = true
			out = append(out, obs[j])
		}
	}
	for j, o := range obs {
		if !picked[j] {
			out = append(out, o)
		}
	}
	return out
}

// part is an entity shown in part: observations [from, to) of those shown.
type part struct {
	ent      int
	from, to int
	cut      string // the last observation shown was cut to this
}

// layout is the content of one page.
type layout struct {
	entities  []part
	relations []int32 // indexes into Relations, graph order once sorted
	next      int     // sequence position after the page; len(seq): none
	nextObs   int
}

func (a *Answer) writeEntity(w *JSON, p part) {
	e := a.Entities[p.ent].Entity
	w.Open('{')
	w.Key("name")
	w.String(e.Name)
	w.Key("entityType")
	w.String(e.EntityType)
	if a.Outline {
		w.Key("observationCount")
		w.Int(len(e.Observations))
		a.writeTimes(w, e, nil)
		w.Close('}')
		return
	}
	obs := a.shown(p.ent)
	w.Key("observations")
	w.Open('[')
	for i := p.from; i < p.to; i++ {
		if i == p.to-1 && p.cut != "" {
			w.String(p.cut)
		} else {
			w.String(obs[i])
		}
	}
	w.Close(']')
	if omitted := len(obs) - (p.to - p.from); omitted > 0 {
		w.Key("omittedObservations")
		w.Int(omitted)
	}
	a.writeTimes(w, e, obs[p.from:p.to])
	w.Close('}')
}

// writeTimes writes, when the answer shows times, when the entity was
// created and last changed and when each of the shown observations was
// written ("observationTimes", one per shown observation, null when
// unknown), each only when some of it is known.
func (a *Answer) writeTimes(w *JSON, e *graph.Entity, shown []string) {
	if !a.Times {
		return
	}
	if e.Created != 0 {
		w.Key("createdAt")
		w.String(e.Created.String())
	}
	if e.Updated != 0 && e.Updated != e.Created {
		w.Key("updatedAt")
		w.String(e.Updated.String())
	}
	if len(shown) == 0 || !e.HasObservationTimes() {
		return
	}
	at := make(map[string]graph.Time, len(e.Observations))
	for i, o := range e.Observations {
		at[o] = e.ObservationTime(i)
	}
	w.Key("observationTimes")
	w.Open('[')
	for _, o := range shown {
		if t := at[o]; t != 0 {
			w.String(t.String())
		} else {
			w.Null()
		}
	}
	w.Close(']')
}

// writeRelation writes a relation, with its time when the answer shows
// times and it is known.
func (a *Answer) writeRelation(w *JSON, r *graph.Relation) {
	if !a.Times || r.Created == 0 {
		w.Relation(r)
		return
	}
	w.Open('{')
	w.relationMembers(r)
	w.Key("createdAt")
	w.String(r.Created.String())
	w.Close('}')
}

func (a *Answer) write(l *layout, next string) func(*JSON) {
	return func(w *JSON) {
		w.Open('{')
		w.Key("entities")
		w.Open('[')
		for _, p := range l.entities {
			a.writeEntity(w, p)
		}
		w.Close(']')
		w.Key("relations")
		w.Open('[')
		for _, r := range l.relations {
			a.writeRelation(w, a.Relations[r])
		}
		w.Close(']')
		if a.OmittedRelations > 0 {
			w.Key("omittedRelations")
			w.Int(a.OmittedRelations)
		}
		if next != "" {
			w.Key("nextCursor")
			w.String(next)
		}
		w.Close('}')
	}
}

// itemSize is what item adds to the indented text, separators included.
func (a *Answer) itemSize(w *JSON, it item, p part) int {
	w.buf = w.buf[:0]
	w.first = append(w.first[:0], false, false)
	if it.ent >= 0 {
		a.writeEntity(w, p)
	} else {
		a.writeRelation(w, a.Relations[it.rel])
	}
	return len(w.buf)
}

// Page returns the part of the answer that cursor points to ("" for the
// first), cut to limit bytes of text (0: no limit), for a caller that
// holds the graph until it returns: Pick, then Encode. It fails, wrapping
// ErrCursor, when the cursor is not one of this answer's.
func (a *Answer) Page(limit int, cursorText string) (Result, error) {
	p, err := a.Pick(limit, cursorText)
	if err != nil {
		return Result{}, err
	}
	return p.Encode(), nil
}

// Encode lays out and encodes the page: as much of the run picked as fits
// the limit, with the cursor to the rest. It reads nothing of the graph.
func (p *Picked) Encode() Result {
	a, seq := p.a, p.a.sequence()
	l := a.fill(seq, p.obs, p.limit)
	for {
		r := a.render(seq, l)
		if p.limit == 0 || textSize(r.Texts) <= p.limit || !l.shrink(a, seq) {
			return r
		}
	}
}

func textSize(texts []string) int {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	return n
}

// fill lays out as much of seq (from observation obs of its first item)
// as fits limit, counting the skeleton and notes but not the cursor and the
// notice, which shrink makes room for.
func (a *Answer) fill(seq []item, obs, limit int) *layout {
	const k = 0
	l := &layout{next: len(seq)}
	if limit == 0 {
		for i := k; i < len(seq); i++ {
			a.add(l, seq[i], part{ent: int(seq[i].ent), from: obs, to: a.obsCount(seq[i])})
			obs = 0
		}
		return l
	}
	size := len(Encode(true, a.write(&layout{}, ""))) + textSize(a.notes())
	scratch := &JSON{indent: true}
	for i := k; i < len(seq); i++ {
		it := seq[i]
		p := part{ent: int(it.ent), from: obs, to: a.obsCount(it)}
		s := a.itemSize(scratch, it, p)
		if it.ent >= 0 && len(l.entities) == 0 || it.ent < 0 && len(l.relations) == 0 {
			// The first element of an array has no comma before it, but
			// the array's closing bracket moves to a line of its own.
			s += 2
		}
		if size+s > limit {
			if i == k && it.ent >= 0 {
				// Alone it does not fit: show what fits of it, leaving
				// room for the text that says how to go on.
				e := a.Entities[it.ent].Entity
				reserve := 400 + 2*len(e.Name) + len(a.Hint) + len(a.Tool)
				p = a.split(scratch, p, limit-size-reserve)
				a.add(l, it, p)
				switch {
				case p.to < a.obsCount(it):
					l.next, l.nextObs = i, p.to
				case i+1 < len(seq):
					l.next, l.nextObs = i+1, 0
				}
				return l
			}
			l.next, l.nextObs = i, 0
			return l
		}
		size += s
		a.add(l, it, p)
		obs = 0
	}
	return l
}

func (a *Answer) obsCount(it item) int {
	if it.ent < 0 || a.Outline {
		return 0
	}
	if a.limited(int(it.ent)) {
		return a.Entities[it.ent].Most
	}
	return len(a.Entities[it.ent].Entity.Observations)
}

func (a *Answer) add(l *layout, it item, p part) {
	if it.ent >= 0 {
		l.entities = append(l.entities, p)
	} else {
		l.relations = append(l.relations, it.rel)
	}
}

// split shows as many of p's observations as fit room; when not even one
// fits, the first is cut.
func (a *Answer) split(scratch *JSON, p part, room int) part {
	lo, hi := p.from, p.to // the count that fits lies in [lo, hi)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if a.itemSize(scratch, item{ent: int32(p.ent)}, part{ent: p.ent, from: p.from, to: mid}) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo > p.from {
		return part{ent: p.ent, from: p.from, to: lo}
	}
	if p.from == p.to {
		return p
	}
	// Not even one observation fits: cut the first to what fits, on a rune
	// boundary, and say so in the text.
	text := a.shown(p.ent)[p.from]
	cutAt := len(text)
	for cutAt > 0 {
		cutAt = max(0, cutAt-max(64, cutAt/8))
		for cutAt > 0 && !utf8.RuneStart(text[cutAt]) {
			cutAt--
		}
		c := part{ent: p.ent, from: p.from, to: p.from + 1, cut: text[:cutAt] + cutMark}
		if a.itemSize(scratch, item{ent: int32(p.ent)}, c) <= room {
			return c
		}
	}
	return part{ent: p.ent, from: p.from, to: p.from + 1, cut: cutMark}
}

const cutMark = " … [cut: too long for one answer]"

// shrink gives back the last item of the page (or the last observation of
// a split entity), so the cursor and the notice fit. It reports false when
// nothing is left to give back.
func (l *layout) shrink(a *Answer, seq []item) bool {
	// The page's last item is seq[l.next-1], or the split entity at l.next.
	if l.nextObs > 0 {
		p := &l.entities[len(l.entities)-1]
		if p.to-p.from > 1 {
			p.to--
			p.cut = ""
			l.nextObs = p.to
			return true
		}
		return false
	}
	if len(l.entities)+len(l.relations) <= 1 {
		// One whole entity: split it instead.
		if len(l.entities) == 1 && l.entities[0].to-l.entities[0].from > 1 {
			p := &l.entities[0]
			p.to--
			l.next--
			l.nextObs = p.to
			return true
		}
		return false
	}
	it := seq[l.next-1]
	if it.ent >= 0 {
		l.entities = l.entities[:len(l.entities)-1]
	} else {
		l.relations = l.relations[:len(l.relations)-1]
	}
	l.next--
	return true
}

// render writes the page laid out in l.
func (a *Answer) render(seq []item, l *layout) Result {
	rels := slices.Clone(l.relations)
	slices.SortFunc(rels, cmp.Compare)
	shown := &layout{entities: l.entities, relations: rels}
	var next string
	if l.next < len(seq) {
		c := cursor{request: digest(a.Request), k: a.run.base + l.next, obs: l.nextObs, prefix: a.prefixDigest(seq, l.next)}
		if c.obs > 0 {
			c.split = a.splitDigest(int(seq[l.next].ent))
		}
		next = c.String()
	}
	p := encode(a.write(shown, next), a.size(shown), a.notes()...)
	p.NextCursor = next
	if next != "" {
		p.Texts = append(p.Texts, a.notice(l, next))
	}
	return p
}

// size estimates the bytes of the page laid out in l before escaping:
// each entity's and relation's strings and the JSON around them, and the
// white space of each line indented.
func (a *Answer) size(l *layout) sizes {
	s := sizes{compact: 64, indented: 64}
	for _, p := range l.entities {
		e := a.Entities[p.ent].Entity
		n, lines := len(e.Name)+len(e.EntityType)+48, 6
		if a.Outline {
			lines--
		} else {
			for _, o := range e.Observations[p.from:p.to] {
				n += len(o) + 3
			}
			lines += p.to - p.from
		}
		s.compact += n
		s.indented += n + 9*lines
	}
	for _, r := range l.relations {
		rel := a.Relations[r]
		n := len(rel.From) + len(rel.To) + len(rel.RelationType) + 38
		s.compact += n
		s.indented += n + 7*5
	}
	// A little over rather than under: an escaped character or two more
	// would otherwise copy the whole buffer to grow it.
	s.compact += s.compact / 64
	s.indented += s.indented / 64
	return s
}

func (a *Answer) notice(l *layout, next string) string {
	r := a.run
	text := fmt.Sprintf("This answer was cut to fit the answer limit: this part has %d of its %d entities (from entity %d on) and %d of its %d relations. For the next part call %s again with the same arguments and \"cursor\": %q%s.",
		len(l.entities), r.entities, r.entitiesBefore+1, len(l.relations), r.relations, a.Tool, next, a.Hint)
	for _, p := range l.entities {
		if p.cut != "" {
			text += fmt.Sprintf(" One observation of entity %q is longer than an answer may be and was cut; the resource %s holds it whole.", a.Entities[p.ent].Entity.Name, ResourceURI)
		}
	}
	if l.nextObs > 0 {
		p := l.entities[len(l.entities)-1]
		e := a.Entities[p.ent].Entity
		text += fmt.Sprintf(" Entity %q is too big for one part: this part shows %d of its %d observations; the next part goes on with the rest.", e.Name, p.to-p.from, len(e.Observations))
	}
	return text
}
