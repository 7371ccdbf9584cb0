package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func TestResolvePathIsClean(t *testing.T) {
	serverDir := filepath.Join(string(filepath.Separator), "opt", "memory")
	for _, c := range []struct{ value, want string }{
		{"/a//b/./m.jsonl", "/a/b/m.jsonl"},
		{"/a/b/../c/m.jsonl", "/a/c/m.jsonl"},
		{"sub//../m.jsonl", filepath.Join(serverDir, "m.jsonl")},
	} {
		got, err := ResolvePath(c.value, serverDir, t.Logf)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", c.value, got, err, c.want)
		}
	}
}

// MEMORY_FILE_PATH naming a memory.jsonl that does not exist, with a legacy
// memory.json beside it (a Docker volume from an old reference image):
// migrated as for the default path.
func TestLegacyMigrationOfAConfiguredPath(t *testing.T) {
	for _, c := range []struct {
		name, file   string
		jsonl        bool
		legacyIsDir  bool
		wantMigrated bool
	}{
		{"memory.jsonl missing", "memory.jsonl", false, false, true},
		{"memory.jsonl present", "memory.jsonl", true, false, false},
		{"another name", "graph.jsonl", false, false, false},
		{"memory.json is a directory", "memory.jsonl", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			legacy := filepath.Join(dir, "memory.json")
			if c.legacyIsDir {
				os.Mkdir(legacy, 0o700)
			} else {
				os.WriteFile(legacy, []byte("legacy\n"), 0o600)
			}
			if c.jsonl {
				os.WriteFile(filepath.Join(dir, c.file), []byte("new\n"), 0o600)
			}
			var logged []string
			want := filepath.Join(dir, c.file)
			got, err := ResolvePath(dir+"//"+c.file, "/elsewhere", func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
			if err != nil || got != want {
				t.Fatalf("got %q, %v; want %q", got, err, want)
			}
			data, _ := os.ReadFile(got)
			_, legacyErr := os.Stat(legacy)
			if c.wantMigrated {
				wantLog := fmt.Sprintf("Migrated legacy memory file %s to %s", legacy, want)
				if string(data) != "legacy\n" || legacyErr == nil || len(logged) != 1 || logged[0] != wantLog {
					t.Errorf("not migrated: data %q, legacy still there %v, log %q", data, legacyErr == nil, logged)
				}
			} else if len(logged) != 0 || legacyErr != nil {
				t.Errorf("migrated when it should not: log %v (legacy: %v)", logged, legacyErr)
			}
		})
	}
}

// makeUnwritable makes dir unwritable, for root too (chattr +i), or skips.
func makeUnwritable(t *testing.T, dir string) {
	t.Helper()
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if os.Geteuid() != 0 {
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root and cannot make %s immutable: %v %s", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

// A memory file path that cannot work: CheckPath names the problem and the
// fix, and every Store call that fails because of it returns that same
// message, so the user sees it in the MCP host and not only in a log.
func TestBadPathsAreExplained(t *testing.T) {
	for _, c := range []struct {
		name string
		// setup returns the memory file path inside root.
		setup      func(t *testing.T, root string) string
		wantInText []string
		readWorks  bool
	}{
		{"a directory", func(t *testing.T, root string) string {
			os.Mkdir(filepath.Join(root, "dir"), 0o700)
			return filepath.Join(root, "dir")
		}, []string{"is a directory", "set MEMORY_FILE_PATH to a file in it, such as "}, false},
		{"under a file", func(t *testing.T, root string) string {
			os.WriteFile(filepath.Join(root, "file"), nil, 0o600)
			return filepath.Join(root, "file", "sub", "memory.jsonl")
		}, []string{"is under " + "ROOT/file, which is a file, not a directory", "set MEMORY_FILE_PATH to a file in a directory"}, false},
		{"an unwritable directory", func(t *testing.T, root string) string {
			dir := filepath.Join(root, "ro")
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, "memory.jsonl"), []byte(`{"type":"entity","name":"A","entityType":"t","observations":[]}`+"\n"), 0o600)
			makeUnwritable(t, dir)
			return filepath.Join(dir, "memory.jsonl")
		}, []string{"the directory of the memory file, ROOT/ro, is not writable", "make it writable"}, true},
		{"a directory to create in an unwritable one", func(t *testing.T, root string) string {
			dir := filepath.Join(root, "ro")
			os.Mkdir(dir, 0o700)
			makeUnwritable(t, dir)
			return filepath.Join(dir, "new", "memory.jsonl")
		}, []string{"ROOT/ro, where the memory file's directory ROOT/ro/new must be created, is not writable"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			path := c.setup(t, root)
			check := CheckPath(path)
			var pe *PathError
			if !errors.As(check, &pe) {
				t.Fatalf("CheckPath = %v, want a *PathError", check)
			}
			for _, w := range c.wantInText {
				if w = strings.ReplaceAll(w, "ROOT", root); !strings.Contains(check.Error(), w) {
					t.Errorf("CheckPath = %q, want it to say %q", check, w)
				}
			}
			s := quietStore(path)
			if err := create(s, "B"); err == nil || err.Error() != check.Error() {
				t.Errorf("a write failed with %q, want %q", err, check)
			}
			err := s.View(context.Background(), func(*graph.Graph) error { return nil })
			if c.readWorks && err != nil {
				t.Errorf("a read failed: %v", err)
			}
			if !c.readWorks && (err == nil || err.Error() != check.Error()) {
				t.Errorf("a read failed with %q, want %q", err, check)
			}
		})
	}
}

