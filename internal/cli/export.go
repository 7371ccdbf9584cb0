package cli

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

var cmdExport = &command{
	name:    "export",
	args:    "[--format FORMAT]",
	summary: "write the memory as jsonl, json, mermaid, dot, graphml or html",
	help: `Formats:
  jsonl     the memory file's own format (what the reference server reads)
  json      {"entities": [...], "relations": [...]}, as read_graph returns it:
            names, types, observations and relations only (jsonl also
            keeps when each fact was learned and other programs' members)
  mermaid   a Mermaid flowchart (paste into Markdown)
  dot       a Graphviz digraph (dot -Tsvg memory.dot > memory.svg)
  graphml   GraphML for Gephi, yEd, Cytoscape; observations as a JSON array
  html      one self-contained page to read and search the memory offline

  --format FORMAT   jsonl unless given
  --output PATH     write to PATH instead of standard output
  --json            standard output carries JSON: the export itself in
                    --format json (the default with --json), or, with
                    --output, a summary of what was written: {"output",
                    "format", "entities", "relations", "bytes"}

jsonl and json exports can be imported again (mcp-server-memory import).
Export streams: memory stays flat however big the graph.
`,
	run: runExport,
}

var exporters = map[string]func(w *bufio.Writer, g *graph.Graph){
	"jsonl":   exportJSONL,
	"json":    exportJSON,
	"mermaid": exportMermaid,
	"dot":     exportDOT,
	"graphml": exportGraphML,
	"html":    exportHTML,
}

