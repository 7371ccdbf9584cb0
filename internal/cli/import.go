package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

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
			each = entityLoader(dec, g)
		case "relations":
			each = relationLoader(dec, g)
		default:
			if dec.Decode(new(json.RawMessage)) != nil {
				return snap, false, nil
			}
			continue
		}
		found = true
		if ok, err := exportArray(key, readJSONArray(dec, each)); !ok || err != nil {
			return snap, ok, err
		}
	}
	if !exportEnds(dec, found) {
		return snap, false, nil
	}
	return g.ReadGraph(), true, nil
}

// entityLoader decodes the entities of an export into g, one at a time.
func entityLoader(dec *json.Decoder, g *graph.Graph) func(n int) error {
	return func(n int) error {
		var e struct {
			Name         *string  `json:"name"`
			EntityType   *string  `json:"entityType"`
			Observations []string `json:"observations"`
		}
		if err := dec.Decode(&e); err != nil {
			return err
		}
		if e.Name == nil || e.EntityType == nil {
			return missingMember(fmt.Sprintf("entity %d lacks name or entityType", n))
		}
		g.LoadEntity(graph.Entity{Name: *e.Name, EntityType: *e.EntityType, Observations: e.Observations})
		return nil
	}
}

// relationLoader decodes the relations of an export into g, one at a time.
func relationLoader(dec *json.Decoder, g *graph.Graph) func(n int) error {
	return func(n int) error {
		var r struct {
			From, To, RelationType *string
		}
		if err := dec.Decode(&r); err != nil {
			return err
		}
		if r.From == nil || r.To == nil || r.RelationType == nil {
			return missingMember(fmt.Sprintf("relation %d lacks from, to or relationType", n))
		}
		g.LoadRelation(graph.Relation{From: *r.From, To: *r.To, RelationType: *r.RelationType})
		return nil
	}
}

// exportArray judges what reading the array under key gave: ok is false
// when the data is not JSON (perhaps JSON Lines); err is an export's
// mistake.
func exportArray(key string, err error) (ok bool, _ error) {
	var se *json.SyntaxError
	var mm missingMember
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return false, nil // not JSON: perhaps JSON Lines
	case errors.As(err, &mm):
		return true, err
	default:
		return true, fmt.Errorf("%s: %v", key, err)
	}
}

// exportEnds reports whether the object read had entities or relations
// and closes where the data ends (more after it: JSON Lines).
func exportEnds(dec *json.Decoder, found bool) bool {
	if _, err := dec.Token(); err != nil || !found {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
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
