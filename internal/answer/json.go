package answer

import (
	"io"
	"strconv"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Results are written by hand rather than by encoding/json: the text item
// must read exactly as the reference's JSON.stringify(result, null, 2) (no
// HTML escaping, U+2028 raw), and a page is measured item by item while it
// is laid out, which reflection would make slow.

// JSON appends JSON, compact or indented with two spaces.
type JSON struct {
	buf      []byte
	indent   bool
	first    []bool // per open container: no element written yet
	afterKey bool
}

// Encode renders one value written by write, indented with two spaces or
// compact.
func Encode(indent bool, write func(*JSON)) []byte {
	w := &JSON{indent: indent}
	write(w)
	return w.buf
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
}

// Key writes an object member's key; its value follows.
func (w *JSON) Key(k string) {
	w.element()
	w.buf = jsonl.AppendString(w.buf, k)
	w.buf = append(w.buf, ':')
	if w.indent {
		w.buf = append(w.buf, ' ')
	}
	w.afterKey = true
}

// String writes a string value.
func (w *JSON) String(s string) {
	w.element()
	w.buf = jsonl.AppendString(w.buf, s)
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
	w.buf = strconv.AppendBool(w.buf, b)
}

// Int writes an integer value.
func (w *JSON) Int(n int) {
	w.element()
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
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
	w.Key("from")
	w.String(r.From)
	w.Key("to")
	w.String(r.To)
	w.Key("relationType")
	w.String(r.RelationType)
	w.Close('}')
}
