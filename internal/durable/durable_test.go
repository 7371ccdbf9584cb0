package durable

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func temps(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileReplacesAndReportsTheFileWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := WriteFile(path, 0o640, func(w io.Writer) error {
		_, err := io.WriteString(w, "new\n")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "new\n" {
		t.Fatalf("content %q", b)
	}
	now, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi, now) || fi.Size() != now.Size() || !fi.ModTime().Equal(now.ModTime()) {
		t.Fatalf("identity %v %v %v is not the file at the path (%v %v)", fi.Name(), fi.Size(), fi.ModTime(), now.Size(), now.ModTime())
	}
	if now.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", now.Mode().Perm())
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestWriteFileFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	os.WriteFile(path, []byte("old\n"), 0o600)
	boom := errors.New("disk full")
	_, err := WriteFile(path, 0o600, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Fatalf("old file changed: %q", b)
	}
	if left := temps(t, dir); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestPendingIdentityIsTheFileItWrote(t *testing.T) {
	// Another program replacing the file after the rename must not be taken
	// for the file written: the identity comes from the temporary file.
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	p, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup()
	io.WriteString(p, "ours\n")
	ours, err := p.Replace()
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "edit")
	os.WriteFile(foreign, []byte("theirs\n"), 0o600)
	os.Rename(foreign, path)
	now, _ := os.Stat(path)
	if os.SameFile(ours, now) {
		t.Fatal("the foreign file has the identity of the file written")
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl.history")
	old := path + ".0123456789abcdef0123456789abcdef.tmp"
	fresh := path + ".fedcba9876543210fedcba9876543210.tmp"
	other := filepath.Join(dir, "m.jsonl.0123456789abcdef0123456789abcdef.tmp")
	for _, f := range []string{old, fresh, other} {
		os.WriteFile(f, nil, 0o600)
	}
	long := time.Now().Add(-2 * StaleTempAge)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	RemoveStaleTemps(path)
	if _, err := os.Stat(old); err == nil {
		t.Error("a stale temporary file was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a live writer's temporary file was removed")
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("another file's temporary file was removed")
	}
}

func TestAppendAtCutsTheTornTailAndFollowsTheMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl.journal")
	fi, err := AppendAt(path, 0, []byte("a\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 2 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("size %d mode %v", fi.Size(), fi.Mode().Perm())
	}
	// A killed writer's torn line.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"torn`)
	f.Close()
	end, err := CompleteLines(path)
	if err != nil || end != 2 {
		t.Fatalf("CompleteLines %d %v", end, err)
	}
	// The owner narrowed the memory file: the next append narrows this one.
	if _, err := AppendAt(path, end, []byte("b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "a\nb\n" {
		t.Fatalf("content %q", b)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestCompleteLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if n, err := CompleteLines(path); n != 0 || err != nil {
		t.Fatalf("missing file: %d %v", n, err)
	}
	long := strings.Repeat("x", 9000)
	for _, c := range []struct {
		content string
		want    int64
	}{
		{"", 0},
		{"torn", 0},
		{"a\n", 2},
		{"a\nb", 2},
		{"a\n" + long, 2},
		{long + "\n" + long, int64(len(long) + 1)},
	} {
		os.WriteFile(path, []byte(c.content), 0o600)
		if n, err := CompleteLines(path); n != c.want || err != nil {
			t.Errorf("%.20q: %d %v, want %d", c.content, n, err, c.want)
		}
	}
}

func TestMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	if Mode(path) != 0o600 {
		t.Fatal("a missing memory file's companions are not 0600")
	}
	os.WriteFile(path, nil, 0o600)
	os.Chmod(path, 0o644)
	if Mode(path) != 0o644 {
		t.Fatal("the memory file's mode is not followed")
	}
}

func TestCreateKeepingKeepsTheNamedTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.jsonl")
	named := path + ".0123456789abcdef0123456789abcdef.tmp"
	stale := path + ".fedcba9876543210fedcba9876543210.tmp"
	long := time.Now().Add(-2 * StaleTempAge)
	for _, f := range []string{named, stale} {
		os.WriteFile(f, nil, 0o600)
		os.Chtimes(f, long, long)
	}
	p, err := CreateKeeping(path, 0o600, []string{filepath.Base(named)})
	if err != nil {
		t.Fatal(err)
	}
	p.Cleanup()
	if _, err := os.Stat(named); err != nil {
		t.Error("a temporary file the caller keeps was removed")
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale temporary file was kept")
	}
}
