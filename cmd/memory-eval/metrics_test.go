package main

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRankOf(t *testing.T) {
	names := []string{"a", "b", "c"}
	for want, rank := range map[string]int{"a": 1, "c": 3, "d": 0, "": 0} {
		if got := rankOf(names, want); got != rank {
			t.Errorf("rankOf(%q) = %d, want %d", want, got, rank)
		}
	}
}

func TestEvidenceWithin(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	obs := "Likes \"jazz\" & <blues>"
	js := `Likes \"jazz\" & <blues>`                    // JSON.stringify's form
	goHTML := `Likes \"jazz\" \u0026 \u003cblues\u003e` // encoding/json's default form
	tests := []struct {
		name   string
		text   string
		obs    string
		window int
		want   bool
	}{
		{"raw text", "He " + obs, obs, 4000, true},
		{"JSON-escaped as JavaScript does", `{"observations": ["` + js + `"]}`, obs, 4000, true},
		{"JSON-escaped with HTML escapes", `["` + goHTML + `"]`, obs, 4000, true},
		{"ends exactly at the window", pad(4000-len(js)) + js, obs, 4000, true},
		{"ends one byte past the window", pad(4001-len(js)) + js, obs, 4000, false},
		{"absent", `{"entities": []}`, obs, 4000, false},
		{"only a prefix in the text", `["Likes \"jazz\""]`, obs, 4000, false},
		{"Japanese is not escaped", `["毎朝コーヒーを飲む"]`, "毎朝コーヒーを飲む", 4000, true},
		{"Cyrillic with a newline", `["Живёт в Казани\nс 2019 года"]`, "Живёт в Казани\nс 2019 года", 4000, true},
		{"empty observation never counts", "anything", "", 4000, false},
		{"an earlier complete copy counts", obs + pad(5000) + obs, obs, 4000, true},
	}
	for _, tt := range tests {
		if got := evidenceWithin(tt.text, tt.obs, tt.window); got != tt.want {
			t.Errorf("%s: evidenceWithin = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	sorted := []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for p, want := range map[float64]int{50: 50, 95: 100, 90: 90, 10: 10, 1: 10, 100: 100} {
		if got := percentile(sorted, p); got != want {
			t.Errorf("percentile(%v) = %d, want %d", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of nothing = %d, want 0", got)
	}
	if got := percentile([]int{7}, 95); got != 7 {
		t.Errorf("percentile of one value = %d, want 7", got)
	}
}

func TestSummarize(t *testing.T) {
	outs := []outcome{
		{ID: "1", Rank: 1, Evidence: true, AnswerBytes: 100},
		{ID: "2", Rank: 4, Evidence: true, AnswerBytes: 300},
		{ID: "3", Rank: 7, AnswerBytes: 200},
		{ID: "4", Rank: 0, AnswerBytes: 40},
		{ID: "5", Rank: 1, Evidence: true, AnswerBytes: 0, Error: "search_nodes: tool error"},
	}
	s := summarize(outs)
	want := scores{
		Questions: 5,
		Recall5:   2.0 / 5,
		Recall10:  3.0 / 5,
		MRR:       (1 + 1.0/4 + 1.0/7) / 5,
		Evidence:  2.0 / 5,
		P50Bytes:  100,
		P95Bytes:  300,
		Errors:    1,
	}
	if s != want {
		t.Errorf("summarize =\n %+v\nwant\n %+v", s, want)
	}
	if got := summarize(nil); got != (scores{}) {
		t.Errorf("summarize(nil) = %+v, want zero", got)
	}
}

func TestJudge(t *testing.T) {
	q := question{ID: "q", Entity: "Bob", Observation: "Prefers tea"}
	graphText := `{"entities":[{"name":"Alice","observations":["x"]},{"name":"Bob","observations":["Prefers tea"]}],"relations":[]}`
	structured := map[string]any{"entities": []any{
		map[string]any{"name": "Alice"}, map[string]any{"name": "Bob"},
	}}
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want outcome
	}{
		{
			name: "structured result gives the order",
			res: &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: graphText}, &mcp.TextContent{Text: "note"}},
				StructuredContent: structured,
			},
			want: outcome{ID: "q", Rank: 2, Evidence: true, AnswerBytes: len(graphText) + 4, Returned: 2},
		},
		{
			name: "first text item when there is no structured result",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: graphText}}},
			want: outcome{ID: "q", Rank: 2, Evidence: true, AnswerBytes: len(graphText), Returned: 2},
		},
		{
			name: "empty answer",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"entities":[],"relations":[]}`}}},
			want: outcome{ID: "q", AnswerBytes: 30},
		},
		{
			name: "answer that is not a graph",
			res:  &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no"}}},
			want: outcome{ID: "q", AnswerBytes: 2, Error: "answer is not a graph: invalid character 'o' in literal null (expecting 'u')"},
		},
	}
	for _, tt := range tests {
		if got := judge(q, tt.res); got != tt.want {
			t.Errorf("%s: judge =\n %+v\nwant\n %+v", tt.name, got, tt.want)
		}
	}
}
