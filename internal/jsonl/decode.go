package jsonl

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Decode never fails: it reads what it can and keeps the rest.
//
// Each line is one JSON object: an entity line goes to the graph through
// LoadEntity, a relation line through LoadRelation. Lines end in "\n" or
// "\r\n"; a UTF-8 byte order mark at the start of the file (or of any line)
// is dropped, and lines holding only white space are skipped. A line that is
// not a JSON object, has no known "type", lacks a member its type needs or
// has one of the wrong JSON type goes to Unreadable verbatim, with a
// Problem. Members a line has beyond the known ones are kept, in their
// order, in Entity.Extra or Relation.Extra.
//
// Within a line, a member repeated under one key counts once with its last
// value, as in JavaScript's JSON.parse. Strings are decoded as encoding/json
// decodes them: a lone surrogate escape and every byte that is not valid
// UTF-8 become U+FFFD. A second entity line with a name already read is
// merged into the first (see graph.LoadEntity), and a repeated relation is
// dropped; each is reported as a Problem.
//
// Decode keeps nothing of data: the graph holds its own text. Names and
// observations are copied end to end into blocks of a few hundred KiB (a
// string costs its bytes and its header, and no allocation of its own),
// the types of entities and relations are held once each however many
// lines repeat them, and a relation's ends are the names of its entities
// (graph.LoadRelation). So a big file costs in memory about its text,
// without the keys, quotes and relation lines around it, and the bytes
// read can go as soon as their lines are loaded (Read reads a chunk at a
// time). Nothing is cached of the lines (Entity.EncodedLine): a save
// encodes them.
func Decode(data []byte) *File { return decode(data, len(data) >= pipelineMin) }

// Files from pipelineMin bytes up are decoded in a pipeline (pipeline.go).
const pipelineMin = 1 << 20

func decode(data []byte, pipelined bool) *File {
	if pipelined {
		return decodePipelined(data, chunkLen, parsers())
	}
	f := &File{Graph: graph.New()}
	f.Graph.BeginLoad()
	var d decoder
	forEachLine(data, func(n int, line []byte) {
		it := d.parseLine(n, line)
		f.load(&it)
		d.strs = d.strs[:0] // the graph copied the observations out
	})
	f.endLoad()
	return f
}

// batch is lines parsed on one goroutine to be loaded on another.
type batch struct {
	items []item
	strs  []string // the decoder's strs for the items
}

// forEachLine calls fn for each line of data that is not blank, with its
// 1-based number, trimmed, and returns how many lines data has.
func forEachLine(data []byte, fn func(n int, line []byte)) (lines int) {
	n := 1
	for ; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if !isBlank(line) {
			fn(n, trimLine(line))
		}
	}
	return n - 1
}

// trimLine drops the byte order marks at the start of a line and the CRs at
// its end. Any line may start with a mark, not only the first: files get
// concatenated. Every trailing CR counts as part of the line end, so that an
// unreadable line written back verbatim reads back the same.
func trimLine(line []byte) []byte {
	for bytes.HasPrefix(line, bom) {
		line = line[len(bom):]
	}
	for len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line
}

var bom = []byte("\uFEFF")

// isBlank reports whether line holds only white space as JavaScript's
// String.prototype.trim sees it, which is what the reference skips.
func isBlank(line []byte) bool {
	for i := 0; i < len(line); {
		c := line[i]
		if c < utf8.RuneSelf {
			switch c {
			case ' ', '\t', '\v', '\f', '\r':
				i++
				continue
			}
			return false
		}
		r, size := utf8.DecodeRune(line[i:])
		switch {
		case r == 0x00A0, r == 0x1680, 0x2000 <= r && r <= 0x200A, r == 0x2028, r == 0x2029,
			r == 0x202F, r == 0x205F, r == 0x3000, r == 0xFEFF:
			i += size
		default:
			return false
		}
	}
	return true
}

// keyID names the members the memory file knows.
type keyID uint8

const (
	keyOther keyID = iota
	keyType
	keyName
	keyEntityType
	keyObservations
	keyFrom
	keyTo
	keyRelationType
	keyCreatedAt
	keyUpdatedAt
	keyObservationTimes
	keyObservationsHash
	numKeys
)

var keyNames = [numKeys]string{"", "type", "name", "entityType", "observations", "from", "to", "relationType",
	"createdAt", "updatedAt", "observationTimes", "observationsHash"}

