package server

import (
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// A write tool's result lists what the call did, so it is as big as the
// call: a call that creates thousands of entities would get an answer too
// big for the assistant that sent it. fit keeps it within the answer limit
// (docs/design.md §8): the result lists the first items of its list, counts
// the rest in "omitted", and a last text item says so. Everything was saved;
// only the answer is shorter.

// fit returns the tool result that result(n) gives for the largest n ≤
// total whose text fits the answer limit. what names the listed items
// ("entities created") in the text that says what was left out.
func (s *Server) fit(total int, what string, result func(n int) (write func(*answer.JSON), texts []string)) *mcp.CallToolResult {
	texts := func(n int) []string {
		_, t := result(n)
		t = clipTexts(t, s.opts.AnswerLimit)
		if n < total {
			t = append(t, fmt.Sprintf("This answer lists %d of the %d %s, to fit the answer limit; all of them were saved (open_nodes or search_nodes shows them).", n, total, what))
		}
		return t
	}
	n := answer.Shorten(s.opts.AnswerLimit, total, texts)
	write, _ := result(n)
	return toolResult(write, texts(n)...)
}

// clipTexts cuts the text items after the first (notices that name every
// skipped entity, say) to a quarter of limit each.
func clipTexts(texts []string, limit int) []string {
	if limit <= 0 {
		return texts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		if i > 0 {
			t = clip(t, limit/4)
		}
		out[i] = t
	}
	return out
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

func createdResult(res graph.CreateEntitiesResult, s *Server) *mcp.CallToolResult {
	total := len(res.Entities) + len(res.Skipped)
	return s.fit(total, "entities created or skipped", func(n int) (func(*answer.JSON), []string) {
		cut := res
		cut.Entities = res.Entities[:min(n, len(res.Entities))]
		cut.Skipped = res.Skipped[:max(0, min(n-len(res.Entities), len(res.Skipped)))]
		write := writeCreatedEntities(cut, total-n)
		texts := []string{string(answer.Encode(true, write))}
		if notice := res.Notice(); notice != "" {
			texts = append(texts, notice)
		}
		return write, texts
	})
}

func relationsResult(res graph.CreateRelationsResult, s *Server) *mcp.CallToolResult {
	total := len(res.Relations)
	return s.fit(total, "relations created", func(n int) (func(*answer.JSON), []string) {
		write := writeCreatedRelations(graph.CreateRelationsResult{Relations: res.Relations[:n]}, total-n)
		return write, []string{string(answer.Encode(true, write))}
	})
}

func addedResult(res graph.AddObservationsResult, s *Server) *mcp.CallToolResult {
	total := 0
	for _, r := range res.Results {
		total += len(r.AddedObservations)
	}
	return s.fit(total, "observations added", func(n int) (func(*answer.JSON), []string) {
		// The first n observations added, entity by entity; every entity
		// the call named stays listed, as the reference lists them.
		cut := graph.AddObservationsResult{Results: make([]graph.AddedObservations, len(res.Results))}
		left := n
		for i, r := range res.Results {
			k := min(left, len(r.AddedObservations))
			cut.Results[i] = graph.AddedObservations{EntityName: r.EntityName, AddedObservations: r.AddedObservations[:k]}
			left -= k
		}
		write := writeAddedObservations(cut, total-n)
		return write, []string{string(answer.Encode(true, write))}
	})
}

func deletedResult(res graph.DeleteResult, s *Server) *mcp.CallToolResult {
	total := len(res.NotFound)
	return s.fit(total, "names not found", func(n int) (func(*answer.JSON), []string) {
		cut := res
		cut.NotFound = res.NotFound[:n]
		if s.opts.AnswerLimit > 0 {
			cut.Message = clip(res.Message, s.opts.AnswerLimit/4)
		}
		return writeDeleted(cut, total-n), []string{cut.Message}
	})
}
