package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
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
in neither FILE nor the memory, nothing is imported. FILE is a regular file
of at most 1 GiB (not a pipe or device); split a bigger one.
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
	_, err = s.Update(history.WithAuthor(ctx, history.Author{Tool: "import"}), graph.Timed(time.Now, func(g *graph.Graph) (err error) {
		res, err = g.Import(src)
		return err
	}))
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
	data, err := readImportFile(path)
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
		if p.Kind.Lossless() {
			continue // the merge rules of the file format: nothing is lost
		}
		bad = append(bad, p.String())
	}
	if len(bad) > 0 {
		return graph.Snapshot{}, fmt.Errorf("%s is not a memory file or export we can read whole; nothing was imported:\n  %s", path, strings.Join(bad, "\n  "))
	}
	return file.Graph.ReadGraph(), nil
}

// maxImportSize is the biggest file import reads. The file is held in
// memory whole while it is merged, several times its size at the peak (a
// 140 MB memory file: about 600 MB), so a bigger one would more likely end
// the command out of memory, having said nothing useful, than import.
const maxImportSize = 1 << 30

// readImportFile reads the file to import, refusing what is not a regular
// file (a device such as /dev/zero never ends; a pipe cannot be measured)
// and what is bigger than maxImportSize, each with a message that says so.
func readImportFile(path string) ([]byte, error) {
	notRegular := func(m fs.FileMode) error {
		return fmt.Errorf("%s is %s, not a regular file; import reads a memory file or an export saved to a file; nothing was imported", path, describeMode(m))
	}
	// Look before opening: opening a named pipe waits for a writer.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular(fi.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(fi.Mode())
	}
	tooBig := func() error {
		return fmt.Errorf("%s is bigger than %s, the most import reads at once; split it into smaller files and import each (every import is all or nothing); nothing was imported", path, sizeText(maxImportSize))
	}
	if fi.Size() > maxImportSize {
		return nil, tooBig()
	}
	// The file may grow while it is read: read no more than the limit.
	data := make([]byte, 0, fi.Size()+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if len(data) > maxImportSize {
			return nil, tooBig()
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// describeMode names the kind of file that is not a regular one.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// sizeText writes a byte count as people read it: 1 GiB, 512 MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// readJSONExport reads data as one JSON object with "entities" and/or
// "relations". ok is false when data is not such an object (it may be JSON
// Lines). It decodes one entity or relation at a time into the graph, so
// a big export is not held a second time as decoded values.
func readJSONExport(data []byte) (snap graph.Snapshot, ok bool, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
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
	g := graph.New()
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return snap, false, nil
		}
		key, _ := t.(string)
		var each func(n int) error
		switch key {
		case "entities":
			each = func(n int) error {
				var e entity
				if err := dec.Decode(&e); err != nil {
					return err
				}
				if e.Name == nil || e.EntityType == nil {
					return missingMember(fmt.Sprintf("entity %d lacks name or entityType", n))
				}
				g.LoadEntity(graph.Entity{Name: *e.Name, EntityType: *e.EntityType, Observations: e.Observations})
				return nil
			}
		case "relations":
			each = func(n int) error {
				var r relation
				if err := dec.Decode(&r); err != nil {
					return err
				}
				if r.From == nil || r.To == nil || r.RelationType == nil {
					return missingMember(fmt.Sprintf("relation %d lacks from, to or relationType", n))
				}
				g.LoadRelation(graph.Relation{From: *r.From, To: *r.To, RelationType: *r.RelationType})
				return nil
			}
		default:
			if dec.Decode(new(json.RawMessage)) != nil {
				return snap, false, nil
			}
			continue
		}
		found = true
		err = readJSONArray(dec, each)
		var se *json.SyntaxError
		var mm missingMember
		switch {
		case err == nil:
		case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return snap, false, nil // not JSON: perhaps JSON Lines
		case errors.As(err, &mm):
			return snap, true, err
		default:
			return snap, true, fmt.Errorf("%s: %v", key, err)
		}
	}
	if _, err := dec.Token(); err != nil || !found {
		return snap, false, nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return snap, false, nil // more after the object: JSON Lines
	}
	return g.ReadGraph(), true, nil
}

// missingMember is an entity or relation of an export that lacks a member.
type missingMember string