// The members each kind of line knows; any other member is kept as Extra.
const (
	entityKeys   = 1<<keyType | 1<<keyName | 1<<keyEntityType | 1<<keyObservations
	relationKeys = 1<<keyType | 1<<keyFrom | 1<<keyTo | 1<<keyRelationType
)

// The time members (see the package doc) are known too when they hold what
// this server writes; readTimes tells which do.

func lookupKey(k []byte) keyID {
	switch string(k) { // compiles to a comparison, without allocating
	case "type":
		return keyType
	case "name":
		return keyName
	case "entityType":
		return keyEntityType
	case "observations":
		return keyObservations
	case "from":
		return keyFrom
	case "to":
		return keyTo
	case "relationType":
		return keyRelationType
	case "createdAt":
		return keyCreatedAt
	case "updatedAt":
		return keyUpdatedAt
	case "observationTimes":
		return keyObservationTimes
	case "observationsHash":
		return keyObservationsHash
	}
	return keyOther
}

// span is the content of a string in the line, between its quotes, with the
// str* flags its scan reported.
type span struct {
	start, end int
	flags      uint8
}

// member is one member of a line's object, as the scan found it.
type member struct {
	key        keyID
	keySpan    span
	start, end int  // the value
	str        span // the value's content when it is a string
	// When the value is an array scanned as observations: its strings are
	// elems[elemsStart:elemsEnd], or nonString is the index of the first
	// element that is not a string (-1 when all are) and nonStringAt where
	// it starts in the line.
	isArray                bool
	elemsStart, elemsEnd   int
	nonString, nonStringAt int
}

// decoder holds the buffers the lines of one file reuse.
type decoder struct {
	members []member
	last    [numKeys]int // index in members of the last member with each key, or -1
	elems   []span
	stack   []byte
	// strs holds the strings of the lines parsed but not yet loaded, end to
	// end: an entity's observations are a piece of it, so parsing a line
	// allocates no slice.
	strs    []string
	text    textArena         // where the strings the graph keeps are copied
	ends    textArena         // where relations' ends are copied until the load ends
	kinds   map[string]string // the types read so far, each held once
	scratch []byte            // a string being decoded, or a key
}

// item is what a line holds, parsed but not yet loaded into the graph.
type item struct {
	line     int
	kind     itemKind
	entity   graph.Entity
	relation graph.Relation
	// raw is the line, a copy, when it is unreadable; otherwise nil.
	raw    []byte
	reason string // why it is unreadable
}

type itemKind uint8

const (
	unreadableItem itemKind = iota
	entityItem
	relationItem
)

func (d *decoder) parseLine(n int, line []byte) item {
	it := item{line: n}
	var typ, reason string
	if !d.scanObject(line) {
		reason = notObject(line)
	} else if typ, reason = d.lineType(line); reason == "" {
		switch typ {
		case "entity":
			it.kind = entityItem
			it.entity, reason = d.entity(line)
		case "relation":
			it.kind = relationItem
			it.relation, reason = d.relation(line)
		}
	}
	if reason != "" {
		return item{line: n, kind: unreadableItem, raw: bytes.Clone(line), reason: reason}
	}
	return it
}

// load adds a parsed line to the file.
func (f *File) load(it *item) {
	switch it.kind {
	case unreadableItem:
		f.Unreadable = append(f.Unreadable, it.raw)
		f.problem(it.line, Unreadable, it.reason)
	case entityItem:
		e := &it.entity
		ge, merged := f.Graph.LoadEntity(*e)
		if !merged {
			if repeated := len(e.Observations) - len(ge.Observations); repeated > 0 {
				f.problem(it.line, RepeatedObservations, fmt.Sprintf("dropped %s of entity %s, keeping the first of each",
					countOf(repeated, "repeated observation", "repeated observations"), quoteShort(e.Name)))
			}
			return
		}
		reason := fmt.Sprintf("merged duplicate entity %s into the first one", quoteShort(e.Name))
		if ge.EntityType != e.EntityType {
			reason += fmt.Sprintf(", dropping its entityType %s", quoteShort(e.EntityType))
		}
		if e.Extra != nil {
			reason += ", dropping its other members"
		}
		f.problem(it.line, MergedEntity, reason)
	case relationItem:
		r := &it.relation
		f.relationLines.add(it.line)
		if _, duplicate := f.Graph.LoadRelation(*r); duplicate {
			f.dropped(it.line, r)
		}
	}
}

// dropped reports the relation r of line n dropped as a duplicate.
func (f *File) dropped(n int, r *graph.Relation) {
	f.problem(n, DroppedRelation, fmt.Sprintf("dropped duplicate relation %s -[%s]-> %s",
		quoteShort(r.From), quoteShort(r.RelationType), quoteShort(r.To)))
}

