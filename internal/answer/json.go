package answer

import (
	"io"
	"strconv"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Results are written by hand rather than by encoding/json: the text item
// must read exactly as the reference's JSON.stringify(result, null, 2) (no
// HTML escaping, U+2028 raw), and a page is measured item by item while it
// is laid out, which reflection would make slow.

// JSON appends JSON, compact or indented with two spaces, or both at once.
type JSON struct {
	buf      []byte
	indent   bool
	first    []bool // per open container: no element written yet
	afterKey bool
	// both: buf is indented and compact gets the same value without the
	// white space. Every token is written to buf and then copied, so a
	// string is escaped once for both forms.
	both    bool
	compact []byte
}

// Encode renders one value written by write, indented with two spaces or
// compact.
func Encode(indent bool, write func(*JSON)) []byte {
	w := &JSON{indent: indent}
	write(w)
	return w.buf
}

// encodeBoth renders one value written by write in one pass, as the text
// item of a tool result shows it (indented with two spaces) and as its
// structured content (compact). sizes, when known, are about the bytes of
// each form: a big answer's buffers are then allocated once rather than
// grown and copied a few dozen times (which also leaves that much garbage
// behind, hundreds of megabytes for a whole graph of 100k entities).
func encodeBoth(write func(*JSON), s sizes) (indented, compact []byte) {
	w := &JSON{indent: true, both: true}
	if s.indented > 0 {
		w.buf, w.compact = make([]byte, 0, s.indented), make([]byte, 0, s.compact)
	}
	write(w)
	return w.buf, w.compact
}

// sizes estimates the bytes of an answer, compact and indented.
type sizes struct{ compact, indented int }

// token copies what was written to buf since start, a token with no white
// space in it, to the compact form.
func (w *JSON) token(start int) {
	if w.both {
		w.compact = append(w.compact, w.buf[start:]...)
	}
}

// NewJSON returns a writer for a value too big to hold at once: write it
// piece by piece and Flush after each piece.
func NewJSON(indent bool) *JSON { return &JSON{indent: indent} }

// Flush writes to dst what was written since the last Flush.
func (w *JSON) Flush(dst io.Writer) error {
	_, err := dst.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

func (w *JSON) newline() {
	w.buf = append(w.buf, '\n')
	for range len(w.first) {
		w.buf = append(w.buf, ' ', ' ')
	}
}

// element prepares for a value: after a key nothing, in a container a comma
// after the first element and, when indenting, a new line.
func (w *JSON) element() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.buf = append(w.buf, ',')
			w.token(len(w.buf) - 1)
		}
		w.first[n-1] = false
		if w.indent {
			w.newline()
		}
	}
}

// Open starts an object ('{') or array ('[').
func (w *JSON) Open(c byte) {
	w.element()
	w.buf = append(w.buf, c)
	w.token(len(w.buf) - 1)
	w.first = append(w.first, true)
}

// Close ends the innermost object ('}') or array (']').
func (w *JSON) Close(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	if !empty && w.indent {
		w.newline()
	}
	w.buf = append(w.buf, c)
	w.token(len(w.buf) - 1)
}

// Key writes an object member's key; its value follows.
func (w *JSON) Key(k string) {
	w.element()
	start := len(w.buf)
	w.buf = graph.AppendString(w.buf, k)
	w.buf = append(w.buf, ':')
	w.token(start)
	if w.indent {
		w.buf = append(w.buf, ' ')
	}
	w.afterKey = true
}

// String writes a string value.
func (w *JSON) String(s string) {
	w.element()
	start := len(w.buf)
	w.buf = graph.AppendString(w.buf, s)
	w.token(start)
}

// Strings writes an array of strings.
func (w *JSON) Strings(list []string) {
	w.Open('[')
	for _, s := range list {
		w.String(s)
	}
	w.Close(']')
}

// Bool writes a boolean value.
func (w *JSON) Bool(b bool) {
	w.element()
	start := len(w.buf)
	w.buf = strconv.AppendBool(w.buf, b)
	w.token(start)
}

// Null writes null.
func (w *JSON) Null() {
	w.element()
	start := len(w.buf)
	w.buf = append(w.buf, "null"...)
	w.token(start)
}

// Int writes an integer value.
func (w *JSON) Int(n int) {
	w.element()
	start := len(w.buf)
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	w.token(start)
}

// Entity writes an entity as the tools return it.
func (w *JSON) Entity(name, entityType string, observations []string) {
	w.Open('{')
	w.Key("name")
	w.String(name)
	w.Key("entityType")
	w.String(entityType)
	w.Key("observations")
	w.Strings(observations)
	w.Close('}')
}

// Relation writes a relation as the tools return it.
func (w *JSON) Relation(r *graph.Relation) {
	w.Open('{')
	w.relationMembers(r)
	w.Close('}')
}

// relationMembers writes a relation's three members, in the reference's
// order, inside an object the caller opened.
func (w *JSON) relationMembers(r *graph.Relation) {
	w.Key("from")
	w.String(r.From)
	w.Key("to")
	w.String(r.To)
	w.Key("relationType")
	w.String(r.RelationType)
}
