package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

var cmdCheck = &command{
	name:    "check",
	summary: "find unreadable lines, relations to missing entities, duplicates",
	help: `Exit code 0 when the memory file is clean, 1 when problems remain.

  --fix   repair what is safe, saying each thing done: remove relations to
          missing entities; rewrite duplicate entities merged (first type,
          observations united), duplicate relations once, and observations
          repeated within an entity once. The repair saves the file as the
          server does, so every other line it changes is listed too (a line
          in another form, blank lines, CRLF line ends). Unreadable lines
          are never changed: the server keeps them as they are (after the
          relations); edit them by hand.
`,
	run: runCheck,
}

// Finding is one problem check reports.
type Finding struct {
	Kind    string `json:"kind"` // unreadable, duplicate, dangling; rewritten: changed by --fix's save, no problem
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	Fixed   string `json:"fixed,omitempty"` // what --fix did, if anything
}

func runCheck(c *context_, args []string) error {
	fix := c.flags.Bool("fix", false, "")
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("check takes no arguments")
	}
	s, err := c.store(true)
	if err != nil {
		return err
	}
	data, err := readMemoryFile(s.Path())
	if err != nil {
		return err
	}
	problems := jsonl.Decode(data).Problems
	findings, duplicates := problemFindings(problems, *fix)
	var dangling []graph.Relation
	if err := s.View(func(g *graph.Graph) { dangling = g.DanglingRelations() }); err != nil {
		return err
	}
	var sideEffects []Finding
	if *fix && (len(dangling) > 0 || duplicates) {
		merged := mergedNames(data, problems)
		data = nil // repair reads the file again, under the lock
		if dangling, sideEffects, err = repair(s, duplicates, findings, merged); err != nil {
			return err
		}
	}
	findings = append(findings, danglingFindings(dangling, s, *fix)...)
	found := len(findings)
	findings = append(findings, sideEffects...)
	remaining := 0
	for _, f := range findings {
		if f.Kind == "unreadable" || f.Fixed == "" {
			remaining++
		}
	}
	if err := c.reportCheck(s.Path(), findings, found, remaining); err != nil {
		return err
	}
	if remaining > 0 {
		return errReported
	}
	return nil
}

// readMemoryFile reads the file check looks at; a file that is not there
// is an error, as a typo in --file must not pass as a clean memory.
func readMemoryFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("there is no memory file at %s; nothing to check", path)
	}
	return data, err
}

// danglingFindings are the findings for relations to missing entities
// (fix: removed).
func danglingFindings(dangling []graph.Relation, s *filestore.Store, fix bool) []Finding {
	var findings []Finding
	for _, r := range dangling {
		f := Finding{Kind: "dangling", Message: fmt.Sprintf("relation %s: %s", describeRelation(r), missingEnds(r, s))}
		if fix {
			f.Fixed = "removed the relation"
		}
		findings = append(findings, f)
	}
	return findings
}

// reportCheck prints the findings, as JSON or for a terminal.
func (c *context_) reportCheck(path string, findings []Finding, found, remaining int) error {
	if !c.json {
		c.printCheck(path, findings, found, remaining)
		return nil
	}
	if findings == nil {
		findings = []Finding{}
	}
	return c.printJSON(struct {
		File     string    `json:"file"`
		Findings []Finding `json:"findings"`
		Clean    bool      `json:"clean"`
	}{path, findings, remaining == 0})
}

// problemFindings turns what the reader reported into findings, and says
// whether a rewrite would repair any of them (fix: it will).
func problemFindings(problems []jsonl.Problem, fix bool) (findings []Finding, duplicates bool) {
	for _, p := range problems {
		f := Finding{Kind: "unreadable", Line: p.Line, Message: p.Reason}
		if p.Kind.Lossless() {
			f.Kind, duplicates = "duplicate", true
			if fix {
				f.Fixed = rewriteFix[p.Kind]
			}
		}
		findings = append(findings, f)
	}
	return findings, duplicates
}

