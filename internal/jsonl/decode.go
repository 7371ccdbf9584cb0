package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

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
// Decode does not keep data: the graph's strings and the unreadable lines
// are copies.
func Decode(data []byte) *File { return decode(data, len(data) >= pipelineMin) }

// Files from pipelineMin bytes up are parsed and loaded in a pipeline of
// batchLen lines.
const (
	pipelineMin = 1 << 20
	batchLen    = 256
)

func decode(data []byte, pipelined bool) *File {
	f := &File{Graph: graph.New()}
	if !pipelined {
		var d decoder
		forEachLine(data, func(n int, line []byte) {
			it := d.parseLine(n, line)
			f.load(&it)
		})
		return f
	}

	// A big file is parsed on a second goroutine while this one loads the
	// graph: the two take about as long as each other.
	batches := make(chan []item, 4)
	free := make(chan []item, 4)
	go func() {
		defer close(batches)
		var d decoder
		batch := make([]item, 0, batchLen)
		forEachLine(data, func(n int, line []byte) {
			batch = append(batch, d.parseLine(n, line))
			if len(batch) == batchLen {
				batches <- batch
				select {
				case batch = <-free:
				default:
					batch = make([]item, 0, batchLen)
				}
			}
		})
		batches <- batch
	}()
	for batch := range batches {
		for i := range batch {
			f.load(&batch[i])
		}
		clear(batch)
		select {
		case free <- batch[:0]:
		default:
		}
	}
	return f
}

// forEachLine calls fn for each line of data that is not blank, with its
// 1-based number, trimmed.
func forEachLine(data []byte, fn func(n int, line []byte)) {
	for n := 1; len(data) > 0; n++ {
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
	numKeys
)

var keyNames = [numKeys]string{"", "type", "name", "entityType", "observations", "from", "to", "relationType"}

// The members each kind of line knows; any other member is kept as Extra.
const (
	entityKeys   = 1<<keyType | 1<<keyName | 1<<keyEntityType | 1<<keyObservations
	relationKeys = 1<<keyType | 1<<keyFrom | 1<<keyTo | 1<<keyRelationType
)

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
	// elems[elems0:elems1], or bad is the index of the first element that
	// is not a string (-1 when all are) and badAt where it starts.
	isArray        bool
	elems0, elems1 int
	bad, badAt     int
}

// decoder holds the buffers the lines of one file reuse.
type decoder struct {
	members []member
	last    [numKeys]int // index in members of the last member with each key, or -1
	elems   []span
	stack   []byte
	text    []byte // the decoded strings of a line, end to end
	ends    []int  // where each decoded string ends in text
}

// item is what a line holds, parsed but not yet loaded into the graph.
type item struct {
	line     int
	kind     itemKind
	entity   graph.Entity
	relation graph.Relation
	raw      []byte // an unreadable line, copied
	reason   string // why it is unreadable
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
		f.problem(it.line, it.reason)
	case entityItem:
		e := &it.entity
		if !f.Graph.LoadEntity(*e) {
			return
		}
		reason := fmt.Sprintf("merged duplicate entity %s into the first one", quoteShort(e.Name))
		if first := f.Graph.Entity(e.Name); first.EntityType != e.EntityType {
			reason += fmt.Sprintf(", dropping its entityType %s", quoteShort(e.EntityType))
		}
		if e.Extra != nil {
			reason += ", dropping its other members"
		}
		f.problem(it.line, reason)
	case relationItem:
		r := &it.relation
		if f.Graph.LoadRelation(*r) {
			f.problem(it.line, fmt.Sprintf("dropped duplicate relation %s -[%s]-> %s",
				quoteShort(r.From), quoteShort(r.RelationType), quoteShort(r.To)))
		}
	}
}

func (f *File) problem(n int, reason string) {
	f.Problems = append(f.Problems, Problem{Line: n, Reason: reason})
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
	d.text = appendUnquoted(d.text[:0], b[key.start:key.end], key.flags)
	return lookupKey(d.text)
}