func runExport(c *context_, args []string) error {
	format := c.flags.String("format", "jsonl", "")
	output := c.flags.String("output", "", "")
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("export takes no arguments, only options")
	}
	export, err := c.exporter(format, *output)
	if err != nil {
		return err
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	c.foldJournal(s)
	var out io.Writer = c.stdout
	var f *os.File
	if *output != "" {
		f, err = os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	counted := &countingWriter{w: out}
	w := bufio.NewWriterSize(counted, 256<<10)
	var entities, relations int
	if err := s.View(context.Background(), func(g *graph.Graph) error {
		entities, relations = g.Len()
		export(w, g)
		return nil
	}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if f == nil {
		return nil
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", *output, err)
	}
	if c.json {
		return c.printJSON(exportSummary{Output: *output, Format: *format, Entities: entities, Relations: relations, Bytes: counted.n})
	}
	return nil
}

// exporter picks the export's format. --json without --format asks for
// the JSON export on standard output, where the export goes.
func (c *context_) exporter(format *string, output string) (func(w *bufio.Writer, g *graph.Graph), error) {
	formatGiven := false
	c.flags.Visit(func(f *flag.Flag) { formatGiven = formatGiven || f.Name == "format" })
	if c.json && output == "" {
		// Standard output is the export: --json asks for it in JSON.
		if formatGiven && *format != "json" {
			return nil, usagef("--json prints JSON on standard output, where the export goes: use --format json, or --output PATH to get a JSON summary of the %s export", *format)
		}
		*format = "json"
	}
	export := exporters[*format]
	if export == nil {
		return nil, usagef("--format must be one of jsonl, json, mermaid, dot, graphml, html")
	}
	return export, nil
}

// foldJournal folds the journal into the memory file first: the memory
// file is then the whole memory, so an edited export renamed over it is a
// plain replacement, which no journaled write undoes.
func (c *context_) foldJournal(s *memory) {
	if s.file == nil {
		return
	}
	ctx, stop := interruptible()
	err := s.file.Compact(ctx)
	stop()
	if err != nil {
		c.logf("the journal could not be folded into %s first (%v); the export holds the whole memory all the same", s.where, err)
	}
}

// exportSummary is what export --json --output prints.
type exportSummary struct {
	Output    string `json:"output"`
	Format    string `json:"format"`
	Entities  int    `json:"entities"`
	Relations int    `json:"relations"`
	Bytes     int64  `json:"bytes"`
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// exportJSONL writes the memory file's lines, as a save writes them (but
// for the lines no entity or relation holds). A write error stays in w.
func exportJSONL(w *bufio.Writer, g *graph.Graph) { _ = jsonl.Write(w, g, nil) }

// exportJSON writes the graph as read_graph returns it, indented by two
// spaces as JSON.stringify(graph, null, 2) does.
func exportJSON(w *bufio.Writer, g *graph.Graph) { writeGraphJSON(w, g, true) }

// writeGraphJSON streams {"entities": [...], "relations": [...]}, indented
// or compact, with the server's JSON writer, one entity or relation at a
// time.
func writeGraphJSON(w io.Writer, g *graph.Graph, indent bool) {
	j := answer.NewJSON(indent)
	j.Open('{')
	j.Key("entities")
	j.Open('[')
	for _, e := range g.Entities() {
		j.Entity(e.Name, e.EntityType, e.Observations)
		j.Flush(w)
	}
	j.Close(']')
	j.Key("relations")
	j.Open('[')
	for _, r := range g.Relations() {
		j.Relation(r)
		j.Flush(w)
	}
	j.Close(']')
	j.Close('}')
	j.Flush(w)
	io.WriteString(w, "\n")
}

// scriptSafe writes JSON so it can sit in an HTML script element: "<"
// (only ever inside a JSON string) becomes \u003c.
type scriptSafe struct{ w io.Writer }

func (s scriptSafe) Write(p []byte) (int, error) {
	_, err := s.w.Write(bytes.ReplaceAll(p, []byte("<"), []byte(`\u003c`)))
	return len(p), err
}

// nodeIDs numbers the entities in graph order, and the missing ends of
// dangling relations after them, so pictures can draw every relation.
type nodeIDs struct {
	ids     map[string]int
	missing []string
}

func newNodeIDs(g *graph.Graph) *nodeIDs {
	n := &nodeIDs{ids: make(map[string]int, len(g.Entities()))}
	for i, e := range g.Entities() {
		n.ids[e.Name] = i
	}
	for _, r := range g.Relations() {
		for _, end := range [2]string{r.From, r.To} {
			if _, ok := n.ids[end]; !ok {
				n.ids[end] = len(n.ids)
				n.missing = append(n.missing, end)
			}
		}
	}
	return n
}

// pictureText prepares s for a label in a picture: control characters and
// Unicode line separators, which Graphviz refuses and Mermaid mangles,
// become spaces (line breaks are left to the format's escaping).
func pictureText(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unprintable(r) {
			return ' '
		}
		return r
	}, s)
}

func unprintable(r rune) bool {
	return r != '\n' && r != '\r' && (r < 0x20 || r == 0x7f || 0x80 <= r && r < 0xa0 || r == 0x2028 || r == 0x2029)
}

// mermaidText escapes s for a quoted Mermaid label: Mermaid reads "#name;"
// and "#number;" as entity codes, so every character that could end the
// label, start markup or an entity is written as one. Line breaks become
// spaces.
func mermaidText(s string) string { return mermaidEscape.Replace(pictureText(s)) }

var mermaidEscape = strings.NewReplacer(
	`#`, "#35;", `"`, "#quot;", `<`, "#lt;", `>`, "#gt;", `&`, "#amp;",
	"`", "#96;", `|`, "#124;", `[`, "#91;", `]`, "#93;", `{`, "#123;", `}`, "#125;",
	`(`, "#40;", `)`, "#41;", "\r\n", " ", "\n", " ", "\r", " ",
)

func exportMermaid(w *bufio.Writer, g *graph.Graph) {
	ids := newNodeIDs(g)
	w.WriteString("flowchart LR\n")
	for i, e := range g.Entities() {
		fmt.Fprintf(w, "  n%d[\"%s<br/>(%s)\"]\n", i, mermaidText(e.Name), mermaidText(e.EntityType))
	}
	for _, name := range ids.missing {
		fmt.Fprintf(w, "  n%d[/\"%s (missing)\"/]\n", ids.ids[name], mermaidText(name))
	}
	for _, r := range g.Relations() {
		fmt.Fprintf(w, "  n%d -->|\"%s\"| n%d\n", ids.ids[r.From], mermaidText(r.RelationType), ids.ids[r.To])
	}
}

// dotString quotes s as a Graphviz string: backslash and quote escaped,
// line breaks as \n (which labels show as a break).
func dotString(s string) string { return `"` + dotEscape.Replace(pictureText(s)) + `"` }

var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`)

func exportDOT(w *bufio.Writer, g *graph.Graph) {
	ids := newNodeIDs(g)
	w.WriteString("digraph memory {\n  node [shape=box, style=rounded, fontname=\"sans-serif\"];\n  edge [fontname=\"sans-serif\", fontsize=10];\n")
	for i, e := range g.Entities() {
		fmt.Fprintf(w, "  n%d [label=%s];\n", i, dotString(e.Name+"\n("+e.EntityType+")"))
	}
	for _, name := range ids.missing {
		fmt.Fprintf(w, "  n%d [label=%s, style=dashed];\n", ids.ids[name], dotString(name+"\n(missing)"))
	}
	for _, r := range g.Relations() {
		fmt.Fprintf(w, "  n%d -> n%d [label=%s];\n", ids.ids[r.From], ids.ids[r.To], dotString(r.RelationType))
	}
	w.WriteString("}\n")
}

func xmlText(w *bufio.Writer, s string) { xml.EscapeText(w, []byte(s)) }

func exportGraphML(w *bufio.Writer, g *graph.Graph) {
	ids := newNodeIDs(g)
	w.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="name" for="node" attr.name="name" attr.type="string"/>
  <key id="entityType" for="node" attr.name="entityType" attr.type="string"/>
  <key id="observations" for="node" attr.name="observations" attr.type="string"/>
  <key id="relationType" for="edge" attr.name="relationType" attr.type="string"/>
  <graph id="memory" edgedefault="directed">
`)
	var buf []byte
	node := func(id int, name, typ string, obs []string) {
		fmt.Fprintf(w, "    <node id=\"n%d\">\n      <data key=\"name\">", id)
		xmlText(w, name)
		w.WriteString("</data>\n      <data key=\"entityType\">")
		xmlText(w, typ)
		w.WriteString("</data>\n      <data key=\"observations\">")
		buf = append(buf[:0], '[')
		for i, o := range obs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = graph.AppendString(buf, o)
		}
		buf = append(buf, ']')
		xml.EscapeText(w, buf)
		w.WriteString("</data>\n    </node>\n")
	}
	for i, e := range g.Entities() {
		node(i, e.Name, e.EntityType, e.Observations)
	}
	for _, name := range ids.missing {
		node(ids.ids[name], name, "", nil)
	}
	for i, r := range g.Relations() {
		fmt.Fprintf(w, "    <edge id=\"e%d\" source=\"n%d\" target=\"n%d\">\n      <data key=\"relationType\">", i, ids.ids[r.From], ids.ids[r.To])
		xmlText(w, r.RelationType)
		w.WriteString("</data>\n    </edge>\n")
	}
	w.WriteString("  </graph>\n</graphml>\n")
}

//go:embed export.html
var exportPage string

// exportHTML writes one page holding the graph as JSON (with "<" escaped,
// so no content can close the script element) and a small script that
// shows it with textContent only.
func exportHTML(w *bufio.Writer, g *graph.Graph) {
	head, tail, _ := strings.Cut(exportPage, "/*DATA*/")
	e, r := g.Len()
	w.WriteString(strings.ReplaceAll(head, "{{COUNTS}}", strconv.Itoa(e)+" entities, "+strconv.Itoa(r)+" relations"))
	writeGraphJSON(scriptSafe{w}, g, false)
	w.WriteString(tail)
}
