package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// evidenceWindow is how much of an answer's text an assistant is assumed to
// read closely: the answering observation must lie wholly within it.
const evidenceWindow = 4000

// outcome is what one question got from one server.
type outcome struct {
	ID          string `json:"id"`
	Rank        int    `json:"rank"`        // 1-based rank of the answering entity; 0 = not returned
	Evidence    bool   `json:"evidence"`    // observation within the first evidenceWindow bytes of text
	AnswerBytes int    `json:"answerBytes"` // bytes of all text items
	Returned    int    `json:"returned"`    // entities in the answer
	Error       string `json:"error,omitempty"`
	// ByWords is an answer of a server with search by meaning that says
	// it searched by words only (the endpoint was down, slow or answered
	// badly).
	ByWords bool `json:"byWords,omitempty"`
}

// judge scores one search_nodes result against question q.
func judge(q question, res *mcp.CallToolResult) outcome {
	o := outcome{ID: q.ID}
	text := answerText(res)
	o.AnswerBytes = len(text)
	names, err := entityNames(res)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	o.Returned = len(names)
	o.Rank = rankOf(names, q.Entity)
	o.Evidence = evidenceWithin(text, q.Observation, evidenceWindowFor(q, text))
	return o
}

// answerText is the result's text items concatenated in order, with no
// separator: what an assistant is given to read.
func answerText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// entityNames is the order of entities in the answer: from the structured
// result, or (for a server that sends none) from the first text item, which
// the reference's contract makes the same JSON.
func entityNames(res *mcp.CallToolResult) ([]string, error) {
	var raw []byte
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("structured result: %v", err)
		}
		raw = b
	} else {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				raw = []byte(t.Text)
				break
			}
		}
	}
	if raw == nil {
		return nil, errors.New("answer has neither a structured result nor text")
	}
	var g struct {
		Entities []struct {
			Name string `json:"name"`
		} `json:"entities"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("answer is not a graph: %v", err)
	}
	names := make([]string, len(g.Entities))
	for i, e := range g.Entities {
		names[i] = e.Name
	}
	return names, nil
}

// rankOf is the 1-based position of want in names, 0 when absent.
func rankOf(names []string, want string) int {
	return slices.Index(names, want) + 1
}

// evidenceWithin reports whether observation lies wholly within the first
// window bytes of text. The text of a search answer is JSON, so the
// observation is looked for as it is encoded there: escaped as JavaScript's
// JSON.stringify escapes (the reference, and our writer), as Go's
// encoding/json escapes by default (<, > and & as \u003c...), or raw, for a
// server that answers in prose. The earliest complete occurrence counts.
func evidenceWithin(text, observation string, window int) bool {
	if observation == "" {
		return false
	}
	for _, enc := range encodings(observation) {
		if i := strings.Index(text, enc); i >= 0 && i+len(enc) <= window {
			return true
		}
	}
	return false
}

// encodings are the forms an observation can take inside an answer's text.
func encodings(s string) []string {
	forms := []string{s}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s) // a string always encodes
		quoted := strings.TrimSuffix(b.String(), "\n")
		inner := quoted[1 : len(quoted)-1]
		if !slices.Contains(forms, inner) {
			forms = append(forms, inner)
		}
	}
	return forms
}

// scores summarises outcomes. Questions that failed (a tool error or an
// unreadable answer) count as misses and are also counted in Errors.
type scores struct {
	Questions int     `json:"questions"`
	Recall5   float64 `json:"recall5"`
	Recall10  float64 `json:"recall10"`
	MRR       float64 `json:"mrr"`
	Evidence  float64 `json:"evidence4000"`
	P50Bytes  int     `json:"p50Bytes"`
	P95Bytes  int     `json:"p95Bytes"`
	Errors    int     `json:"errors"`
}

func summarize(outs []outcome) scores {
	s := scores{Questions: len(outs)}
	if len(outs) == 0 {
		return s
	}
	sizes := make([]int, 0, len(outs))
	for _, o := range outs {
		sizes = append(sizes, o.AnswerBytes)
		if o.Error != "" {
			s.Errors++
			continue
		}
		if o.Rank >= 1 && o.Rank <= 5 {
			s.Recall5++
		}
		if o.Rank >= 1 && o.Rank <= 10 {
			s.Recall10++
		}
		if o.Rank >= 1 {
			s.MRR += 1 / float64(o.Rank)
		}
		if o.Evidence {
			s.Evidence++
		}
	}
	n := float64(len(outs))
	s.Recall5 /= n
	s.Recall10 /= n
	s.MRR /= n
	s.Evidence /= n
	slices.Sort(sizes)
	s.P50Bytes = percentile(sizes, 50)
	s.P95Bytes = percentile(sizes, 95)
	return s
}

// percentile is the nearest-rank percentile p (0–100] of sorted values.
func percentile(sorted []int, p float64) int {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank: the smallest value with at least p% of values at or below it.
	rank := int(math.Ceil(float64(len(sorted)) * p / 100))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}
