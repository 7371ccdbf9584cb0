package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
)

// Search by meaning (internal/meaning), when Options.Meaning is set: the
// search tool asks for the query's vector outside the graph's lock, then
// fuses the word ranking with vector similarity. Any trouble with the
// endpoint answers by words, with a note saying so.

const meaningClosest = "No entity contains the whole query; these are the closest matches by the words they share with it and by meaning, best first."

// meaningNotReady says how far the background embedding has come, and
// why it does not go on when the endpoint does not answer.
func meaningNotReady(ix *meaning.Index, have, want int) string {
	if down, why := ix.Down(); down {
		return fmt.Sprintf("Search by meaning is unavailable: the embeddings endpoint at %s does not answer: %s (%d of %d texts embedded): these are matches by words only.", ix.Endpoint(), why, have, want)
	}
	return fmt.Sprintf("Search by meaning is not ready yet (%d of %d texts embedded): these are matches by words only.", have, want)
}

// meaningUnavailable says why a query got no vector.
func meaningUnavailable(ix *meaning.Index, err error) string {
	if errors.Is(err, meaning.ErrBusy) {
		return fmt.Sprintf("Search by meaning is unavailable for this query: %v. These are matches by words only.", err)
	}
	return fmt.Sprintf("Search by meaning is unavailable for this query: the embeddings endpoint at %s does not answer: %v. These are matches by words only.", ix.Endpoint(), err)
}

// searchWithMeaning answers search_nodes by words and meaning.
func (s *Server) searchWithMeaning(ctx context.Context, ix *meaning.Index, a searchArgs) (*mcp.CallToolResult, error) {
	byWords := func(note string) (*mcp.CallToolResult, error) {
		return s.page(ctx, s.searchView, a.Cursor, func(g *graph.Graph) (*answer.Answer, error) {
			ans := searchAnswer(g, a, graph.Window{})
			ans.Notes = append(ans.Notes, note)
			applyTimes(ans, a.timeArgs, graph.Window{})
			return ans, nil
		})
	}
	opening, cancel := context.WithTimeout(ctx, meaning.QueryTimeout)
	ix.Opened(opening)
	cancel()
	if ready, have, want := ix.Status(); !ready {
		return byWords(meaningNotReady(ix, have, want))
	}
	q, err := ix.Query(ctx, a.Query)
	if err != nil {
		return byWords(meaningUnavailable(ix, err))
	}
	return s.page(ctx, s.searchView, a.Cursor, func(g *graph.Graph) (*answer.Answer, error) {
		limit := searchLimit(a)
		ans := rankedAnswer(ranked(ix.Search(g, a.Query, q, limit)), a, limit, graph.Window{}, meaningClosest)
		applyTimes(ans, a.timeArgs, graph.Window{})
		return ans, nil
	})
}

// ranked is a search by words and meaning as the word ranking gives its
// hits, so that it is laid out as a search by words is (rankedAnswer). A
// hit found by meaning alone weighs, in the choice of evidence, what the
// hit ranked just above it does (the first word hit's score when it comes
// first, 1 when there is none), so the hits keep their fused order.
func ranked(found meaning.Result) graph.Ranked {
	r := graph.Ranked{Hits: make([]graph.Hit, len(found.Hits)), Exact: found.Exact, Relations: found.Relations}
	above := 1.0
	for _, h := range found.Hits {
		if h.Word != nil && h.Word.Score > 0 {
			above = h.Word.Score
			break
		}
	}
	for i, h := range found.Hits {
		if h.Word != nil {
			r.Hits[i] = *h.Word
			if h.Word.Score > 0 {
				above = h.Word.Score
			}
			continue
		}
		r.Hits[i] = graph.ClosestHit(h.Entity, above, h.Closest)
	}
	return r
}
