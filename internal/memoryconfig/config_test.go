package memoryconfig_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestReadTrimsTheDatabaseURL: a blank MEMORY_DATABASE_URL is no database,
// for the server and every command alike, and a set one loses the space
// around it.
func TestReadTrimsTheDatabaseURL(t *testing.T) {
	for value, want := range map[string]string{
		"":                          "",
		" ":                         "",
		"\t\n":                      "",
		" postgres://h/db ":         "postgres://h/db",
		"postgres://u:p@h:5432/mem": "postgres://u:p@h:5432/mem",
	} {
		c := memoryconfig.Read(memoryconfig.Vars{"MEMORY_DATABASE_URL": value})
		if c.DatabaseURL != want {
			t.Errorf("MEMORY_DATABASE_URL=%q: DatabaseURL %q, want %q", value, c.DatabaseURL, want)
		}
	}
}

// TestReadDefaults: an empty environment is the defaults, with no error.
func TestReadDefaults(t *testing.T) {
	c := memoryconfig.Read(memoryconfig.Vars{})
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if c.AnswerLimit != answer.DefaultLimit || c.AnswerLimitSet || c.WatchInterval != 0 || c.Lock.Timeout != 0 || c.DatabaseURL != "" || c.FilePath != "" || c.HTTPToken != "" {
		t.Errorf("defaults: %+v", c)
	}
}

// TestReadValues: every variable lands in its field.
func TestReadValues(t *testing.T) {
	c := memoryconfig.Read(memoryconfig.Vars{
		"MEMORY_FILE_PATH":                        "~/m.jsonl",
		"MEMORY_HTTP_TOKEN":                       "tok",
		"MEMORY_ANSWER_LIMIT":                     " 0 ",
		"MCP_SERVER_MEMORY_LOCK_TIMEOUT":          "1s",
		"MCP_SERVER_MEMORY_LOCK_STALE_AFTER":      "2s",
		"MCP_SERVER_MEMORY_LOCK_REFRESH":          "3s",
		"MCP_SERVER_MEMORY_WATCH_INTERVAL":        "4s",
		"MCP_SERVER_MEMORY_SESSION_START_TIMEOUT": "5s",
		"MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT":   "6s",
		"MCP_SERVER_MEMORY_DB_READ_TIMEOUT":       "7s",
		"MCP_SERVER_MEMORY_DB_WRITE_TIMEOUT":      "8s",
		"MEMORY_HISTORY_DAYS":                     "30",
		"MEMORY_HISTORY_MAX_MB":                   "5",
		"MEMORY_MAX_CALLS":                        "9",
		"MEMORY_MAX_READS":                        "3",
		"MEMORY_MAX_ANSWER_MB":                    "100",
		"MCP_SERVER_MEMORY_READ_WAIT":             "2s",
	})
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	got := []time.Duration{c.Lock.Timeout, c.Lock.StaleAfter, c.Lock.RefreshInterval, c.WatchInterval, c.SessionStartTimeout, c.MemoryIdleTimeout, c.DatabaseReadTimeout, c.DatabaseWriteTimeout}
	for i, d := range got {
		if want := time.Duration(i+1) * time.Second; d != want {
			t.Errorf("knob %d: %v, want %v", i, d, want)
		}
	}
	if c.FilePath != "~/m.jsonl" || c.HTTPToken != "tok" || c.AnswerLimit != 0 || !c.AnswerLimitSet {
		t.Errorf("read %+v", c)
	}
	if c.Bounds != (memoryconfig.Bounds{Calls: 9, Reads: 3, AnswerMB: 100, ReadWait: 2 * time.Second}) {
		t.Errorf("bounds %+v", c.Bounds)
	}
	if c.History != (history.Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 5 << 20}) {
		t.Errorf("history limits %+v", c.History)
	}
	if off := memoryconfig.Read(memoryconfig.Vars{"MEMORY_HISTORY_DAYS": "0"}); off.Err() != nil || !off.History.Off() {
		t.Errorf("MEMORY_HISTORY_DAYS=0: %+v, %v; want no history", off.History, off.Err())
	}
	if def := memoryconfig.Read(memoryconfig.Vars{}); def.History != history.Default {
		t.Errorf("history limits by default %+v", def.History)
	}
}

