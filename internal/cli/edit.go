package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

var cmdImport = &command{
	name:    "import",
	args:    "FILE",
	summary: "merge a memory file or an export into the memory, all or nothing",
	help: `FILE may be the reference server's memory.jsonl, its older memory.json, or an
export of ours (export --format jsonl or json). It is merged by the rules of
the tools: a new entity is created with its observations; an entity that
exists gains the observations it lacks and keeps its type; new relations are
added. If FILE has an unreadable line, or a relation naming an entity that is
in neither FILE nor the memory, nothing is imported.
`,
	run: runImport,
}

func runImport(c *context_, args []string) error {
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("import takes one FILE")
	}
	src, err := readImport(args[0])
	if err != nil {
		return err
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	ctx, stop := interruptible()
	defer stop()
	var res graph.ImportResult
	_, err = s.Update(ctx, func(g *graph.Graph) (err error) {
		res, err = g.Import(src)
		return err
	})
	var nf *graph.NotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%s: a relation names %q, which is neither in the file nor in the memory; nothing was imported", args[0], nf.Name)
	}
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(res)
	}
	obs := 0
	for _, a := range res.AddedObservations {
		obs += len(a.AddedObservations)
	}
	c.printf("Imported %s into %s:\n", args[0], s.where)
	c.printf("  added %s, %s to %s, %s\n",
		plural(len(res.AddedEntities), "entity", "entities"),
		plural(obs, "observation", "observations"),
		plural(len(res.AddedObservations), "existing entity", "existing entities"),
		plural(len(res.AddedRelations), "relation", "relations"))
	c.printf("  skipped (already in the memory): %s, %s\n",
		plural(res.SkippedObservations, "observation", "observations"),
		plural(res.SkippedRelations, "relation", "relations"))
	for _, t := range res.TypesKept {
		c.printf("  kept %s's type %q (the file says %q)\n", oneLine(t.Name), t.Kept, t.Imported)
	}
	return nil
}

// readImport reads a file to import: a JSON object {"entities", "relations"}
// (our JSON export, read_graph's answer) or JSON Lines (the memory file of
// this server or of the reference, whatever its name). A file with an
// unreadable line is refused whole.
func readImport(path string) (graph.Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return graph.Snapshot{}, err
	}
	if snap, ok, err := readJSONExport(data); ok {
		if err != nil {
			return graph.Snapshot{}, fmt.Errorf("%s: %v; nothing was imported", path, err)
		}
		return snap, nil
	}
	file := jsonl.Decode(data)
	var bad []string
	for _, p := range file.Problems {
		if strings.HasPrefix(p.Reason, "merged duplicate") || strings.HasPrefix(p.Reason, "dropped duplicate") {
			continue // the merge rule of the file format: nothing is lost
		}
		bad = append(bad, p.String())
	}
	if len(bad) > 0 {
		return graph.Snapshot{}, fmt.Errorf("%s is not a memory file or export we can read whole; nothing was imported:\n  %s", path, strings.Join(bad, "\n  "))
	}
	return file.Graph.ReadGraph(), nil
}

// readJSONExport reads data as one JSON object with "entities" and/or
// "relations". ok is false when data is not such an object (it may be JSON
// Lines).
func readJSONExport(data []byte) (snap graph.Snapshot, ok bool, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	var top map[string]json.RawMessage
	if dec.Decode(&top) != nil || dec.More() {
		return snap, false, nil
	}
	rawE, hasE := top["entities"]
	rawR, hasR := top["relations"]
	if !hasE && !hasR {
		return snap, false, nil
	}
	type entity struct {
		Name         *string  `json:"name"`
		EntityType   *string  `json:"entityType"`
		Observations []string `json:"observations"`
	}
	type relation struct {
		From, To, RelationType *string
	}
	var ents []entity
	var rels []relation
	if hasE {
		if err := json.Unmarshal(rawE, &ents); err != nil {
			return snap, true, fmt.Errorf("entities: %v", err)
		}
	}
	if hasR {
		if err := json.Unmarshal(rawR, &rels); err != nil {
			return snap, true, fmt.Errorf("relations: %v", err)
		}
	}
	g := graph.New()
	for i, e := range ents {
		if e.Name == nil || e.EntityType == nil {
			return snap, true, fmt.Errorf("entity %d lacks name or entityType", i+1)
		}
		g.LoadEntity(graph.Entity{Name: *e.Name, EntityType: *e.EntityType, Observations: e.Observations})
	}
	for i, r := range rels {
		if r.From == nil || r.To == nil || r.RelationType == nil {
			return snap, true, fmt.Errorf("relation %d lacks from, to or relationType", i+1)
		}
		g.LoadRelation(graph.Relation{From: *r.From, To: *r.To, RelationType: *r.RelationType})
	}
	return g.ReadGraph(), true, nil
}

var cmdCheck = &command{
	name:    "check",
	summary: "find unreadable lines, relations to missing entities, duplicate names",
	help: `Exit code 0 when the memory file is clean, 1 when problems remain.

  --fix   repair what is safe, saying each thing done: remove relations to
          missing entities; rewrite duplicate entities merged (first type,
          observations united) and duplicate relations once. Unreadable
          lines are never changed: the server keeps them as they are; edit
          them by hand.
`,
	run: runCheck,
}

