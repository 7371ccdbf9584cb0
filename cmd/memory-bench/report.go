package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// report is everything one benchmark run measured.
type report struct {
	Machine     machineInfo
	CommandLine string
	Seed        uint64
	Settings    runSettings
	Servers     []*benchServer
	Sizes       []*sizeResult
}

// sizeResult is every server's run on the graph of one size.
type sizeResult struct {
	N            int
	Entities     int
	Observations int
	Relations    int
	FileBytes    int64
	Runs         map[string]*RunResult // by server label
}

type machineInfo struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
	Node      string `json:"node,omitempty"`
	Date      string `json:"date"`
}

func describeMachine() machineInfo {
	m := machineInfo{
		CPUs:      runtime.NumCPU(),
		CPUModel:  cpuModel(),
		GoVersion: runtime.Version(),
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		Date:      time.Now().Format("2006-01-02"),
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m.Node = strings.TrimSpace(string(out))
	}
	return m
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// fmtDuration formats a latency for progress lines.
func fmtDuration(d time.Duration) string {
	return fmtMillis(d) + " ms"
}

// fmtMillis formats d in milliseconds with three significant digits or so.
func fmtMillis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	case ms < 10:
		return fmt.Sprintf("%.2f", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f", ms)
	default:
		return fmt.Sprintf("%.0f", ms)
	}
}

func fmtMB(kb int64) string {
	if kb == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(kb)/1024)
}

func fmtRatio(theirs, ours float64) string {
	if theirs <= 0 || ours <= 0 {
		return ""
	}
	r := theirs / ours
	switch {
	case r < 10:
		return fmt.Sprintf("%.2fx", r)
	case r < 100:
		return fmt.Sprintf("%.1fx", r)
	default:
		return fmt.Sprintf("%.0fx", r)
	}
}

func withThousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// labels lists the server labels in run order.
func (r *report) labels() []string {
	var ls []string
	for _, s := range r.Servers {
		ls = append(ls, s.label)
	}
	return ls
}

// row is one line of a results table: a label and, per server, its cells.
type row struct {
	label  string
	cells  map[string][]string // label -> p50, p95, p99, calls
	ratios []string            // per server after the first: its value over the first's
}

// runRow is a row of the table drawn from each server's run as a whole
// rather than from one tool: its cells, and the value whose ratio the last
// column shows (nil: no ratio). cells returns nil when a run has nothing
// to show; an optional row with no cells at all is left out.
type runRow struct {
	label    string
	cells    func(run *RunResult) []string
	value    func(run *RunResult) float64
	optional bool
}

// rows builds the table body for one size; tables in text and markdown are
// both drawn from it: the tools in the order they ran, then the start, the
// memory and the writes.
//
// With wire set it reports the time to the answer's last byte instead of
// the client-seen latency, for the tools only.
func (r *report) rows(sz *sizeResult, wire bool) []row {
	rows := r.toolRows(sz, wire)
	if wire {
		return rows
	}
	for _, rr := range r.runRows(sz) {
		rw := row{label: rr.label, cells: map[string][]string{}}
		for _, l := range r.labels() {
			if run := sz.Runs[l]; run != nil {
				if cells := rr.cells(run); cells != nil {
					rw.cells[l] = cells
				}
			}
		}
		if rr.optional && len(rw.cells) == 0 {
			continue
		}
		if rr.value != nil {
			rw.ratios = r.ratios(sz, rr.value)
		}
		rows = append(rows, rw)
	}
	return rows
}

// toolRows is a row per tool case, in the order the servers ran them.
func (r *report) toolRows(sz *sizeResult, wire bool) []row {
	latency := func(t *ToolResult) Summary {
		if wire {
			return t.Wire
		}
		return t.Latency
	}
	var rows []row
	for _, toolLabel := range r.toolOrder(sz) {
		rw := row{label: toolLabel, cells: map[string][]string{}}
		for _, l := range r.labels() {
			if t := sz.Runs[l].tool(toolLabel); t != nil {
				rw.cells[l] = latencyCells(latency(t), t.Calls, t.FirstError)
			}
		}
		rw.ratios = r.ratios(sz, func(run *RunResult) float64 {
			if t := run.tool(toolLabel); t != nil {
				return float64(latency(t).P50)
			}
			return 0
		})
		rows = append(rows, rw)
	}
	return rows
}

// toolOrder lists the tool labels of a size, first seen first.
func (r *report) toolOrder(sz *sizeResult) []string {
	var order []string
	for _, l := range r.labels() {
		if run := sz.Runs[l]; run != nil {
			for _, t := range run.Tools {
				if !slices.Contains(order, t.Label) {
					order = append(order, t.Label)
				}
			}
		}
	}
	return order
}

