package packaging

// The documents a user reads: README.md and docs/. These tests need
// nothing built and run in `go test ./...`.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shippedDocs lists, as slash paths from the repository's root, the
// documents a user reads.
func shippedDocs(t *testing.T) []string {
	t.Helper()
	docs := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join("..", "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel("..", p)
		docs = append(docs, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(docs)
	return docs
}

// markdownDocs lists README.md and docs/*.md.
func markdownDocs(t *testing.T) []string {
	t.Helper()
	var md []string
	for _, doc := range shippedDocs(t) {
		if strings.HasSuffix(doc, ".md") {
			md = append(md, doc)
		}
	}
	return md
}

func readDoc(t *testing.T, doc string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// codeBlock is one fenced block of a markdown document.
type codeBlock struct {
	lang string
	line int    // of the opening fence
	at   int    // byte offset of the opening fence
	text string // without the fences and the fence's indentation
}

// codeBlocks returns the fenced blocks of a markdown document, including
// those indented inside list items.
func codeBlocks(md string) []codeBlock {
	var blocks []codeBlock
	var open *codeBlock
	var indent string
	var body strings.Builder
	offset := 0
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case open == nil && strings.HasPrefix(trimmed, "```"):
			open = &codeBlock{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1, at: offset}
			indent = line[:len(line)-len(trimmed)]
			body.Reset()
		case open != nil && strings.TrimSpace(line) == "```":
			open.text = body.String()
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			body.WriteString(strings.TrimPrefix(line, indent))
			body.WriteString("\n")
		}
		offset += len(line) + 1
	}
	return blocks
}

// Every ```json block a user may copy is valid JSON.
func TestJSONBlocksParse(t *testing.T) {
	n := 0
	for _, doc := range markdownDocs(t) {
		for _, b := range codeBlocks(readDoc(t, doc)) {
			if b.lang != "json" {
				continue
			}
			n++
			var v any
			if err := json.Unmarshal([]byte(b.text), &v); err != nil {
				t.Errorf("%s:%d: the json block does not parse: %v\n%s", doc, b.line, err, b.text)
			}
		}
	}
	if n < 5 {
		t.Fatalf("found %d json blocks in README.md and docs/: the block finder is broken", n)
	}
}

// docs/development.md lists what each package imports among ours; the list
// must be the code's, so that a reader can trust the layers it shows.
func TestDevelopmentLayers(t *testing.T) {
	const module = "github.com/kgmemory/mcp-server-memory/"
	short := func(p string) string {
		return strings.TrimPrefix(strings.TrimPrefix(p, module), "internal/")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	code := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := short(fields[0])
		if !strings.HasPrefix(fields[0], module) || pkg == "packaging" {
			continue
		}
		ours := []string{}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				ours = append(ours, short(imp))
			}
		}
		slices.Sort(ours)
		code[pkg] = ours
	}

	var layers *codeBlock
	for _, b := range codeBlocks(readDoc(t, "docs/development.md")) {
		if b.lang == "text" {
			layers = &b
			break
		}
	}
	if layers == nil {
		t.Fatal("docs/development.md has no ```text block of layers")
	}
	doc := map[string][]string{}
	for line := range strings.Lines(layers.text) {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			t.Errorf("docs/development.md layers: line %q: want a package and its imports (- for none)", line)
			continue
		}
		imports := []string{}
		if fields[1] != "-" {
			imports = slices.Sorted(slices.Values(fields[1:]))
		}
		doc[fields[0]] = imports
	}
	for pkg, imports := range code {
		listed, ok := doc[pkg]
		switch {
		case !ok:
			t.Errorf("docs/development.md layers: %s is missing; it imports %v", pkg, imports)
		case !slices.Equal(listed, imports):
			t.Errorf("docs/development.md layers: %s imports %v, the document says %v", pkg, imports, listed)
		}
	}
	for pkg := range doc {
		if _, ok := code[pkg]; !ok {
			t.Errorf("docs/development.md layers: %s is not a package of this module", pkg)
		}
	}
}
