package server

import (
	"strconv"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Results are written by hand rather than by encoding/json: a read_graph of
// a big memory is megabytes of JSON, reflection made it as slow as the
// reference server, and the text item must read exactly as the reference's
// JSON.stringify(result, null, 2) (no HTML escaping, U+2028 raw).

// jsonWriter appends JSON, compact or indented with two spaces.
type jsonWriter struct {
	buf      []byte
	indent   bool
	first    []bool // per open container: no element written yet
	afterKey bool
}

// encodeJSON renders one result written by write.
func encodeJSON(indent bool, write func(*jsonWriter)) []byte {
	w := &jsonWriter{indent: indent}
	write(w)
	return w.buf
}

func (w *jsonWriter) newline() {
	w.buf = append(w.buf, '\n')
	for range len(w.first) {
		w.buf = append(w.buf, ' ', ' ')
	}
}

// element prepares for a value: after a key nothing, in a container a comma
// after the first element and, when indenting, a new line.
func (w *jsonWriter) element() {
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

func (w *jsonWriter) open(c byte) {
	w.element()
	w.buf = append(w.buf, c)
	w.first = append(w.first, true)
}

func (w *jsonWriter) close(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	if !empty && w.indent {
		w.newline()
	}
	w.buf = append(w.buf, c)
}

func (w *jsonWriter) key(k string) {
	w.element()
	w.appendString(k)
	w.buf = append(w.buf, ':')
	if w.indent {
		w.buf = append(w.buf, ' ')
	}
	w.afterKey = true
}

func (w *jsonWriter) str(s string) {
	w.element()
	w.appendString(s)
}

func (w *jsonWriter) appendString(s string) {
	w.buf = jsonl.AppendString(w.buf, s)
}

func (w *jsonWriter) strings(list []string) {
	w.open('[')
	for _, s := range list {
		w.str(s)
	}
	w.close(']')
}

func (w *jsonWriter) boolean(b bool) {
	w.element()
	w.buf = strconv.AppendBool(w.buf, b)
}

func (w *jsonWriter) integer(n int) {
	w.element()
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
}

func (w *jsonWriter) entity(name, entityType string, observations []string) {
	w.open('{')
	w.key("name")
	w.str(name)
	w.key("entityType")
	w.str(entityType)
	w.key("observations")
	w.strings(observations)
	w.close('}')
}

func (w *jsonWriter) relation(r *graph.Relation) {
	w.open('{')
	w.key("from")
	w.str(r.From)
	w.key("to")
	w.str(r.To)
	w.key("relationType")
	w.str(r.RelationType)
	w.close('}')
}

func writeSelection(sel graph.Selection) func(*jsonWriter) {
	return func(w *jsonWriter) {
		w.open('{')
		w.key("entities")
		w.open('[')
		for _, e := range sel.Entities {
			w.entity(e.Name, e.EntityType, e.Observations)
		}
		w.close(']')
		w.key("relations")
		w.open('[')
		for _, r := range sel.Relations {
			w.relation(r)
		}
		w.close(']')
		w.close('}')
	}
}

func writeCreatedEntities(res graph.CreateEntitiesResult) func(*jsonWriter) {
	return func(w *jsonWriter) {
		w.open('{')
		w.key("entities")
		w.open('[')
		for _, e := range res.Entities {
			w.entity(e.Name, e.EntityType, e.Observations)
		}
		w.close(']')
		if len(res.Skipped) > 0 {
			w.key("skipped")
			w.strings(res.Skipped)
		}
		w.close('}')
	}
}

func writeCreatedRelations(res graph.CreateRelationsResult) func(*jsonWriter) {
	return func(w *jsonWriter) {
		w.open('{')
		w.key("relations")
		w.open('[')
		for i := range res.Relations {
			w.relation(&res.Relations[i])
		}
		w.close(']')
		w.close('}')
	}
}

func writeAddedObservations(res graph.AddObservationsResult) func(*jsonWriter) {
	return func(w *jsonWriter) {
		w.open('{')
		w.key("results")
		w.open('[')
		for _, r := range res.Results {
			w.open('{')
			w.key("entityName")
			w.str(r.EntityName)
			w.key("addedObservations")
			w.strings(r.AddedObservations)
			w.close('}')
		}
		w.close(']')
		w.close('}')
	}
}

func writeDeleted(res graph.DeleteResult) func(*jsonWriter) {
	return func(w *jsonWriter) {
		w.open('{')
		w.key("success")
		w.boolean(res.Success)
		w.key("message")
		w.str(res.Message)
		if len(res.NotFound) > 0 {
			w.key("notFound")
			w.strings(res.NotFound)
		}
		if res.DeletedCount != nil {
			w.key("deletedCount")
			w.integer(*res.DeletedCount)
		}
		w.close('}')
	}
}