// TestMalformedValues: a malformed value is an error naming the variable;
// one that only the server uses does not stop a command from opening the
// memory, one that opening uses does.
func TestMalformedValues(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		opening     bool
	}{
		{"MEMORY_ANSWER_LIMIT", "lots", false},
		{"MEMORY_ANSWER_LIMIT", "10", false},
		{"MEMORY_ANSWER_LIMIT", "-1", false},
		{"MCP_SERVER_MEMORY_WATCH_INTERVAL", "soon", false},
		{"MCP_SERVER_MEMORY_SESSION_START_TIMEOUT", "0s", false},
		{"MCP_SERVER_MEMORY_MEMORY_IDLE_TIMEOUT", "-1s", false},
		{"MCP_SERVER_MEMORY_LOCK_TIMEOUT", "1", true},
		{"MCP_SERVER_MEMORY_LOCK_STALE_AFTER", "x", true},
		{"MCP_SERVER_MEMORY_LOCK_REFRESH", "0", true},
		{"MCP_SERVER_MEMORY_DB_READ_TIMEOUT", "x", true},
		{"MCP_SERVER_MEMORY_DB_WRITE_TIMEOUT", "x", true},
		{"MEMORY_HISTORY_DAYS", "-1", true},
		{"MEMORY_HISTORY_DAYS", "90d", true},
		{"MEMORY_HISTORY_MAX_MB", "0", true},
		{"MEMORY_MAX_CALLS", "0", false},
		{"MEMORY_MAX_READS", "many", false},
		{"MEMORY_MAX_ANSWER_MB", "-5", false},
		{"MCP_SERVER_MEMORY_READ_WAIT", "x", false},
	} {
		file := filepath.Join(t.TempDir(), "memory.jsonl")
		c := memoryconfig.Read(memoryconfig.Vars{tc.name: tc.value, "MEMORY_FILE_PATH": file})
		err := c.Err()
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s=%q: Err %v, want one naming the variable", tc.name, tc.value, err)
		}
		m, openErr := c.Open(context.Background(), memoryconfig.Choice{Logf: t.Logf})
		switch {
		case tc.opening && openErr == nil:
			t.Errorf("%s=%q: Open succeeded", tc.name, tc.value)
		case tc.opening && openErr.Error() != err.Error():
			t.Errorf("%s=%q: Open: %v, want %v", tc.name, tc.value, openErr, err)
		case !tc.opening && openErr != nil:
			t.Errorf("%s=%q: Open: %v, want the memory file", tc.name, tc.value, openErr)
		case !tc.opening:
			m.Close()
		}
		_, openErr = c.OpenMemories(context.Background(), t.TempDir(), t.Logf)
		if tc.opening != (openErr != nil) {
			t.Errorf("%s=%q: OpenMemories: %v", tc.name, tc.value, openErr)
		}
	}
}

// write creates entity name in store.
func write(t *testing.T, store graph.Store, name string) {
	t.Helper()
	_, err := store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{}}})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// names returns the entities' names in store.