func TestGoodPathsPassTheCheck(t *testing.T) {
	root := t.TempDir()
	for _, path := range []string{
		filepath.Join(root, "memory.jsonl"),
		filepath.Join(root, "a", "b", "memory.jsonl"),
	} {
		if err := CheckPath(path); err != nil {
			t.Errorf("CheckPath(%s) = %v", path, err)
		}
	}
	os.WriteFile(filepath.Join(root, "memory.jsonl"), nil, 0o600)
	if err := CheckPath(filepath.Join(root, "memory.jsonl")); err != nil {
		t.Errorf("an existing file: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("the check left files behind: %v", entries)
	}
	// A failure that is not the path's stays what it is.
	s := quietStore(filepath.Join(root, "memory.jsonl"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Update(ctx, graph.Write{Apply: func(*graph.Graph) error { return nil }}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled write: %v", err)
	}
}

// A MEMORY_FILE_PATH that is a symbolic link resolves to the file the link
// ends at, existing or not, so saves and the lock happen beside it and the
// link stays a link.
func TestResolvePathFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	synced, home, deep := mk("synced"), mk("home"), mk("a/b")
	target := filepath.Join(synced, "memory.jsonl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(name, to string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(to, p); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
		return p
	}
	relative := link("home/rel.jsonl", "../synced/memory.jsonl")
	absolute := link("home/abs.jsonl", target)
	chain := link("home/chain.jsonl", "rel.jsonl")
	dangling := link("home/new.jsonl", "../synced/new.jsonl")
	// A link reached through a linked directory climbs ".." from the
	// directory's real place: linked/x.jsonl is really a/b/x.jsonl, whose
	// "../../synced" is dir/synced, not dir/../synced.
	link("linked", deep)
	link("a/b/x.jsonl", "../../synced/memory.jsonl")
	through := filepath.Join(dir, "linked", "x.jsonl")
	loop := link("home/loop1.jsonl", "loop2.jsonl")
	link("home/loop2.jsonl", "loop1.jsonl")

	for _, c := range []struct{ value, want string }{
		{relative, target},
		{absolute, target},
		{chain, target},
		{dangling, filepath.Join(synced, "new.jsonl")},
		{through, target},
		{target, target},
		{filepath.Join(home, "plain.jsonl"), filepath.Join(home, "plain.jsonl")},
	} {
		got, err := ResolvePath(c.value, "/elsewhere", t.Logf)
		if err != nil || got != c.want {
			t.Errorf("ResolvePath(%s) = %q, %v; want %q", c.value, got, err, c.want)
		}
	}
	if got, err := ResolvePath(loop, "/elsewhere", t.Logf); err == nil || !strings.Contains(err.Error(), "symbolic links in a row") {
		t.Errorf("ResolvePath of a loop of links = %q, %v; want an error naming the loop", got, err)
	}

	// A write through the dangling link creates the target and leaves the
	// link a link; nothing is written beside the link.
	path, err := ResolvePath(dangling, "/elsewhere", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s := Open(path, Options{})
	if _, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "t"}})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link after a write: %v, %v; want a symbolic link", fi, err)
	}
	if data, err := os.ReadFile(dangling); err != nil || !strings.Contains(string(data), `"name":"A"`) {
		t.Errorf("reading through the link: %q, %v", data, err)
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if e.Type()&os.ModeSymlink == 0 {
			t.Errorf("%s was created beside the link", e.Name())
		}
	}
}
