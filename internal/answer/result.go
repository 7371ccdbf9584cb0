package answer

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// encode is the one way a Result is made: write is encoded once, into the
// text item and the structured content together (s estimates their size,
// when known), and notes follow the text item.
func encode(write func(*JSON), s sizes, notes ...string) Result {
	text, structured := encodeBoth(write, s)
	return Result{Structured: structured, Texts: append([]string{textOf(text)}, notes...)}
}

// textOf returns b as a string without copying it: a whole answer's text
// is megabytes (a hundred at 100k entities), and b is never written again
// once encoded.
func textOf(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Graph is the whole graph as the resource holds it: every entity and
// relation, never cut. It takes a copy of the graph (Graph.ReadGraph), so
// that a write waits for no encoding.
func Graph(g graph.Snapshot) string {
	return textOf(Encode(true, func(w *JSON) {
		w.Open('{')
		w.Key("entities")
		w.Open('[')
		for _, e := range g.Entities {
			w.Entity(e.Name, e.EntityType, e.Observations)
		}
		w.Close(']')
		w.Key("relations")
		w.Open('[')
		for i := range g.Relations {
			w.Relation(&g.Relations[i])
		}
		w.Close(']')
		w.Close('}')
	}))
}

// A write tool's answer lists what the call did, so it is as big as the
// call: a call that creates thousands of entities would get an answer too
// big for the assistant that sent it. The answer keeps within the limit
// (docs/design.md §8): it lists the first items of its list, counts the
// rest in "omitted", and a last text item says so. Everything was saved;
// only the answer is shorter.

// listing is a write tool's answer listing its first n items.
type listing struct {
	write func(*JSON)
	// message, when not nil, is the text item instead of the JSON (the
	// delete tools, as the reference).
	message *string
	notes   []string // further text items
}

// fit returns the answer that list(n) gives for the largest n ≤ total
// whose text fits limit (0: no limit). what names the listed items
// ("entities created") in the text that says what was left out.
func fit(limit, total int, what string, list func(n int) listing) Result {
	texts := func(n int, l listing, first string) []string {
		t := []string{first}
		for _, note := range l.notes {
			if limit > 0 {
				// Notices that name every skipped entity, say: a
				// quarter of the limit each.
				note = clip(note, limit/4)
			}
			t = append(t, note)
		}
		if n < total {
			t = append(t, fmt.Sprintf("This answer lists %d of the %d %s, to fit the answer limit; all of them were saved (open_nodes or search_nodes shows them).", n, total, what))
		}
		return t
	}
	n := Shorten(limit, total, func(n int) []string {
		l := list(n)
		if l.message != nil {
			return texts(n, l, *l.message)
		}
		return texts(n, l, string(Encode(true, l.write)))
	})
	l := list(n)
	if l.message != nil {
		return Result{Structured: Encode(false, l.write), Texts: texts(n, l, *l.message)}
	}
	r := encode(l.write, sizes{})
	r.Texts = texts(n, l, r.Texts[0])
	return r
}

// clip cuts s to at most max bytes, on a rune boundary, saying so.
func clip(s string, max int) string {
	const mark = " … (cut to fit the answer limit)"
	if len(s) <= max || max <= len(mark) {
		return s
	}
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// list writes the member key: an array of n items written by item.
func list(w *JSON, key string, n int, item func(i int)) {
	w.Key(key)
	w.Open('[')
	for i := range n {
		item(i)
	}
	w.Close(']')
}

// omitted counts the items a write tool's answer leaves out, if any.
func omitted(w *JSON, n int) {
	if n > 0 {
		w.Key("omitted")
		w.Int(n)
	}
}

// CreatedEntities is create_entities' answer: the entities created, then
// the names skipped, within limit.
func CreatedEntities(res graph.CreateEntitiesResult, limit int) Result {
	total := len(res.Entities) + len(res.Skipped)
	notice := res.Notice()
	return fit(limit, total, "entities created or skipped", func(n int) listing {
		ents := res.Entities[:min(n, len(res.Entities))]
		skipped := res.Skipped[:max(0, min(n-len(res.Entities), len(res.Skipped)))]
		l := listing{write: func(w *JSON) {
			w.Open('{')
			list(w, "entities", len(ents), func(i int) { w.Entity(ents[i].Name, ents[i].EntityType, ents[i].Observations) })
			if len(skipped) > 0 {
				w.Key("skipped")
				w.Strings(skipped)
			}
			omitted(w, total-n)
			w.Close('}')
		}}
		if notice != "" {
			l.notes = []string{notice}
		}
		return l
	})
}

// CreatedRelations is create_relations' answer: the relations created,
// within limit.
func CreatedRelations(res graph.CreateRelationsResult, limit int) Result {
	total := len(res.Relations)
	return fit(limit, total, "relations created", func(n int) listing {
		return listing{write: func(w *JSON) {
			w.Open('{')
			list(w, "relations", n, func(i int) { w.Relation(&res.Relations[i]) })
			omitted(w, total-n)
			w.Close('}')
		}}
	})
}

// AddedObservations is add_observations' answer: the observations added,
// entity by entity, within limit. Every entity the call named stays
// listed, as the reference lists them; the observations are cut from the
// end.
func AddedObservations(res graph.AddObservationsResult, limit int) Result {
	total := 0
	for _, r := range res.Results {
		total += len(r.AddedObservations)
	}
	return fit(limit, total, "observations added", func(n int) listing {
		return listing{write: func(w *JSON) {
			w.Open('{')
			left := n
			list(w, "results", len(res.Results), func(i int) {
				r := res.Results[i]
				k := min(left, len(r.AddedObservations))
				left -= k
				w.Open('{')
				w.Key("entityName")
				w.String(r.EntityName)
				w.Key("addedObservations")
				w.Strings(r.AddedObservations[:k])
				w.Close('}')
			})
			omitted(w, total-n)
			w.Close('}')
		}}
	})
}

// Deleted is the answer of the delete tools: their message is the text
// item, and the names not found are listed within limit.
func Deleted(res graph.DeleteResult, limit int) Result {
	total := len(res.NotFound)
	message := res.Message
	if limit > 0 {
		message = clip(message, limit/4)
	}
	return fit(limit, total, "names not found", func(n int) listing {
		return listing{message: &message, write: func(w *JSON) {
			w.Open('{')
			w.Key("success")
			w.Bool(res.Success)
			w.Key("message")
			w.String(message)
			if n > 0 {
				w.Key("notFound")
				w.Strings(res.NotFound[:n])
			}
			if res.DeletedCount != nil {
				w.Key("deletedCount")
				w.Int(*res.DeletedCount)
			}
			omitted(w, total-n)
			w.Close('}')
		}}
	})
}