// endLoad ends the graph's load (graph.EndLoad), which finds the
// relations that repeat one before them, and reports each at its line.
func (f *File) endLoad() {
	repeats := f.Graph.EndLoad()
	for _, r := range repeats {
		f.dropped(f.relationLines.at(r.Index), &r.Relation)
	}
	f.relationLines = nil
	if len(repeats) > 0 {
		slices.SortStableFunc(f.Problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	}
}

// lineRuns are the lines of the relations loaded, in order, as runs of
// lines that follow each other: a file's relations are mostly one run.
type lineRuns []lineRun

// lineRun: the relations loaded before+0, before+1, …, before+n-1 are on
// the lines first, first+1, …, first+n-1.
type lineRun struct{ first, before, n int }

// add records the line of the next relation loaded.
func (l *lineRuns) add(line int) {
	k := len(*l)
	if k > 0 {
		if r := &(*l)[k-1]; r.first+r.n == line {
			r.n++
			return
		}
	}
	before := 0
	if k > 0 {
		before = (*l)[k-1].before + (*l)[k-1].n
	}
	*l = append(*l, lineRun{line, before, 1})
}

// at returns the line of the relation loaded i-th, from 0.
func (l lineRuns) at(i int) int {
	k, _ := slices.BinarySearchFunc(l, i, func(r lineRun, i int) int {
		if i < r.before {
			return 1
		}
		if i >= r.before+r.n {
			return -1
		}
		return 0
	})
	return l[k].first + i - l[k].before
}

func (f *File) problem(n int, kind ProblemKind, reason string) {
	f.Problems = append(f.Problems, Problem{Line: n, Kind: kind, Reason: reason})
}

// countOf returns "1 observation" or "2 observations".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// notObject says why a line the scanner refused is not a JSON object.
func notObject(line []byte) string {
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			return fmt.Sprintf("not JSON: %v (at byte %d)", se, se.Offset)
		}
		return "not JSON: " + err.Error()
	}
	return "not a JSON object but " + describe(raw)
}

// describe names the JSON type of a valid value, as messages use it.
func describe(v []byte) string {
	switch v[skipSpace(v, 0)] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// scanObject scans line as one JSON object and records its members. It
// returns false when the line is anything else.
func (d *decoder) scanObject(b []byte) bool {
	d.members = d.members[:0]
	d.elems = d.elems[:0]
	for k := range d.last {
		d.last[k] = -1
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		m := member{keySpan: span{start: i + 1}}
		if i, m.keySpan.flags = scanString(b, i); i < 0 {
			return false
		}
		m.keySpan.end = i - 1
		m.key = d.keyOf(b, m.keySpan)
		if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
			return false
		}
		if i = skipSpace(b, i+1); i >= len(b) {
			return false
		}
		m.start = i
		switch {
		case b[i] == '"':
			m.str.start = i + 1
			i, m.str.flags = scanString(b, i)
			m.str.end = i - 1
		case b[i] == '[' && m.key == keyObservations:
			i = d.scanStrings(b, i, &m)
		default:
			i, d.stack = skipValue(b, i, 1, d.stack)
		}
		if i < 0 {
			return false
		}
		m.end = i
		if m.key != keyOther {
			d.last[m.key] = len(d.members)
		}
		d.members = append(d.members, m)
		if i = skipSpace(b, i); i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return skipSpace(b, i+1) == len(b)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return false
		}
	}
}

// keyOf identifies a member's key; escapes in it count, as in JSON.parse.
func (d *decoder) keyOf(b []byte, key span) keyID {
	if key.flags == 0 {
		return lookupKey(b[key.start:key.end])
	}
	d.scratch = appendUnquoted(d.scratch[:0], b[key.start:key.end], key.flags)
	return lookupKey(d.scratch)
}

// scanStrings scans the array at b[i], recording its strings in d.elems,
// and returns the index after it.
func (d *decoder) scanStrings(b []byte, i int, m *member) int {
	m.isArray, m.nonString = true, -1
	m.elemsStart, m.elemsEnd = len(d.elems), len(d.elems)
	start := i
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return i + 1
	}
	for n := 0; ; n++ {
		if i >= len(b) {
			return -1
		}
		if b[i] != '"' {
			m.nonString, m.nonStringAt = n, i
			d.elems = d.elems[:m.elemsStart]
			i, d.stack = skipValue(b, start, 1, d.stack)
			return i
		}
		s := span{start: i + 1}
		if i, s.flags = scanString(b, i); i < 0 {
			return -1
		}
		s.end = i - 1
		d.elems = append(d.elems, s)
		m.elemsEnd = len(d.elems)
		if i = skipSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ']':
			return i + 1
		case ',':
			i = skipSpace(b, i+1)
		default:
			return -1
		}
	}
}

