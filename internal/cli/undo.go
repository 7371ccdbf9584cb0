package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

var cmdUndo = &command{
	name:    "undo",
	args:    "CHANGE | --since T",
	summary: "undo one recorded change, or every change since T, as one new write",
	help: `CHANGE is a change's id as history shows it (or any longer end of it).
  --since T     every change at or after T (as history --since takes it)
  --dry-run     say what undoing would do, and change nothing
  --all         list every change undone and every line of the effect
                (else the first 20 of each, and how many more)
  --yes         do not ask first
Undo applies the inverse of the changes, newest first, as one write, which
the history records (tool "undo"): an undo can be undone. It first says
what it will do: the net effect on the memory as it is now (what a window
adds and removes again is in neither) and, without --yes, asks on the
terminal; without a terminal it needs --yes. What changed since (an entity
deleted again, renamed, or with new observations) is undone as far as it
can be and reported.
`,
	run: runUndo,
}

// undoPage is how many changes and effect lines undo lists without --all.
const undoPage = 20

// undoRun is one undo command: what it undoes, on which memory, how.
type undoRun struct {
	c             *context_
	m             *memory
	recs          []graph.Record
	since         time.Time
	yes, dry, all bool
}

func runUndo(c *context_, args []string) error {
	u := undoRun{c: c}
	yes := c.flags.Bool("yes", false, "")
	dry := c.flags.Bool("dry-run", false, "")
	all := c.flags.Bool("all", false, "")
	var f history.Filter
	recs, args, m, err := c.readHistory(args, &f)
	if err != nil {
		return err
	}
	defer m.close()
	u.m, u.since, u.yes, u.dry, u.all = m, f.Since, *yes, *dry, *all
	if u.recs, err = chooseUndone(recs, args, f.Since, m.where); err != nil {
		return err
	}
	if len(u.recs) == 0 {
		c.printf("No changes since %s in %s: nothing to undo.\n", f.Since.UTC().Format(time.DateTime), m.where)
		return nil
	}
	effect, conflicts, err := u.preview()
	if err != nil {
		return err
	}
	if u.dry {
		return u.reportDryRun(effect, conflicts)
	}
	if ok, err := u.confirm(); !ok || err != nil {
		return err
	}
	return u.apply()
}

// chooseUndone returns the records an undo of args (one CHANGE) or since
// (--since) undoes, newest first, from recs, the history as read.
func chooseUndone(recs []graph.Record, args []string, since time.Time, where string) ([]graph.Record, error) {
	switch {
	case len(args) == 1 && since.IsZero():
	case len(args) == 0 && !since.IsZero():
		return recs, nil
	default:
		return nil, usagef("undo takes one CHANGE, or --since T")
	}
	var match []graph.Record
	for _, r := range recs {
		if args[0] != "" && strings.HasSuffix(r.ID, args[0]) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("no change %q in the history of %s (mcp-server-memory history lists them)", args[0], where)
	case 1:
		return match, nil
	default:
		return nil, fmt.Errorf("%q names %d changes; give more of the id (mcp-server-memory history --json shows whole ids)", args[0], len(match))
	}
}

// preview works out what the undo would do to the memory as it is now,
// and, but with --json, says so: the changes undone, the renames and
// merges among them, the net effect and what cannot be undone as
// recorded.
func (u *undoRun) preview() (effect []graph.Change, conflicts []string, err error) {
	now := graph.TimeOf(time.Now())
	if err := u.m.View(context.Background(), func(g *graph.Graph) error { effect, conflicts = history.Preview(g, u.recs, now); return nil }); err != nil {
		return nil, nil, err
	}
	if u.c.json {
		return effect, conflicts, nil
	}
	c := u.c
	c.printf("Undoing %s in %s, newest first:\n", plural(len(u.recs), "change", "changes"), u.m.where)
	for i := range u.page(len(u.recs)) {
		c.printf("  %s\n", historyLine(&u.recs[i]))
	}
	u.more(len(u.recs), "changes")
	if note := editsNote(u.recs); note != "" {
		c.printf("%s\n", note)
	}
	if len(effect) == 0 {
		c.printf("The effect: none (the memory already holds what undoing would give).\n")
	} else {
		c.printf("The effect on the memory as it is now:\n")
		for i := range u.page(len(effect)) {
			c.printf("  %s\n", oneLine(effectLine(&effect[i])))
		}
		u.more(len(effect), "lines")
	}
	if len(conflicts) > 0 {
		c.printf("The memory changed since; not everything can be undone as recorded:\n")
		for _, msg := range conflicts {
			c.printf("  %s\n", oneLine(msg))
		}
	}
	return effect, conflicts, nil
}

