package packaging

// The documents a user reads: README.md and docs/, shipped in every release
// archive beside LICENSE. These tests need nothing built and run in
// `go test ./...`.

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shippedDocs lists, as slash paths from the repository's root, the
// documents a release archive holds beside the binary.
func shippedDocs(t *testing.T) []string {
	t.Helper()
	docs := []string{"LICENSE", "README.md"}
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

var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// relativeLinks returns the targets of a markdown document's links that stay
// inside the repository, as slash paths from its root, without #fragments.
func relativeLinks(t *testing.T, doc string) []string {
	t.Helper()
	var targets []string
	for _, m := range markdownLink.FindAllStringSubmatch(readDoc(t, doc), -1) {
		u, err := url.Parse(m[1])
		if err != nil {
			t.Errorf("%s: link %q: %v", doc, m[1], err)
			continue
		}
		if u.Scheme != "" || u.Host != "" || u.Path == "" {
			continue // another site, or a heading of this document
		}
		target := path.Join(path.Dir(doc), u.Path)
		if strings.HasPrefix(target, "../") {
			t.Errorf("%s: link %q leaves the repository", doc, m[1])
			continue
		}
		targets = append(targets, target)
	}
	return targets
}

// Every link in README.md and docs/ that stays inside the repository leads to
// a document the release archives ship, so that it also works there; a link
// to anything else (a script, CI) must be an absolute address.
func TestDocLinksStayInShippedDocs(t *testing.T) {
	shipped := shippedDocs(t)
	for _, doc := range markdownDocs(t) {
		for _, target := range relativeLinks(t, doc) {
			if target == "docs" || slices.Contains(shipped, target) {
				continue
			}
			t.Errorf("%s links to %s, which the release archives do not ship: link a document, or give an absolute address", doc, target)
		}
	}
}

// vscodeInstall is one VS Code install button: what its link asks VS Code
// to install.
type vscodeInstall struct {
	link     string
	at       int // byte offset in README.md
	name     string
	config   any
	inputs   any // nil when the link has none
	insiders bool
}

var vscodeInstallLink = regexp.MustCompile(`\[!\[([^\]]*)\]\((https://img\.shields\.io/badge/[^)]+)\)\]\((https://insiders\.vscode\.dev/redirect/mcp/install\?[^)]+)\)`)

func vscodeInstalls(t *testing.T, readme string) []vscodeInstall {
	t.Helper()
	var installs []vscodeInstall
	for _, m := range vscodeInstallLink.FindAllStringSubmatchIndex(readme, -1) {
		alt, badge, link := readme[m[2]:m[3]], readme[m[4]:m[5]], readme[m[6]:m[7]]
		u, err := url.Parse(link)
		if err != nil {
			t.Fatalf("install link %q: %v", link, err)
		}
		q := u.Query()
		in := vscodeInstall{link: link, at: m[0], name: q.Get("name"), insiders: q.Get("quality") == "insiders"}
		for k := range q {
			if !slices.Contains([]string{"name", "config", "inputs", "quality"}, k) {
				t.Errorf("install link %q: unknown parameter %q", link, k)
			}
		}
		if in.name == "" {
			t.Errorf("install link %q names no server", link)
		}
		if err := json.Unmarshal([]byte(q.Get("config")), &in.config); err != nil {
			t.Errorf("install link %q: config %q: %v", link, q.Get("config"), err)
		}
		if q.Has("inputs") {
			if err := json.Unmarshal([]byte(q.Get("inputs")), &in.inputs); err != nil {
				t.Errorf("install link %q: inputs %q: %v", link, q.Get("inputs"), err)
			}
		}
		if q.Has("quality") && !in.insiders {
			t.Errorf("install link %q: quality %q, want insiders or none", link, q.Get("quality"))
		}
		// The badge and its words say which VS Code the button is for.
		if wantInsiders := strings.Contains(alt, "Insiders"); wantInsiders != in.insiders || wantInsiders != strings.Contains(badge, "VS_Code_Insiders") {
			t.Errorf("button %q (badge %s) links to %s: the words, the badge and the link disagree on VS Code or VS Code Insiders", alt, badge, link)
		}
		installs = append(installs, in)
	}
	return installs
}

// Each VS Code install button in the README carries exactly the
// configuration of the JSON block that follows it, for VS Code and for
// VS Code Insiders alike: the button and the block a user copies by hand
// install the same server.
func TestVSCodeInstallButtonsMatchTheirBlocks(t *testing.T) {
	readme := readDoc(t, "README.md")
	installs := vscodeInstalls(t, readme)
	var jsonBlocks []codeBlock
	for _, b := range codeBlocks(readme) {
		if b.lang == "json" {
			jsonBlocks = append(jsonBlocks, b)
		}
	}
	type target struct {
		stable, insiders int
	}
	perBlock := map[int]*target{}
	commands := map[string]bool{}
	for _, in := range installs {
		i := slices.IndexFunc(jsonBlocks, func(b codeBlock) bool { return b.at > in.at })
		if i < 0 {
			t.Errorf("install link %s: no json block follows it", in.link)
			continue
		}
		b := jsonBlocks[i]
		var block struct {
			Inputs  any            `json:"inputs"`
			Servers map[string]any `json:"servers"`
		}
		if err := json.Unmarshal([]byte(b.text), &block); err != nil {
			t.Errorf("README.md:%d: %v", b.line, err)
			continue
		}
		var top map[string]any
		_ = json.Unmarshal([]byte(b.text), &top) // parsed above
		for k := range top {
			if k != "inputs" && k != "servers" {
				t.Errorf("README.md:%d: the block beside an install button has %q, which a link cannot carry", b.line, k)
			}
		}
		if len(block.Servers) != 1 || block.Servers[in.name] == nil {
			t.Errorf("README.md:%d: the block beside install link %s must configure exactly the server %q; it has %v", b.line, in.link, in.name, keys(block.Servers))
			continue
		}
		if !reflect.DeepEqual(in.config, block.Servers[in.name]) {
			t.Errorf("README.md:%d: install link %s carries the configuration\n%s\nbut the block beside it shows\n%s", b.line, in.link, marshal(in.config), marshal(block.Servers[in.name]))
		}
		if !reflect.DeepEqual(in.inputs, block.Inputs) {
			t.Errorf("README.md:%d: install link %s carries the inputs\n%s\nbut the block beside it shows\n%s", b.line, in.link, marshal(in.inputs), marshal(block.Inputs))
		}
		if perBlock[i] == nil {
			perBlock[i] = &target{}
		}
		if in.insiders {
			perBlock[i].insiders++
		} else {
			perBlock[i].stable++
		}
		if cfg, ok := in.config.(map[string]any); ok {
			command, _ := cfg["command"].(string)
			commands[command] = true
		}
	}
	for i, n := range perBlock {
		if n.stable != 1 || n.insiders != 1 {
			t.Errorf("README.md:%d: the block has %d VS Code and %d VS Code Insiders buttons, want one of each", jsonBlocks[i].line, n.stable, n.insiders)
		}
	}
	if !commands["npx"] || !commands["docker"] {
		t.Errorf("the README's install buttons run %v; want npx and docker, as the reference's README offers", keys(commands))
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func marshal(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
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

// The README is a user's document: details go to docs/, and it stays
// short enough to read through.
func TestREADMEIsShort(t *testing.T) {
	const most = 450
	if n := strings.Count(readDoc(t, "README.md"), "\n"); n > most {
		t.Errorf("README.md has %d lines, more than %d: move details to docs/", n, most)
	}
}