// Finding is one problem check reports.
type Finding struct {
	Kind    string `json:"kind"` // unreadable, duplicate, dangling
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
	data, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		// A typo in --file must not pass as a clean memory.
		return fmt.Errorf("there is no memory file at %s; nothing to check", s.Path())
	}
	if err != nil {
		return err
	}
	var findings []Finding
	duplicates := false
	for _, p := range jsonl.Decode(data).Problems {
		kind := "unreadable"
		if strings.HasPrefix(p.Reason, "merged duplicate") || strings.HasPrefix(p.Reason, "dropped duplicate") {
			kind, duplicates = "duplicate", true
		}
		findings = append(findings, Finding{Kind: kind, Line: p.Line, Message: p.Reason})
	}
	var dangling []graph.Relation
	if err := s.View(func(g *graph.Graph) { dangling = g.DanglingRelations() }); err != nil {
		return err
	}
	if *fix && (len(dangling) > 0 || duplicates) {
		ctx, stop := interruptible()
		defer stop()
		_, err := s.Update(ctx, func(g *graph.Graph) error {
			// Under the lock the file may have changed since it was read
			// above: repair what it holds now.
			dangling = g.RemoveDanglingRelations()
			if duplicates {
				g.Rewrite()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, r := range dangling {
		f := Finding{Kind: "dangling", Message: fmt.Sprintf("relation %s: %s", describeRelation(r), missingEnds(r, s))}
		if *fix {
			f.Fixed = "removed the relation"
		}
		findings = append(findings, f)
	}
	remaining := 0
	for i := range findings {
		f := &findings[i]
		switch {
		case f.Kind == "duplicate" && *fix:
			f.Fixed = "rewrote the file with one line for it"
		case f.Kind == "unreadable":
			remaining++
		case !*fix:
			remaining++
		}
	}
	if c.json {
		if findings == nil {
			findings = []Finding{}
		}
		if err := c.printJSON(struct {
			File     string    `json:"file"`
			Findings []Finding `json:"findings"`
			Clean    bool      `json:"clean"`
		}{s.Path(), findings, remaining == 0}); err != nil {
			return err
		}
	} else {
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
		switch {
		case len(findings) == 0:
			c.printf("%s: no problems found.\n", s.Path())
		case remaining == 0:
			c.printf("%s: fixed %s.\n", s.Path(), plural(len(findings), "problem", "problems"))
		case !*fix && remaining > countKind(findings, "unreadable"):
			c.printf("%s: %s. mcp-server-memory check --fix repairs %d of them.\n", s.Path(), plural(remaining, "problem", "problems"), remaining-countKind(findings, "unreadable"))
		default:
			c.printf("%s: %s left to fix by hand.\n", s.Path(), plural(remaining, "problem", "problems"))
		}
	}
	if remaining > 0 {
		return errReported
	}
	return nil
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

var cmdRename = &command{
	name:    "rename",
	args:    "OLD NEW",
	summary: "rename an entity; its relations follow",
	help:    "NEW must not exist yet (to join two entities, use merge).\n",
	run: func(c *context_, args []string) error {
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) != 2 {
			return usagef("rename takes OLD and NEW")
		}
		if args[1] == "" {
			return usagef("the new name is empty")
		}
		var res graph.RenameResult
		changed, err := c.update(func(g *graph.Graph) (err error) {
			res, err = g.Rename(args[0], args[1])
			return err
		})
		var ex *graph.ExistsError
		if errors.As(err, &ex) {
			return fmt.Errorf("%v; to join the two, use: mcp-server-memory merge %q %q", err, args[1], args[0])
		}
		if err != nil {
			return err
		}
		if c.json {
			return c.printJSON(res)
		}
		if !changed {
			c.printf("%q already has that name; nothing changed.\n", res.From)
			return nil
		}
		c.printf("Renamed %q to %q; %s followed.\n", res.From, res.To, plural(res.Relations, "relation", "relations"))
		return nil
	},
}

var cmdMerge = &command{
	name:    "merge",
	args:    "A B",
	summary: "merge entity B into A: observations and relations united, B removed",
	help: `A keeps its name and type and gains B's observations that it lacks, in order.
Every relation of B now runs from or to A, except those A already has and
those between A and B (they would point A at itself). Then B is removed.
`,
	run: func(c *context_, args []string) error {
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) != 2 {
			return usagef("merge takes A and B (B is merged into A)")
		}
		if args[0] == args[1] {
			return usagef("A and B are the same entity")
		}
		var res graph.MergeResult
		if _, err := c.update(func(g *graph.Graph) (err error) {
			res, err = g.Merge(args[0], args[1])
			return err
		}); err != nil {
			return err
		}
		if c.json {
			return c.printJSON(res)
		}
		c.printf("Merged %q into %q: %s added, %s moved, %s dropped; %q removed.\n", res.Merged, res.Into,
			plural(len(res.AddedObservations), "observation", "observations"),
			plural(len(res.MovedRelations), "relation", "relations"),
			plural(len(res.DroppedRelations), "relation", "relations"), res.Merged)
		for _, r := range res.DroppedRelations {
			c.printf("  dropped %s\n", describeRelation(r))
		}
		if res.TypeDropped != "" {
			c.printf("  %q keeps its type; %q's type %q was dropped\n", res.Into, res.Merged, res.TypeDropped)
		}
		return nil
	},
}

// update runs fn as one write: under the memory file's lock, or as one
// database transaction.
func (c *context_) update(fn func(*graph.Graph) error) (bool, error) {
	s, err := c.open(false)
	if err != nil {
		return false, err
	}
	defer s.close()
	ctx, stop := interruptible()
	defer stop()
	return s.Update(ctx, fn)
}
