package access

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	alice = "alice-0123456789abcdef"
	bob   = "bob-0123456789abcdef00"
	carol = "carol-0123456789abcdef"
)

func TestCheck(t *testing.T) {
	g, err := Parse(strings.NewReader(`
# team tokens
` + alice + `  team,notes  write
` + bob + `    *           read
` + bob + `    team        write
` + carol + `  default     read
`))
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 3 {
		t.Fatalf("%d tokens", g.Len())
	}
	cases := []struct {
		token, memory string
		want          Level
	}{
		{alice, "team", Write},
		{alice, "notes", Write},
		{alice, "default", None},
		{alice, "other", None},
		{bob, "team", Write},
		{bob, "notes", Read},
		{bob, "anything", Read},
		{carol, "default", Read},
		{carol, "team", None},
		{"", "team", None},
		{"alice-0123456789abcdeX", "team", None},
		{alice[:len(alice)-1], "team", None},
		{alice + "x", "team", None},
		// Names no memory can have are reached by no grant, "*" neither.
		{bob, "../team", None},
		{bob, "Team", None},
		{bob, "", None},
	}
	for _, c := range cases {
		if got := g.Check(c.token, c.memory); got != c.want {
			t.Errorf("Check(%.8s…, %q) = %v, want %v", c.token, c.memory, got, c.want)
		}
		// A page's cookie stands for its token, and for nothing else.
		if got := g.CheckCookie(CookieValue(c.token), c.memory); got != c.want {
			t.Errorf("CheckCookie(CookieValue(%.8s…), %q) = %v, want %v", c.token, c.memory, got, c.want)
		}
	}
	for _, token := range []string{alice, bob} {
		if v := CookieValue(token); strings.Contains(v, token) || g.Check(v, "team") != None || g.CheckCookie(token, "team") != None {
			t.Errorf("the cookie of %.8s… holds the token, or works as a token, or the token as a cookie", token)
		}
	}
	var none *Grants
	if none.Check(alice, "team") != None {
		t.Error("nil grants must grant nothing")
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{alice + " team", "line 1: want three fields"},
		{"\n\nshort team write", "line 3: the token is 5 characters long"},
		{alice + " team admin", "line 1: the access field is neither read nor write (not shown: it may be a token in the wrong column)"},
		{alice + " ../etc write", "line 1: memory name 1 of the memories field: use lowercase letters"},
		{alice + " team,,notes write", "line 1: memory name 2 of the memories field: use 1 to 64"},
		{alice + " nul write", "memory name 1 of the memories field is reserved on Windows"},
		{alice + " com1.txt write", "reserved on Windows"},
		{alice + " Team write", "lowercase"},
		{alice + " team. write", "ends with '.'"},
		// A token pasted into the wrong column, or the columns swapped:
		// the error names the line and the field, and never quotes it.
		{"# token memories access\n" + alice + " " + strings.ToUpper(bob) + " write", "line 2: memory name 1 of the memories field: use lowercase letters"},
		{alice + " team," + strings.ToUpper(bob) + " read", "line 1: memory name 2 of the memories field"},
		{alice + " team " + bob, "line 1: the access field is neither read nor write"},
		{"team " + alice + " write", "line 1: the token is 4 characters long"},
		// A label that would show as another: refused, the character named.
		{alice + " team write Alice\u202e", "line 1: the label holds U+202E, a bidirectional control or zero-width character"},
		{"# x\n" + alice + " team write Al\u200bice", "line 2: the label holds U+200B"},
		{alice + " team write \u2066Bob\u2069", "line 1: the label holds U+2066"},
		{alice + " team write \ufeffBob", "line 1: the label holds U+FEFF"},
	} {
		_, err := Parse(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.file, err, c.want)
		}
		if err == nil {
			continue
		}
		// No field of the line shows in the error, whatever its column.
		for _, line := range strings.Split(c.file, "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, field := range strings.Fields(strings.ReplaceAll(line, ",", " ")) {
				if len(field) >= 4 && field != "write" && field != "read" && strings.Contains(err.Error(), field) {
					t.Errorf("%q: the error quotes the field %q: %v", c.file, field, err)
				}
			}
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"default", "team", "a", "team-1", "notes_2026.v2", "a.b", strings.Repeat("x", 64), "console"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", `a\b`, "a\x00b", ".hidden", "-x", "a b", "é", "%2e%2e", strings.Repeat("x", 65), "CON", "lpt9", "aux.json", "Team", "TEAM", "team.", "a..", "x\n"} {
		if err := ValidName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReloadKeepsGrantsOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(alice+" team write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Check(alice, "team") != Write {
		t.Fatal("not granted")
	}
	// Revoke alice, grant bob.
	os.WriteFile(path, []byte(bob+" team read\n"), 0o600)
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if f.Check(alice, "team") != None || f.Check(bob, "team") != Read {
		t.Fatal("reload did not take effect")
	}
	// A broken file leaves the grants in force.
	os.WriteFile(path, []byte("broken\n"), 0o600)
	if err := f.Reload(); err == nil {
		t.Fatal("broken file accepted")
	}
	if f.Check(bob, "team") != Read {
		t.Fatal("a failed reload changed the grants")
	}
	// So does a file that grants no token: an empty file is more likely
	// an editor's save caught half-way than a wish to lock everyone out.
	for _, empty := range []string{"", "\n\n", "# every grant removed\n"} {
		os.WriteFile(path, []byte(empty), 0o600)
		if err := f.Reload(); !errors.Is(err, ErrNoGrants) || !strings.Contains(err.Error(), "to revoke every token, stop the server") {
			t.Errorf("reload of %q: %v; want it refused as granting no token", empty, err)
		}
		if f.Check(bob, "team") != Read {
			t.Fatalf("reload of %q changed the grants", empty)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
	// At start there are no grants to keep: an empty file is served,
	// refusing every request until a reload brings grants.
	os.WriteFile(path, nil, 0o600)
	if f, err := Open(path); err != nil || f.Len() != 0 {
		t.Fatalf("an empty file at start: %v", err)
	}
}

// A tokens file that the server's group or other users may read or write
// is used, with a warning that says how to fix it; at start and on every
// reload, while it stays so.
func TestWarnsOnOpenPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows shows no group or other permissions in the mode")
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(alice+" team write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged []string
	f, err := OpenWith(path, Options{Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }})
	if err != nil || len(logged) != 0 {
		t.Fatalf("mode 0600: %v, logged %q", err, logged)
	}
	for _, mode := range []os.FileMode{0o644, 0o666, 0o640, 0o604, 0o620} {
		logged = nil
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if err := f.Reload(); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("warning: tokens file %s has mode %04o: users other than the server's may read (or change) the tokens in it; make it readable by the server only: chmod 600 %s", path, mode, path)
		if len(logged) != 1 || logged[0] != want {
			t.Errorf("mode %04o: logged %q, want %q", mode, logged, want)
		}
		if f.Check(alice, "team") != Write {
			t.Errorf("mode %04o: the grants were not used", mode)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		logged = nil
		os.Chmod(path, mode)
		if err := f.Reload(); err != nil || len(logged) != 0 {
			t.Errorf("mode %04o: %v, logged %q", mode, err, logged)
		}
	}
}

// The tokens file docs/teams.md shows parses and grants what it says.
func TestTeamsExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "teams.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## The tokens file")
	if !ok {
		t.Fatal("docs/teams.md has no tokens file section")
	}
	_, rest, _ = strings.Cut(rest, "```\n")
	example, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/teams.md's tokens file section has no example block")
	}
	g, err := Parse(strings.NewReader(example))
	if err != nil {
		t.Fatalf("the example in docs/teams.md does not parse: %v\n%s", err, example)
	}
	const writer, reader = "3f9a0c1e5b7d4a2f8e6c0b9a1d3f5e7c9b0a2c4e6f8d0b1a3c5e7f9a0b2c4d6e", "77c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5"
	for _, tt := range []struct {
		token, memory string
		want          Level
	}{
		{writer, "team", Write}, {writer, "notes", Write}, {writer, "default", None},
		{reader, "team", Read}, {reader, "anything", Read},
	} {
		if got := g.Check(tt.token, tt.memory); got != tt.want {
			t.Errorf("%s on %s: %v, want %v", tt.token[:4], tt.memory, got, tt.want)
		}
	}
}