func (m missingMember) Error() string { return string(m) }

// readJSONArray reads a JSON array (or null) from dec, calling each with
// the 1-based number of the element to decode it.
func readJSONArray(dec *json.Decoder, each func(n int) error) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('[') {
		return fmt.Errorf("want an array, not %s", jsonKind(t))
	}
	for n := 1; dec.More(); n++ {
		if err := each(n); err != nil {
			return err
		}
	}
	_, err = dec.Token() // ']'
	return err
}

// jsonKind names the JSON type of a token that should have opened an array.
func jsonKind(t json.Token) string {
	switch t.(type) {
	case json.Delim:
		return "an object"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

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
	data, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		// A typo in --file must not pass as a clean memory.
		return fmt.Errorf("there is no memory file at %s; nothing to check", s.Path())
	}
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
	for _, r := range dangling {
		f := Finding{Kind: "dangling", Message: fmt.Sprintf("relation %s: %s", describeRelation(r), missingEnds(r, s))}
		if *fix {
			f.Fixed = "removed the relation"
		}
		findings = append(findings, f)
	}
	found := len(findings)
	findings = append(findings, sideEffects...)
	remaining := 0
	for _, f := range findings {
		if f.Kind == "unreadable" || f.Fixed == "" {
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
		c.printCheck(s.Path(), findings, found, remaining)
	}
	if remaining > 0 {
		return errReported
	}
	return nil
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
	var blank, crlf, bom, reformatted int
	i := -1
	for b := range bytes.Lines(before) {
		i++
		b = bytes.TrimSuffix(b, []byte("\n"))
		if t := bytes.TrimRight(b, "\r"); len(t) != len(b) {
			crlf++
			b = t
		}
		if t := bytes.TrimLeft(b, "\uFEFF"); len(t) != len(b) {
			bom++
			b = t
		}
		h := maphash.Bytes(seed, b)
		switch {
		case len(bytes.TrimSpace(b)) == 0:
			blank++
		case kept[h] > 0:
			kept[h]--
		case !explained(i+1, string(b)):
			l := string(b)
			f := Finding{Kind: "rewritten", Line: i + 1, Message: "written again in the form the server writes", Fixed: "rewrote the line"}
			listed := reformatted < maxReformattedListed
			if !listed && len(merged) == 0 {
				reformatted++ // counted, not described: reading it costs
				continue
			}
			id, _ := identify(l)
			switch {
			case id.Type == "entity" && merged[id.Name]:
				f.Message = fmt.Sprintf("entity %q: its duplicates were merged into this line", oneLine(id.Name))
				f.Fixed = "rewrote the line with their observations added"
				out = append(out, f)
				continue
			case id.Type == "entity":
				f.Message = fmt.Sprintf("entity %q, in the form the server writes", oneLine(id.Name))
			case id.Type == "relation":
				f.Message = fmt.Sprintf("relation %s, in the form the server writes", describeRelation(graph.Relation{From: id.From, To: id.To, RelationType: id.RelationType}))
			}
			// A file another program wrote may differ in form on every
			// line: name a few, count the rest.
			reformatted++
			if listed {
				out = append(out, f)
			}
		}
	}
	if more := reformatted - maxReformattedListed; more > 0 {
		out = append(out, Finding{Kind: "rewritten", Message: plural(more, "more line", "more lines") + " written again in the form the server writes", Fixed: "rewrote them"})
	}
	for _, n := range []struct {
		count int
		what  string
	}{{blank, plural(blank, "blank line", "blank lines") + " dropped"}, {bom, plural(bom, "byte order mark", "byte order marks") + " dropped"}, {crlf, plural(crlf, "CRLF line end", "CRLF line ends") + " written as LF"}} {
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
		changed, err := c.update("rename", func(g *graph.Graph) (err error) {
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
		if _, err := c.update("merge", func(g *graph.Graph) (err error) {
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
// database transaction; the history records it as made by the command
// tool.
func (c *context_) update(tool string, fn func(*graph.Graph) error) (bool, error) {
	s, err := c.open(false)
	if err != nil {
		return false, err
	}
	defer s.close()
	ctx, stop := interruptible()
	defer stop()
	return s.Update(history.WithAuthor(ctx, history.Author{Tool: tool}), graph.Timed(time.Now, fn))
}