// runRows are the rows after the tools. PostgreSQL's backends are not in
// the server's process tree, so they have a row of their own. After many
// small writes a server should hold what a fresh one loading the same file
// holds, not a little more per write.
func (r *report) runRows(sz *sizeResult) []runRow {
	rows := []runRow{
		{
			label: "start to first answer",
			cells: func(run *RunResult) []string { return latencyCells(run.Start, run.Start.Count, run.Error) },
			value: func(run *RunResult) float64 { return float64(run.Start.P50) },
		},
		{
			label: "peak RSS, server process (MB)",
			cells: func(run *RunResult) []string { return []string{fmtMB(run.Memory.ServerKB), "", "", ""} },
			value: func(run *RunResult) float64 { return float64(run.Memory.ServerKB) },
		},
		{
			label: sumRow,
			cells: func(run *RunResult) []string {
				return []string{fmtMB(run.Memory.SumKB), "", "", fmt.Sprintf("%d proc", len(run.Memory.Processes))}
			},
			value: func(run *RunResult) float64 { return float64(run.Memory.SumKB) },
		},
		{label: backendsRow, cells: backendsCells, optional: true},
	}
	writes := sz.writes()
	if writes == 0 {
		return rows
	}
	return append(rows,
		runRow{
			label: fmt.Sprintf("RSS after %d writes (MB)", writes),
			cells: ifWrites(func(w *WritesResult, _ *RunResult) []string {
				note := ""
				if w.Errors > 0 {
					note = fmt.Sprintf("%d errors", w.Errors)
				}
				return []string{fmtMB(w.RSSKB), "", "", note}
			}),
			value: writesValue(func(w *WritesResult) int64 { return w.RSSKB }),
		},
		runRow{
			label: "RSS, fresh server on that memory (MB)",
			cells: ifWrites(func(w *WritesResult, run *RunResult) []string {
				what := "file"
				if run.Store == "postgres" {
					what = "tables"
				}
				return []string{fmtMB(w.FreshRSSKB), "", "", fmt.Sprintf("%s %.1f MB", what, float64(w.FileBytes)/(1<<20))}
			}),
			value: writesValue(func(w *WritesResult) int64 { return w.FreshRSSKB }),
		})
}

// latencyCells are a summary's cells: p50, p95, p99 and the calls made,
// or what went wrong when no call succeeded.
func latencyCells(s Summary, calls int, firstErr string) []string {
	callCell := fmt.Sprint(calls)
	if errs := calls - s.Count; errs > 0 {
		callCell = fmt.Sprintf("%d (%d err)", calls, errs)
	}
	if s.Count == 0 {
		if firstErr == "" {
			return []string{"n/a", "", "", callCell}
		}
		return []string{"ERROR: " + truncate(serverproc.FirstLine(firstErr), 40), "", "", callCell}
	}
	return []string{fmtMillis(s.P50), fmtMillis(s.P95), fmtMillis(s.P99), callCell}
}

// ratios are each later server's value over the first's ("" where either
// did not run).
func (r *report) ratios(sz *sizeResult, get func(run *RunResult) float64) []string {
	labels := r.labels()
	var ratios []string
	for _, l := range labels[min(1, len(labels)):] {
		first, run := sz.Runs[labels[0]], sz.Runs[l]
		if first == nil || run == nil {
			ratios = append(ratios, "")
			continue
		}
		ratios = append(ratios, fmtRatio(get(run), get(first)))
	}
	return ratios
}

func backendsCells(run *RunResult) []string {
	b := run.Backends
	if b == nil {
		return nil
	}
	note := fmt.Sprintf("%d at once", b.AtOnce)
	if b.Seen == 0 {
		note = "not on this machine"
	}
	return []string{fmtMB(b.PrivateKB), "", "", note}
}

// writes is the number of writes the runs of a size made (0: none did).
func (sz *sizeResult) writes() int {
	n := 0
	for _, run := range sz.Runs {
		if run != nil && run.Writes != nil {
			n = max(n, run.Writes.Writes)
		}
	}
	return n
}

// ifWrites makes the cells of a writes row: none for a run without writes.
func ifWrites(cells func(w *WritesResult, run *RunResult) []string) func(*RunResult) []string {
	return func(run *RunResult) []string {
		if run.Writes == nil {
			return nil
		}
		return cells(run.Writes, run)
	}
}

func writesValue(get func(*WritesResult) int64) func(*RunResult) float64 {
	return func(run *RunResult) float64 {
		if run.Writes == nil {
			return 0
		}
		return float64(get(run.Writes))
	}
}

// sumRow labels the process tree's memory, wrappers (sh, npx) included.
const sumRow = "peak RSS, process tree sum (MB)"

// backendsRow labels the PostgreSQL backends' memory.
const backendsRow = "peak RSS, PostgreSQL backends, private (MB)"

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (run *RunResult) tool(label string) *ToolResult {
	if run == nil {
		return nil
	}
	for _, t := range run.Tools {
		if t.Label == label {
			return t
		}
	}
	return nil
}

func (sz *sizeResult) title() string {
	return fmt.Sprintf("N = %s: %s entities, %s observations, %s relations, file %.1f MB",
		withThousands(int64(sz.N)), withThousands(int64(sz.Entities)), withThousands(int64(sz.Observations)),
		withThousands(int64(sz.Relations)), float64(sz.FileBytes)/(1<<20))
}

// postgresMemoryNote says what the memory rows count when a server keeps
// its memory in PostgreSQL.
const postgresMemoryNote = "peak RSS of the server counts its process tree only (sh and the server), not PostgreSQL's processes; " +
	"the backends' row adds up the private memory (RssAnon) of the backends connected to the run's database, the most seen at one sample (once a second): " +
	"shared_buffers, shared by every backend, and the cluster's own processes are not in it"

// hasPostgres reports whether a server keeps its memory in PostgreSQL.
func (r *report) hasPostgres() bool {
	for _, s := range r.Servers {
		if s.where != "" {
			return true
		}
	}
	return false
}

// describe names a server's command and says how it was prepared.
func (r *report) describe(s *benchServer) string {
	d := s.built
	if d == "" {
		d = s.command
	}
	return fmt.Sprintf("%s (pre-run once before timing, %s, not counted)", d, fmtDuration(s.preRun))
}

// loadNote states the range of the machine's load average over the runs,
// since other work on a small machine moves every number.
func (r *report) loadNote() string {
	var loads []string
	for _, sz := range r.Sizes {
		for _, run := range sz.Runs {
			loads = append(loads, run.LoadBefore, run.LoadAfter)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range loads {
		if v, err := strconv.ParseFloat(l, 64); err == nil {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return ""
	}
	return fmt.Sprintf(" The machine's 1-minute load average was %.1f to %.1f during the runs.", lo, hi)
}