// TestPageKey: a page's edit key stands for its token on the memories the
// token reaches, and is neither the token, its cookie, nor derivable from
// the cookie by the same digest.
func TestPageKey(t *testing.T) {
	const writer, reader = "writer-0123456789abcdef", "reader-0123456789abcdef"
	g, err := Parse(strings.NewReader(writer + " alpha write\n" + reader + " * read\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, memory string
		want        Level
	}{
		{PageKey(writer), "alpha", Write},
		{PageKey(writer), "beta", None},
		{PageKey(reader), "beta", Read},
		{writer, "alpha", None},
		{CookieValue(writer), "alpha", None},
		{PageKey(CookieValue(writer)), "alpha", None},
		{"", "alpha", None},
	} {
		if got := g.CheckPageKey(tc.key, tc.memory); got != tc.want {
			t.Errorf("CheckPageKey(%.12s…, %s) = %v, want %v", tc.key, tc.memory, got, tc.want)
		}
	}
	one := Single(writer, DefaultMemory)
	if one.Check(writer, DefaultMemory) != Write || one.CheckCookie(CookieValue(writer), DefaultMemory) != Write ||
		one.CheckPageKey(PageKey(writer), DefaultMemory) != Write || one.Check(writer, "alpha") != None || one.Check(reader, DefaultMemory) != None {
		t.Error("Single grants something other than its token's write access to its memory")
	}
}

// The optional fourth column labels a token: the rest of the line, the
// first label of a token on several lines. Files without it still parse.
func TestLabels(t *testing.T) {
	g, err := Parse(strings.NewReader(alice + " team write Alice's laptop\n" + alice + " notes read other\n" + bob + " * read\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Label(alice); got != "Alice's laptop" {
		t.Errorf("alice's label %q", got)
	}
	if got := g.Label(bob); got != "" {
		t.Errorf("bob's label %q, want none", got)
	}
	if got := g.Label("nobody-at-all-0123456789"); got != "" {
		t.Errorf("an unknown token's label %q", got)
	}
	if g.Check(alice, "team") != Write || g.Check(alice, "notes") != Read {
		t.Error("a labelled line grants what it says")
	}
}

// TestSources: the grants of a server of one memory name that memory and
// are read from no file; everyone's need no credential, reach that memory
// only and give it no label; a tokens file's name no one memory, and are
// read again.
func TestSources(t *testing.T) {
	const token = "writer-0123456789abcdef"
	open := Everyone(DefaultMemory)
	for _, credential := range []string{"", token, "anything"} {
		if open.Check(credential, DefaultMemory) != Write || open.CheckCookie(credential, DefaultMemory) != Write ||
			open.CheckPageKey(credential, DefaultMemory) != Write {
			t.Errorf("Everyone does not let %q write its memory", credential)
		}
		if open.Check(credential, "alpha") != None || open.Check(credential, "..") != None || open.Label(credential) != "" {
			t.Errorf("Everyone grants %q more than its memory", credential)
		}
	}
	one := Single(token, DefaultMemory)
	if !open.Open() || one.Open() || open.Only() != DefaultMemory || one.Only() != DefaultMemory {
		t.Errorf("Open/Only: everyone's %v %q, one token's %v %q", open.Open(), open.Only(), one.Open(), one.Only())
	}
	for _, fixed := range []Source{open, one} {
		if fixed.Grants() != fixed || fixed.Reload() == nil {
			t.Errorf("fixed grants %v: not their own source, or read again", fixed)
		}
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(token+" default write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var src Source = f
	if g := src.Grants(); g.Open() || g.Only() != "" || g.Check(token, DefaultMemory) != Write || g.Check("", DefaultMemory) != None {
		t.Error("a tokens file's grants are not its lines'")
	}
	if err := os.WriteFile(path, []byte(token+" default read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := src.Reload(); err != nil || src.Grants().Check(token, DefaultMemory) != Read {
		t.Errorf("reload: %v, %v", err, src.Grants().Check(token, DefaultMemory))
	}
}