// scanStrings scans the array at b[i], recording its strings in d.elems,
// and returns the index after it.
func (d *decoder) scanStrings(b []byte, i int, m *member) int {
	m.isArray, m.bad = true, -1
	m.elems0, m.elems1 = len(d.elems), len(d.elems)
	start := i
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return i + 1
	}
	for n := 0; ; n++ {
		if i >= len(b) {
			return -1
		}
		if b[i] != '"' {
			m.bad, m.badAt = n, i
			d.elems = d.elems[:m.elems0]
			i, d.stack = skipValue(b, start, 1, d.stack)
			return i
		}
		s := span{start: i + 1}
		if i, s.flags = scanString(b, i); i < 0 {
			return -1
		}
		s.end = i - 1
		d.elems = append(d.elems, s)
		m.elems1 = len(d.elems)
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
		d.text = appendUnquoted(d.text[:0], v, m.str.flags)
		v = d.text
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
		case k == keyObservations && m.bad >= 0:
			return fmt.Sprintf("%s %q has %s at index %d, want only strings", typ, keyNames[k], describe(b[m.badAt:m.end]), m.bad)
		}
	}
	return ""
}

// The strings a line keeps are decoded end to end into d.text and made into
// one string, which is then cut into them: one allocation for the line.

func (d *decoder) appendStrings(b []byte, spans ...span) {
	for _, s := range spans {
		d.text = appendUnquoted(d.text, b[s.start:s.end], s.flags)
		d.ends = append(d.ends, len(d.text))
	}
}

func (d *decoder) cutStrings(out []string) {
	text := string(d.text)
	start := 0
	for i, end := range d.ends {
		out[i] = text[start:end]
		start = end
	}
	d.text, d.ends = d.text[:0], d.ends[:0]
}

func (d *decoder) entity(b []byte) (graph.Entity, string) {
	if reason := d.require(b, "entity", keyName, keyEntityType, keyObservations); reason != "" {
		return graph.Entity{}, reason
	}
	extra, err := d.extra(b, entityKeys)
	if err != nil {
		return graph.Entity{}, err.Error()
	}
	obs := &d.members[d.last[keyObservations]]
	d.text, d.ends = d.text[:0], d.ends[:0]
	d.appendStrings(b, d.elems[obs.elems0:obs.elems1]...)
	d.appendStrings(b, d.members[d.last[keyName]].str, d.members[d.last[keyEntityType]].str)
	strs := make([]string, len(d.ends))
	d.cutStrings(strs)
	k := len(strs) - 2
	return graph.Entity{Name: strs[k], EntityType: strs[k+1], Observations: strs[:k:k], Extra: extra}, ""
}

func (d *decoder) relation(b []byte) (graph.Relation, string) {
	if reason := d.require(b, "relation", keyFrom, keyTo, keyRelationType); reason != "" {
		return graph.Relation{}, reason
	}
	extra, err := d.extra(b, relationKeys)
	if err != nil {
		return graph.Relation{}, err.Error()
	}
	d.text, d.ends = d.text[:0], d.ends[:0]
	d.appendStrings(b, d.members[d.last[keyFrom]].str, d.members[d.last[keyTo]].str, d.members[d.last[keyRelationType]].str)
	var strs [3]string
	d.cutStrings(strs[:])
	return graph.Relation{From: strs[0], To: strs[1], RelationType: strs[2], Extra: extra}, ""
}

// extra returns the members of the line whose keys are not in known, as
// Entity.Extra holds them: `,"key":value` each, compact, in line order, a
// repeated key once at its first place with its last value. It is nil when
// there are none.
func (d *decoder) extra(b []byte, known uint16) ([]byte, error) {
	type kept struct {
		key   string
		value []byte
	}
	var members []kept
	var index map[string]int
	for _, m := range d.members {
		if known&(1<<m.key) != 0 {
			continue
		}
		key := string(appendUnquoted(nil, b[m.keySpan.start:m.keySpan.end], m.keySpan.flags))
		var value bytes.Buffer
		if err := json.Compact(&value, b[m.start:m.end]); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err) // the scanner let through what encoding/json refuses
		}
		if j, ok := index[key]; ok {
			members[j].value = value.Bytes()
			continue
		}
		if index == nil {
			index = make(map[string]int)
		}
		index[key] = len(members)
		members = append(members, kept{key, value.Bytes()})
	}
	if members == nil {
		return nil, nil
	}
	var out []byte
	for _, m := range members {
		out = append(out, ',')
		out = AppendString(out, m.key)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return out, nil
}