func names(t *testing.T, store graph.Store) []string {
	t.Helper()
	var out []string
	if err := store.View(context.Background(), func(g *graph.Graph) error {
		for _, e := range g.Entities() {
			out = append(out, e.Name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenFile: with no database, the memory is MEMORY_FILE_PATH's file,
// named for the log, hidden from remote clients under each of its
// spellings, created by the first write.
func TestOpenFile(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	file := filepath.Join(link, "memory.jsonl")
	c := memoryconfig.Read(memoryconfig.Vars{"MEMORY_FILE_PATH": file, "MEMORY_DATABASE_URL": "  "})
	m, err := c.Open(context.Background(), memoryconfig.Choice{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.File == nil || m.File.Path() != file || m.Where != "memory file "+file {
		t.Errorf("opened %q (%v), want the memory file %s", m.Where, m.File, file)
	}
	if want := []string{file, filepath.Join(real, "memory.jsonl")}; strings.Join(m.HidePaths, "|") != strings.Join(want, "|") {
		t.Errorf("HidePaths %q, want %q", m.HidePaths, want)
	}
	if m.Exists() {
		t.Error("a memory nobody wrote exists")
	}
	write(t, m.Store, "A")
	if !m.Exists() {
		t.Error("a written memory does not exist")
	}
	if _, err := os.Stat(filepath.Join(real, "memory.jsonl")); err != nil {
		t.Errorf("the write made no file: %v", err)
	}
}

// TestOpenFileFlag: --file is taken from the current directory, not from
// the executable's, and wins over MEMORY_FILE_PATH.
func TestOpenFileFlag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	c := memoryconfig.Read(memoryconfig.Vars{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "other.jsonl")})
	m, err := c.Open(context.Background(), memoryconfig.Choice{File: "here.jsonl", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if want := filepath.Join(dir, "here.jsonl"); m.File.Path() != want {
		t.Errorf("--file here.jsonl opened %s, want %s", m.File.Path(), want)
	}
}

// TestOpenSettingErrors: flags that do not apply where the memory is, and
// a malformed URL, are setting errors, and never show the password.
func TestOpenSettingErrors(t *testing.T) {
	const secret = "s3cret-pw"
	for _, tc := range []struct {
		what string
		env  memoryconfig.Vars
		ch   memoryconfig.Choice
		want string
	}{
		{"--memory without a database", memoryconfig.Vars{}, memoryconfig.Choice{Memory: "team"}, "--memory applies to a database"},
		{"--file with a database", memoryconfig.Vars{"MEMORY_DATABASE_URL": "postgres://me:" + secret + "@127.0.0.1:1/db"}, memoryconfig.Choice{File: "m.jsonl"}, "--file does not apply"},
		{"a malformed URL", memoryconfig.Vars{"MEMORY_DATABASE_URL": "postgres://me:" + secret + "@h:notaport/db"}, memoryconfig.Choice{}, "not a valid PostgreSQL connection string"},
	} {
		_, err := memoryconfig.Read(tc.env).Open(context.Background(), tc.ch)
		var setting *memoryconfig.SettingError
		if !errors.As(err, &setting) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want a setting error saying %q", tc.what, err, tc.want)
		}
	}
	_, err := memoryconfig.Read(memoryconfig.Vars{"MEMORY_DATABASE_URL": "postgres://me:" + secret + "@h:notaport/db"}).OpenMemories(context.Background(), "", t.Logf)
	var setting *memoryconfig.SettingError
	if !errors.As(err, &setting) || strings.Contains(err.Error(), secret) {
		t.Errorf("named memories on a malformed URL: %v, want a setting error", err)
	}
}

// TestOpenUnreachableDatabase: a database that cannot be used is one line
// naming it, without the password, and not a setting error.
func TestOpenUnreachableDatabase(t *testing.T) {
	c := memoryconfig.Read(memoryconfig.Vars{"MEMORY_DATABASE_URL": "postgres://me:s3cret-pw@127.0.0.1:1/memory"})
	for what, open := range map[string]func() error{
		"one memory":     func() error { _, err := c.Open(context.Background(), memoryconfig.Choice{}); return err },
		"named memories": func() error { _, err := c.OpenMemories(context.Background(), "", t.Logf); return err },
	} {
		err := open()
		var setting *memoryconfig.SettingError
		if err == nil || errors.As(err, &setting) || strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "\n") ||
			!strings.HasPrefix(err.Error(), `cannot use the `) || !strings.Contains(err.Error(), `PostgreSQL database "memory" on 127.0.0.1:1`) {
			t.Errorf("%s: %q, want one line naming the database", what, err)
		}
	}
}

// TestOpenDatabase: with MEMORY_DATABASE_URL set the memory is --memory's
// in the database, whatever MEMORY_FILE_PATH says, and named memories
// there share it.
func TestOpenDatabase(t *testing.T) {
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	file := filepath.Join(t.TempDir(), "unused.jsonl")
	c := memoryconfig.Read(memoryconfig.Vars{"MEMORY_DATABASE_URL": " " + url + " ", "MEMORY_FILE_PATH": file})
	m, err := c.Open(context.Background(), memoryconfig.Choice{Memory: name, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.File != nil || m.HidePaths != nil || !strings.HasPrefix(m.Where, "memory \""+name+"\" in PostgreSQL database ") {
		t.Errorf("opened %q (file %v, hiding %q)", m.Where, m.File, m.HidePaths)
	}
	if !m.Exists() {
		t.Error("the one memory a server opens does not exist from the start")
	}
	write(t, m.Store, "A")
	if _, err := os.Stat(file); err == nil {
		t.Error("MEMORY_FILE_PATH was written")
	}

	memories, err := c.OpenMemories(context.Background(), "", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer memories.Close()
	if !strings.HasPrefix(memories.Where, "memories in PostgreSQL database ") {
		t.Errorf("named memories: %q", memories.Where)
	}
	same, err := memories.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer same.Close()
	if got := names(t, same.Store); strings.Join(got, ",") != "A" {
		t.Errorf("named memory %s holds %q, want A", name, got)
	}
	other, err := memories.Open(context.Background(), pgtest.MemoryName(t))
	if err != nil {
		t.Fatal(err)
	}
	if other.Exists() {
		t.Error("a named memory nobody wrote exists")
	}
}

// TestOpenMemoryFiles: named memories in a directory are its files
// NAME.jsonl, each hidden from remote clients, none made until written;
// a directory that is a file is refused.
func TestOpenMemoryFiles(t *testing.T) {
	dir := t.TempDir()
	c := memoryconfig.Read(memoryconfig.Vars{})
	memories, err := c.OpenMemories(context.Background(), dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer memories.Close()
	if memories.Where != "memory files NAME.jsonl in "+dir {
		t.Errorf("Where %q", memories.Where)
	}
	m, err := memories.Open(context.Background(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "alpha.jsonl")
	if m.File.Path() != path || len(m.HidePaths) == 0 || m.HidePaths[0] != path {
		t.Errorf("alpha: %s hiding %q", m.File.Path(), m.HidePaths)
	}
	if m.Exists() {
		t.Error("a memory nobody wrote exists")
	}
	write(t, m.Store, "A")
	if !m.Exists() {
		t.Error("a written memory does not exist")
	}

	notDir := filepath.Join(dir, "alpha.jsonl")
	if _, err := c.OpenMemories(context.Background(), notDir, t.Logf); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("--memories on a file: %v", err)
	}
}