// repair removes the relations to missing entities and, when the file has
// duplicates, saves it rewritten, in one write under the lock. It returns
// the relations it removed and what else the save changed (see
// rewrittenLines).
func repair(s *filestore.Store, duplicates bool, findings []Finding, merged map[string]bool) (removed []graph.Relation, sideEffects []Finding, err error) {
	ctx, stop := interruptible()
	defer stop()
	var before []byte
	_, err = s.Update(history.WithAuthor(ctx, history.Author{Tool: "check"}), func(g *graph.Graph) error {
		// Under the lock the file may have changed since it was checked:
		// repair what it holds now.
		before, _ = os.ReadFile(s.Path())
		removed = g.RemoveDanglingRelations()
		if duplicates {
			g.Rewrite()
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	after, err := os.ReadFile(s.Path())
	if err != nil {
		return nil, nil, err
	}
	return removed, rewrittenLines(before, after, explainedBy(findings, removed), merged), nil
}

// printCheck writes check's findings for a terminal, and a last line that
// says where the file stands: found of the findings are problems, and
// remaining of them are not fixed.
func (c *context_) printCheck(path string, findings []Finding, found, remaining int) {
	for _, f := range findings {
		where := ""
		if f.Line > 0 {
			where = "line " + strconv.Itoa(f.Line) + ": "
		}
		c.printf("%s%s\n", where, f.Message)
		if f.Fixed != "" {
			c.printf("  fixed: %s\n", f.Fixed)
		} else if f.Kind == "unreadable" {
			c.printf("  not fixed: the line is kept as it is; edit it by hand\n")
		}
	}
	unreadable := countKind(findings, "unreadable")
	switch {
	case len(findings) == 0:
		c.printf("%s: no problems found.\n", path)
	case remaining == 0:
		c.printf("%s: fixed %s.\n", path, plural(found, "problem", "problems"))
	case remaining > unreadable:
		c.printf("%s: %s. mcp-server-memory check --fix repairs %d of them.\n", path, plural(remaining, "problem", "problems"), remaining-unreadable)
	default:
		c.printf("%s: %s left to fix by hand.\n", path, plural(remaining, "problem", "problems"))
	}
}

// rewrittenLines reports what a repair changed in the file beyond the
// findings, so that check --fix says every change it made. A save writes
// every line as the server writes it, so the first line of an entity that
// duplicates were merged into changes, and so does a line in another form
// (members in another order, other spacing or escapes); blank lines, byte
// order marks and CRLF line ends go. Lines are compared by content,
// wherever the save put them. explained tells the lines a finding already
// covers: by number, or by what they hold (a relation removed).
func rewrittenLines(before, after []byte, explained func(n int, line string) bool, merged map[string]bool) []Finding {
	// Lines are told apart by a 64-bit hash: a big file is not held again
	// as strings, and a collision is as likely as a disk flipping a bit.
	seed := maphash.MakeSeed()
	kept := map[uint64]int{}
	for l := range bytes.Lines(after) {
		kept[maphash.Bytes(seed, bytes.TrimSuffix(l, []byte("\n")))]++
	}
	var out []Finding
	var t rewriteTally
	i := -1
	for b := range bytes.Lines(before) {
		i++
		b = t.strip(b)
		h := maphash.Bytes(seed, b)
		switch {
		case len(bytes.TrimSpace(b)) == 0:
			t.blank++
		case kept[h] > 0:
			kept[h]--
		case !explained(i+1, string(b)):
			if f, listed := t.rewritten(i+1, string(b), merged); listed {
				out = append(out, f)
			}
		}
	}
	return append(out, t.findings()...)
}

// rewriteTally counts what a save changed in a file's form.
type rewriteTally struct {
	blank, crlf, bom, reformatted int
}

// strip cuts the line end, a CR before it and byte order marks from a
// line, counting the last two.
func (t *rewriteTally) strip(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	if s := bytes.TrimRight(b, "\r"); len(s) != len(b) {
		t.crlf++
		b = s
	}
	if s := bytes.TrimLeft(b, "\uFEFF"); len(s) != len(b) {
		t.bom++
		b = s
	}
	return b
}

// rewritten describes line n, l, which the save wrote in another form.
// listed is false for a line counted only: past the first
// maxReformattedListed, a file another program wrote may differ in form
// on every line. A line duplicates were merged into is always listed.
func (t *rewriteTally) rewritten(n int, l string, merged map[string]bool) (f Finding, listed bool) {
	f = Finding{Kind: "rewritten", Line: n, Message: "written again in the form the server writes", Fixed: "rewrote the line"}
	listed = t.reformatted < maxReformattedListed
	if !listed && len(merged) == 0 {
		t.reformatted++ // counted, not described: reading it costs
		return f, false
	}
	id, _ := identify(l)
	switch {
	case id.Type == "entity" && merged[id.Name]:
		f.Message = fmt.Sprintf("entity %q: its duplicates were merged into this line", oneLine(id.Name))
		f.Fixed = "rewrote the line with their observations added"
		return f, true
	case id.Type == "entity":
		f.Message = fmt.Sprintf("entity %q, in the form the server writes", oneLine(id.Name))
	case id.Type == "relation":
		f.Message = fmt.Sprintf("relation %s, in the form the server writes", describeRelation(graph.Relation{From: id.From, To: id.To, RelationType: id.RelationType}))
	}
	t.reformatted++
	return f, listed
}

// findings are the tally's counted changes: the lines rewritten in form
// past those listed, blank lines, byte order marks and CRLF line ends.
func (t *rewriteTally) findings() []Finding {
	var out []Finding
	if more := t.reformatted - maxReformattedListed; more > 0 {
		out = append(out, Finding{Kind: "rewritten", Message: plural(more, "more line", "more lines") + " written again in the form the server writes", Fixed: "rewrote them"})
	}
	for _, n := range []struct {
		count int
		what  string
	}{{t.blank, plural(t.blank, "blank line", "blank lines") + " dropped"}, {t.bom, plural(t.bom, "byte order mark", "byte order marks") + " dropped"}, {t.crlf, plural(t.crlf, "CRLF line end", "CRLF line ends") + " written as LF"}} {
		if n.count > 0 {
			out = append(out, Finding{Kind: "rewritten", Message: n.what, Fixed: "rewrote the file as the server writes it"})
		}
	}
	return out
}

// maxReformattedListed is how many lines rewritten only in form check
// --fix lists one by one.
const maxReformattedListed = 10

// explainedBy tells the lines of the file that findings already cover: a
// problem's line, or a relation removed.
func explainedBy(findings []Finding, removed []graph.Relation) func(n int, line string) bool {
	lines := map[int]bool{}
	for _, f := range findings {
		lines[f.Line] = true
	}
	rels := map[[3]string]bool{}
	for _, r := range removed {
		rels[[3]string{r.From, r.To, r.RelationType}] = true
	}
	return func(n int, line string) bool {
		if lines[n] {
			return true
		}
		if len(rels) == 0 || !strings.Contains(line, "relation") {
			return false
		}
		id, ok := identify(line)
		return ok && id.Type == "relation" && rels[[3]string{id.From, id.To, id.RelationType}]
	}
}

// lineIdentity is what a line of a memory file names, read only to say
// which line changed.
type lineIdentity struct {
	Type, Name, From, To, RelationType string
}

// identify reads what line names. It costs a fraction of decoding the
// line into a graph, which matters when every line of a big file needs it.
func identify(line string) (lineIdentity, bool) {
	var id lineIdentity
	err := json.Unmarshal([]byte(line), &id)
	return id, err == nil
}

// mergedNames returns the names of the entities that lines of data
// merged into an earlier line.
func mergedNames(data []byte, problems []jsonl.Problem) map[string]bool {
	names := map[string]bool{}
	lines := strings.Split(string(data), "\n")
	for _, p := range problems {
		if p.Kind != jsonl.MergedEntity || p.Line > len(lines) {
			continue
		}
		if id, ok := identify(strings.TrimLeft(strings.TrimRight(lines[p.Line-1], "\r"), "\uFEFF")); ok {
			names[id.Name] = true
		}
	}
	return names
}

// rewriteFix says what check --fix did about each kind of line the
// reader merged: the file is written again as the graph holds it.
var rewriteFix = map[jsonl.ProblemKind]string{
	jsonl.MergedEntity:         "rewrote the file with one line for it",
	jsonl.DroppedRelation:      "rewrote the file with one line for it",
	jsonl.RepeatedObservations: "rewrote the line with each observation once",
}

func countKind(fs []Finding, kind string) int {
	n := 0
	for _, f := range fs {
		if f.Kind == kind {
			n++
		}
	}
	return n
}

func describeRelation(r graph.Relation) string {
	return fmt.Sprintf("%q -[%s]-> %q", r.From, oneLine(r.RelationType), r.To)
}

// missingEnds says which end of a dangling relation is missing; it is told
// from the relation alone by looking the names up again.
func missingEnds(r graph.Relation, s interface {
	View(func(*graph.Graph)) error
}) string {
	var from, to bool
	s.View(func(g *graph.Graph) { from, to = g.Entity(r.From) == nil, g.Entity(r.To) == nil })
	switch {
	case from && to:
		return "neither entity exists"
	case from:
		return strconv.Quote(r.From) + " does not exist"
	default:
		return strconv.Quote(r.To) + " does not exist"
	}
}