// lineType returns the line's "type", or why it has none the reader knows.
func (d *decoder) lineType(b []byte) (typ, reason string) {
	j := d.last[keyType]
	if j < 0 {
		return "", `lacks "type"`
	}
	m := &d.members[j]
	if b[m.start] != '"' {
		return "", fmt.Sprintf(`"type" is %s, want a string`, describe(b[m.start:m.end]))
	}
	v := b[m.str.start:m.str.end]
	if m.str.flags != 0 {
		d.scratch = appendUnquoted(d.scratch[:0], v, m.str.flags)
		v = d.scratch
	}
	switch string(v) {
	case "entity":
		return "entity", ""
	case "relation":
		return "relation", ""
	}
	return "", fmt.Sprintf("unknown type %s", quoteShort(string(v)))
}

// quoteShort quotes s for a message, cut short when it is long.
func quoteShort(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

// require checks that the line has each key as a string (or, for
// observations, an array of strings), and says what is wrong if not.
func (d *decoder) require(b []byte, typ string, keys ...keyID) string {
	for _, k := range keys {
		j := d.last[k]
		if j < 0 {
			return fmt.Sprintf("%s lacks %q", typ, keyNames[k])
		}
		m := &d.members[j]
		switch {
		case k != keyObservations && b[m.start] != '"':
			return fmt.Sprintf("%s %q is %s, want a string", typ, keyNames[k], describe(b[m.start:m.end]))
		case k == keyObservations && !m.isArray:
			return fmt.Sprintf("%s %q is %s, want an array of strings", typ, keyNames[k], describe(b[m.start:m.end]))
		case k == keyObservations && m.nonString >= 0:
			return fmt.Sprintf("%s %q has %s at index %d, want only strings", typ, keyNames[k], describe(b[m.nonStringAt:m.end]), m.nonString)
		}
	}
	return ""
}

// A line's strings go to n slots at the end of d.strs, which newStrings
// makes, so parsing a line allocates no slice of its own.

// newStrings appends n empty slots to d.strs and returns the first's index.
func (d *decoder) newStrings(n int) int {
	k := len(d.strs)
	d.strs = append(d.strs, make([]string, n)...)
	return k
}

// decoded returns the content of the string b[s.start:s.end] (between its
// quotes) decoded: the line's own bytes when it has no escape and is valid
// UTF-8, else d.scratch, valid until the next call.
func (d *decoder) decoded(b []byte, s span) []byte {
	raw := b[s.start:s.end]
	if s.flags&strEscaped == 0 && (s.flags&strNonASCII == 0 || utf8.Valid(raw)) {
		return raw
	}
	d.scratch = appendUnquoted(d.scratch[:0], raw, s.flags)
	return d.scratch
}

// maxKinds bounds how many types one decoder holds once each: a file of
// more distinct types than that copies the others as it copies names.
const maxKinds = 4096

// kind returns the type p (an entity's or a relation's) as a string the
// decoder holds once for all the lines that have it.
func (d *decoder) kind(p []byte) string {
	if s, ok := d.kinds[string(p)]; ok { // looking up allocates nothing
		return s
	}
	s := d.text.place(p)
	if len(d.kinds) < maxKinds {
		if d.kinds == nil {
			d.kinds = make(map[string]string)
		}
		d.kinds[s] = s
	}
	return s
}

// textArena holds copies of strings end to end in blocks, so a string
// costs its bytes and no allocation of its own. A block stays in memory
// while any of its strings does; a block is never much bigger than what
// was placed before it (the first is 4 KiB, each next one as big as all
// before it, up to 256 KiB), so a small file holds little more than its
// text.
type textArena struct {
	block  []byte
	placed int // bytes placed so far
}

const (
	firstTextBlock = 4 << 10
	maxTextBlock   = 256 << 10
)

// place returns a copy of p.
func (a *textArena) place(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if cap(a.block)-len(a.block) < len(p) {
		a.block = make([]byte, 0, max(len(p), min(max(a.placed, firstTextBlock), maxTextBlock)))
	}
	start := len(a.block)
	a.block = append(a.block, p...)
	a.placed += len(p)
	return unsafe.String(&a.block[start], len(p))
}
