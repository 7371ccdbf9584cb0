package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// writeMarkdown prints a README-ready section: the machine, the exact
// command, the servers, how it measured, and two tables per size.
func (r *report) writeMarkdown(w io.Writer) {
	r.writeMarkdownIntro(w)
	for _, sz := range r.Sizes {
		fmt.Fprintf(w, "\n#### %s\n\n", sz.title())
		var rows []row
		for _, rw := range r.rows(sz, false) {
			if rw.label != sumRow { // wrappers (sh, npx) included: the text table has it
				rows = append(rows, rw)
			}
		}
		writeMarkdownTable(w, r.grid(rows, []string{"p50", "p95", "p99"}, " p50"))
		fmt.Fprintf(w, "\nTime to the answer's last byte (server time, without %s), p50 ms:\n\n", r.Settings.client.work())
		writeMarkdownTable(w, r.grid(r.rows(sz, true), []string{""}, ""))
		r.writeMarkdownProblems(w, sz)
	}
}

// writeMarkdownIntro prints the section's heading and what every table
// of it shares.
func (r *report) writeMarkdownIntro(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "### Benchmark\n\n")
	fmt.Fprintf(w, "Measured %s on %d CPUs (`nproc`), %s, %s, %s", m.Date, m.CPUs, m.CPUModel, m.OS, m.GoVersion)
	if m.Node != "" {
		fmt.Fprintf(w, ", Node %s", m.Node)
	}
	fmt.Fprintf(w, ", with:\n\n```sh\n%s\n```\n\n", r.CommandLine)
	for _, s := range r.Servers {
		if s.built != "" {
			fmt.Fprintf(w, "- **%s**: %s", s.label, s.built)
		} else {
			fmt.Fprintf(w, "- **%s**: `%s`", s.label, s.command)
		}
		if s.where != "" {
			fmt.Fprintf(w, ", memory in %s", s.where)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nEach graph has N entities with %d observations each (mixed English, Japanese and Russian text) and 2N relations, "+
		"generated with seed %d. Latencies are milliseconds from sending `tools/call` to receiving the answer, "+
		"as %s sees them over stdio (protocol %s), after %d warm-up calls per tool; "+
		"up to %d measured calls per tool, fewer (but at least %d) once a tool has run for %s. "+
		"Each server command was run once before timing, so npx's download is not counted; "+
		"start to first answer is process start to the first `open_nodes` answer, median of %d starts. "+
		"Peak RSS is the VmHWM of the server process (wrappers such as sh and npx not counted).%s\n",
		testgraph.ObservationsPerEntity, r.Seed, r.Settings.client.markdownName(), r.Settings.client.protocol, r.Settings.warmups,
		r.Settings.iters, r.Settings.minIters, r.Settings.budget, r.Settings.starts, r.loadNote())
	if r.Settings.client.ts != nil {
		fmt.Fprintf(w, "\n%s\n", tsClientNote)
	}
	if r.hasPostgres() {
		fmt.Fprintf(w, "\nEach PostgreSQL run had a new database whose memory \"default\" held exactly the generated graph, imported before the server started. "+
			"Its peak RSS is the server's alone; %s.\n", strings.TrimPrefix(postgresMemoryNote, "peak RSS of the server counts its process tree only (sh and the server), not PostgreSQL's processes; "))
	}
}

// writeMarkdownTable prints a grid, header first, as a markdown table with
// the first column left-aligned and the others right-aligned.
func writeMarkdownTable(w io.Writer, grid [][]string) {
	for i, line := range grid {
		var b strings.Builder
		b.WriteString("|")
		for j, cell := range line {
			if i > 0 && j == 0 {
				cell = strings.ReplaceAll(cell, "|", `\|`)
			}
			b.WriteString(" " + cell + " |")
		}
		fmt.Fprintln(w, b.String())
		if i == 0 {
			fmt.Fprintln(w, "|---|"+strings.Repeat("--:|", len(line)-1))
		}
	}
}

// writeMarkdownProblems lists a size's errors, wrong answers and memory
// notes under its tables.
func (r *report) writeMarkdownProblems(w io.Writer, sz *sizeResult) {
	var problems []string
	for _, n := range r.notes(sz) {
		if strings.Contains(n, "ERROR") || strings.Contains(n, "WRONG ANSWER") || strings.Contains(n, "failed") || strings.Contains(n, "] memory: ") {
			problems = append(problems, n)
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(w)
		for _, p := range problems {
			fmt.Fprintf(w, "- %s\n", p)
		}
	}
}