// page is how many of n lines to list: all with --all, else undoPage.
func (u *undoRun) page(n int) int {
	if u.all {
		return n
	}
	return min(n, undoPage)
}

// more says how many of n lines page left out, and how to see them.
func (u *undoRun) more(n int, what string) {
	if rest := n - u.page(n); rest > 0 {
		u.c.printf("  … and %d more %s (--all lists them all)\n", rest, what)
	}
}

// editsNote says that records hold renames or merges, which an undo
// reverses too, or "".
func editsNote(recs []graph.Record) string {
	renames, merges := 0, 0
	for i := range recs {
		switch recs[i].Tool {
		case "rename":
			renames++
		case "merge":
			merges++
		}
	}
	var parts []string
	if renames > 0 {
		parts = append(parts, plural(renames, "rename", "renames"))
	}
	if merges > 0 {
		parts = append(parts, plural(merges, "merge", "merges"))
	}
	if parts == nil {
		return ""
	}
	return "These changes hold " + strings.Join(parts, " and ") + ": undoing them gives the entities back their old names and splits merged entities again."
}

// effectLine is one line of an undo's effect for people:
// "+ entity Alice (person), 2 observations", "− 1 observation on Bob: "Moved"".
func effectLine(c *graph.Change) string {
	switch c.Kind {
	case graph.EntityCreated, graph.EntityDeleted:
		return history.Summary([]graph.Change{*c})
	case graph.ObservationsAdded, graph.ObservationsDeleted:
		quoted := make([]string, len(c.Entity.Observations))
		for i, o := range c.Entity.Observations {
			quoted[i] = fmt.Sprintf("%q", shorten(o, 80))
		}
		return history.Summary([]graph.Change{*c}) + ": " + strings.Join(quoted, ", ")
	}
	return history.Summary([]graph.Change{*c})
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// reportDryRun ends an undo --dry-run: nothing was written.
func (u *undoRun) reportDryRun(effect []graph.Change, conflicts []string) error {
	if u.c.json {
		return u.c.printJSON(struct {
			Undone    []string        `json:"undone"`
			DryRun    bool            `json:"dryRun"`
			Effect    json.RawMessage `json:"effect"`
			Conflicts []string        `json:"conflicts"`
		}{u.ids(), true, graph.AppendChanges(nil, effect), nonNil(conflicts)})
	}
	u.c.printf("Dry run: nothing was changed.\n")
	return nil
}

// confirm asks on the terminal, unless --yes; it reports whether to go on.
func (u *undoRun) confirm() (bool, error) {
	return u.c.confirm(u.yes, "Undo?", "undo changes the memory: run it on a terminal to be asked first, or add --yes (--dry-run says what it would do)")
}

// confirm asks question on the terminal, unless yes (the flag --yes); it
// reports whether to go on. Without a terminal and without yes it refuses
// with refusal.
func (c *context_) confirm(yes bool, question, refusal string) (bool, error) {
	if yes {
		return true, nil
	}
	if !c.terminal() {
		return false, errors.New(refusal)
	}
	fmt.Fprint(c.stdout, question+" [y/N] ")
	answer, _ := bufio.NewReader(c.stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		c.printf("Nothing was changed.\n")
		return false, nil
	}
	return true, nil
}

// apply makes the undo, as one recorded write, and says how it went.
func (u *undoRun) apply() error {
	var conflicts []string
	ctx, stop := interruptible()
	defer stop()
	changed, err := u.m.Update(ctx, graph.Write{Tool: "undo", Apply: func(g *graph.Graph) error {
		conflicts = history.Undo(g, u.recs)
		return nil
	}})
	if err != nil {
		return err
	}
	c := u.c
	if c.json {
		return c.printJSON(struct {
			Undone    []string `json:"undone"`
			Changed   bool     `json:"changed"`
			Conflicts []string `json:"conflicts"`
		}{u.ids(), changed, nonNil(conflicts)})
	}
	if changed {
		c.printf("Undone. (This undo is in the history too: mcp-server-memory history)\n")
	} else {
		c.printf("Nothing changed: the memory already holds what undoing would give.\n")
	}
	if len(conflicts) > 0 {
		c.printf("The memory changed since; not everything was undone as recorded:\n")
		for _, msg := range conflicts {
			c.printf("  %s\n", oneLine(msg))
		}
	}
	return nil
}

func (u *undoRun) ids() []string {
	ids := make([]string, len(u.recs))
	for i := range u.recs {
		ids[i] = u.recs[i].ID
	}
	return ids
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
