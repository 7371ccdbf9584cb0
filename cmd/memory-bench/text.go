package main

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/width"
)

// writeTable prints one size's results as an aligned text table, followed
// by errors, wrong answers and notes.
func (r *report) writeTable(w io.Writer, sz *sizeResult) {
	fmt.Fprintf(w, "\n== %s ==\n", sz.title())
	fmt.Fprintf(w, "latencies in ms as the MCP client sees them (%s); %d warm-up calls per tool first\n",
		r.Settings.client.describe(), r.Settings.warmups)
	if r.Settings.client.ts != nil {
		fmt.Fprintln(w, tsClientNote)
	}
	for _, s := range r.Servers {
		fmt.Fprintf(w, "%s: %s\n", s.label, r.describe(s))
		if s.where != "" {
			fmt.Fprintf(w, "  memory in %s\n", s.where)
		}
	}
	if r.hasPostgres() {
		fmt.Fprintln(w, postgresMemoryNote)
	}
	writeAligned(w, r.grid(r.rows(sz, false), textColumns, " p50"))
	fmt.Fprintf(w, "\nthe same calls timed to the answer's last byte on the pipe (server time, without %s), ms:\n", r.Settings.client.work())
	writeAligned(w, r.grid(r.rows(sz, true), textColumns, " p50"))
	for _, note := range r.notes(sz) {
		fmt.Fprintln(w, note)
	}
}

// grid lays rows out as a table, header first: per server the first
// len(columns) cells of each row under the given column names (the first
// prefixed with the server's label), "-" where a server has no row, and
// each later server's ratio to the first, headed "later/first" +
// ratioSuffix.
func (r *report) grid(rows []row, columns []string, ratioSuffix string) [][]string {
	labels := r.labels()
	header := []string{"tool"}
	for _, l := range labels {
		header = append(header, strings.TrimSpace(l+" "+columns[0]))
		header = append(header, columns[1:]...)
	}
	for _, l := range labels[min(1, len(labels)):] {
		header = append(header, fmt.Sprintf("%s/%s", l, labels[0])+ratioSuffix)
	}
	table := [][]string{header}
	for _, rw := range rows {
		line := []string{rw.label}
		for _, l := range labels {
			cells := rw.cells[l]
			if cells == nil {
				cells = []string{"-", "", "", ""}
			}
			line = append(line, cells[:len(columns)]...)
		}
		line = append(line, rw.ratios...)
		table = append(table, line)
	}
	return table
}

// textColumns are the text table's cells per server.
var textColumns = []string{"p50", "p95", "p99", "calls"}

// notes lists, per server, errors, wrong answers, budget cut-offs and the
// number of entities each search returned.
func (r *report) notes(sz *sizeResult) []string {
	var notes []string
	for _, l := range r.labels() {
		if run := sz.Runs[l]; run != nil {
			notes = append(notes, r.runNotes(l, run)...)
		}
	}
	return notes
}

// runNotes are one server's notes, each marked with its label.
func (r *report) runNotes(l string, run *RunResult) []string {
	var notes []string
	add := func(format string, a ...any) {
		notes = append(notes, fmt.Sprintf("[%s] "+format, append([]any{l}, a...)...))
	}
	if run.Error != "" {
		add("ERROR: %s", run.Error)
	}
	if run.MemoryNote != "" {
		add("memory: %s", run.MemoryNote)
	}
	if run.LoadBefore != "" {
		add("machine load average (1 min) before / after the run: %s / %s", run.LoadBefore, run.LoadAfter)
	}
	var hits []string
	for _, t := range run.Tools {
		r.toolNotes(t, add)
		if t.Tool == "search_nodes" && t.Entities >= 0 {
			hits = append(hits, fmt.Sprint(t.Entities))
		}
	}
	if len(hits) > 0 {
		add("search_nodes entities returned (rare, common, two words, Japanese): %s", strings.Join(hits, ", "))
	}
	if len(run.Memory.Processes) > 0 {
		add("process tree (peak RSS): %s; server process: %s", strings.Join(run.Memory.Processes, ", "), run.Memory.ServerProcess)
	}
	return notes
}

// toolNotes adds one tool's failed calls, wrong answers, note, and answers
// too big for the TypeScript client's defaults.
func (r *report) toolNotes(t *ToolResult, add func(format string, a ...any)) {
	if t.Errors > 0 {
		add("%s: %d of %d measured calls failed (%d counting warm-ups): %s",
			t.Label, countMeasuredErrors(t), t.Calls, t.Errors, t.FirstError)
	}
	for _, p := range t.Problems {
		add("%s: WRONG ANSWER in %d of %d answers checked: %s", t.Label, t.WrongAnswers, t.Checked, p)
	}
	if t.Note != "" {
		add("%s: %s", t.Label, t.Note)
	}
	if r.Settings.client.ts != nil && t.AnswerBytes > tsStdioMaxMessage {
		add("%s: answers of up to %.1f MB, more than the %d MiB at which the TypeScript SDK's StdioClientTransport stops by default: a host on its defaults gets no answer",
			t.Label, float64(t.AnswerBytes)/1e6, tsStdioMaxMessage>>20)
	}
}

// countMeasuredErrors is the number of failed measured calls.
func countMeasuredErrors(t *ToolResult) int {
	return t.Calls - len(t.Samples)
}

// writeAligned prints rows with the first column left-aligned and the rest
// right-aligned, measuring width in terminal cells (Japanese takes two).
func writeAligned(w io.Writer, rows [][]string) {
	var widths []int
	for _, rw := range rows {
		for i, c := range rw {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	for _, rw := range rows {
		var b strings.Builder
		for i, c := range rw {
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
