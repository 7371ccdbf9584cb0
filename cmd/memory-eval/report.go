package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// report is everything one run measured.
type report struct {
	CommandLine string               `json:"commandLine"`
	Date        string               `json:"date"`
	Set         string               `json:"set"`
	Servers     []*serverUnderTest   `json:"servers"`
	Memories    []memoryInfo         `json:"memories"`
	Groups      []groupScores        `json:"groups"`   // per memory, per language, all
	Kinds       []groupScores        `json:"kinds"`    // per kind of question, all memories
	Outcomes    map[string][]outcome `json:"outcomes"` // by server label, in question order
}

type memoryInfo struct {
	Name         string `json:"name"`
	Entities     int    `json:"entities"`
	Observations int    `json:"observations"`
	Relations    int    `json:"relations"`
}

// groupScores is one row of the table: a group of questions, scored per server.
type groupScores struct {
	Name      string            `json:"name"`
	Questions int               `json:"questions"`
	Scores    map[string]scores `json:"scores"` // by server label
}

// summarize fills Groups and Kinds from Outcomes: a group per memory, per
// language found in more than one memory, and for all memories, then one
// per kind of question.
func (r *report) summarize(questions []question) {
	byID := map[string]question{}
	for _, q := range questions {
		byID[q.ID] = q
	}
	group := func(name string, keep func(question) bool) groupScores { return r.group(name, byID, keep) }
	langMemories := map[string][]string{}
	var langs []string
	for _, m := range r.Memories {
		lang := memoryLanguages(questions, m.Name)
		r.Groups = append(r.Groups, group(fmt.Sprintf("%s (%s)", m.Name, strings.Join(lang, ", ")),
			func(q question) bool { return q.Memory == m.Name }))
		for _, l := range lang {
			if !slices.Contains(langs, l) {
				langs = append(langs, l)
			}
			langMemories[l] = append(langMemories[l], m.Name)
		}
	}
	for _, l := range langs {
		if len(langMemories[l]) > 1 {
			r.Groups = append(r.Groups, group("all "+l, func(q question) bool { return q.Language == l }))
		}
	}
	if len(r.Memories) > 1 {
		r.Groups = append(r.Groups, group("all", func(question) bool { return true }))
	}
	for _, k := range slices.Sorted(maps.Keys(questionKinds)) {
		if g := group(k, func(q question) bool { return q.Kind == k }); g.Questions > 0 {
			r.Kinds = append(r.Kinds, g)
		}
	}
}

// group scores, per server, the outcomes of the questions keep keeps.
func (r *report) group(name string, byID map[string]question, keep func(question) bool) groupScores {
	g := groupScores{Name: name, Scores: map[string]scores{}}
	for _, srv := range r.Servers {
		var outs []outcome
		for _, o := range r.Outcomes[srv.Label] {
			if keep(byID[o.ID]) {
				outs = append(outs, o)
			}
		}
		s := summarize(outs)
		g.Scores[srv.Label] = s
		g.Questions = s.Questions
	}
	return g
}

// memoryLanguages lists the languages of a memory's questions, first
// asked first.
func memoryLanguages(questions []question, memory string) []string {
	var lang []string
	for _, q := range questions {
		if q.Memory == memory && !slices.Contains(lang, q.Language) {
			lang = append(lang, q.Language)
		}
	}
	return lang
}

var columns = []string{"questions", "server", "recall@5", "recall@10", "MRR", "evidence@4000B", "p50 bytes", "p95 bytes", "errors"}

// rows is the table body shared by the text and markdown forms.
func (r *report) rows(groups []groupScores, first string) [][]string {
	out := [][]string{append([]string{first}, columns...)}
	for _, g := range groups {
		for i, srv := range r.Servers {
			s := g.Scores[srv.Label]
			name, n := g.Name, strconv.Itoa(g.Questions)
			if i > 0 {
				name, n = "", ""
			}
			out = append(out, []string{name, n, srv.Label,
				fmtShare(s.Recall5), fmtShare(s.Recall10), fmtShare(s.MRR), fmtShare(s.Evidence),
				strconv.Itoa(s.P50Bytes), strconv.Itoa(s.P95Bytes), strconv.Itoa(s.Errors)})
		}
	}
	return out
}

func fmtShare(f float64) string { return fmt.Sprintf("%.2f", f) }

func (r *report) writeTable(w io.Writer) {
	fmt.Fprintln(w, "search_nodes, each question verbatim as the query")
	writeAligned(w, r.rows(r.Groups, "memory"))
	fmt.Fprintln(w)
	writeAligned(w, r.rows(r.Kinds, "kind"))
	fmt.Fprintln(w)
	for _, srv := range r.Servers {
		fmt.Fprintf(w, "%s: %s\n", srv.Label, r.describe(srv))
	}
}

func (r *report) describe(srv *serverUnderTest) string {
	d := srv.Command
	if srv.Built != "" {
		d = srv.Built
	}
	if srv.Embeddings != "" {
		byWords := 0
		for _, o := range r.Outcomes[srv.Label] {
			if o.ByWords {
				byWords++
			}
		}
		d += fmt.Sprintf(", search by meaning through %s (%d of %d answers by words only: the endpoint was down, slow or answered badly)", srv.Embeddings, byWords, len(r.Outcomes[srv.Label]))
	}
	return d
}

func writeAligned(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 || i == 2 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func (r *report) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "Measured %s with `%s`.\n\n", r.Date, r.CommandLine)
	fmt.Fprintln(w, "| memory | entities | observations | relations |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, m := range r.Memories {
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", m.Name, m.Entities, m.Observations, m.Relations)
	}
	fmt.Fprintln(w)
	writeMarkdownTable(w, r.rows(r.Groups, "memory"))
	fmt.Fprintln(w)
	writeMarkdownTable(w, r.rows(r.Kinds, "kind"))
	fmt.Fprintln(w)
	for _, srv := range r.Servers {
		fmt.Fprintf(w, "- **%s**: `%s`\n", srv.Label, r.describe(srv))
	}
}

func writeMarkdownTable(w io.Writer, rows [][]string) {
	fmt.Fprintln(w, "| "+strings.Join(rows[0], " | ")+" |")
	align := make([]string, len(rows[0]))
	for i := range align {
		align[i] = "---:"
		if i == 0 || i == 2 {
			align[i] = "---"
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(align, "|")+"|")
	for _, row := range rows[1:] {
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
}

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
