package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// journaled starts a server that compacts only at exit and creates
// entities through it: they are in its journal alone.
func journaled(ctx context.Context, t *testing.T, file, version string, entities ...map[string]any) *serverProcess {
	t.Helper()
	srv := startServer(t, file, version, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE=1h")
	if !srv.mustCall(ctx, t, "create_entities", createEntitiesArgs(entities...)) {
		t.FailNow()
	}
	return srv
}

// exitOf closes the session (stdin, as a host does) and returns how long
// the server took to exit and its exit status.
func exitOf(t *testing.T, p *serverProcess) (time.Duration, int) {
	t.Helper()
	start := time.Now()
	p.close()
	return time.Since(start), p.cmd.ProcessState.ExitCode()
}

// TestCleanExitWithAStaleEmptyLockIsBounded: a crash left an empty lock
// (killed between creating it and writing it), which counts as stale only
// after 30 s. A server with writes in its journal exits within seconds
// anyway, in both protocol generations, leaving the journal (and saying
// so) for the next server, which serves every write.
func TestCleanExitWithAStaleEmptyLockIsBounded(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv := journaled(ctx, t, file, version, entityArg("Alice", "person", "in the journal"))
			if err := os.WriteFile(file+".lock", nil, 0o600); err != nil {
				t.Fatal(err)
			}
			took, status := exitOf(t, srv)
			if took > 4*time.Second || status != 0 {
				t.Errorf("the exit took %v with status %d, want under 4 s and 0", took.Round(time.Millisecond), status)
			}
			if log := srv.stderr.String(); !strings.Contains(log, "the journal was left for the next server") {
				t.Errorf("stderr does not say the journal was left:\n%s", log)
			}
			if _, err := os.Stat(file + ".journal"); err != nil {
				t.Fatalf("the journal is gone: %v", err)
			}
			os.Remove(file + ".lock")
			next := startServer(t, file, version, nil)
			if g := typedGraph(t, next.readGraph(ctx, t)); len(g.Entities) != 1 || g.Entities[0].Name != "Alice" {
				t.Errorf("the next server serves %+v, want Alice", g.Entities)
			}
		})
	}
}

// TestCleanExitWhoseCompactionFailedExits1: a clean exit whose final
// compaction fails says so on stderr and exits 1 (the journal keeps the
// writes).
func TestCleanExitWhoseCompactionFailedExits1(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := journaled(ctx, t, file, sharingVersion, entityArg("Alice", "person", "in the journal"))
	// Something no compaction can replace (a directory with a file in
	// it) now stands where the memory file goes: this fails for root too.
	if err := os.MkdirAll(filepath.Join(file, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, status := exitOf(t, srv)
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
	if log := srv.stderr.String(); !strings.Contains(log, "compacting the memory file at exit failed") {
		t.Errorf("stderr does not say the compaction failed:\n%s", log)
	}
	if _, err := os.Stat(file + ".journal"); err != nil {
		t.Errorf("the journal is gone: %v", err)
	}
}

// TestEditedExportRenamedOverTheFileStaysAsEdited: a server killed with a
// write only in its journal; a person exports the memory, deletes that
// entity from the export and renames the export over the memory file.
// Export folded the journal in first, so the next server serves the
// person's edit and does not bring the entity back.
func TestEditedExportRenamedOverTheFileStaysAsEdited(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := journaled(ctx, t, file, sharingVersion, entityArg("Keep", "person"), entityArg("Drop", "person"))
	srv.cmd.Process.Kill()
	srv.close()
	if _, err := os.Stat(file + ".journal"); err != nil {
		t.Fatalf("no journal after the kill (%v): the test no longer tests it", err)
	}
	cmd := serverCmd(file)
	cmd.Args = append(cmd.Args, "export")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if !strings.Contains(line, `"name":"Drop"`) {
			kept = append(kept, line)
		}
	}
	edited := filepath.Join(dir, "edited.jsonl")
	if err := os.WriteFile(edited, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(edited, file); err != nil {
		t.Fatal(err)
	}
	next := startServer(t, file, sharingVersion, nil)
	g := typedGraph(t, next.readGraph(ctx, t))
	if len(g.Entities) != 1 || g.Entities[0].Name != "Keep" {
		t.Errorf("after the edited export replaced the file the server serves %+v, want Keep alone", g.Entities)
	}
}

// TestAServerFoldsInAJournalItFindsAtStart: after a crash left writes only
// in the journal, the next server folds them into the memory file soon
// after it starts, before any call: on stdio in both protocol generations,
// and over HTTP with no client at all.
func TestAServerFoldsInAJournalItFindsAtStart(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2026-07-28", "http"} {
		t.Run(version, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "memory.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv := journaled(ctx, t, file, sharingVersion, entityArg("Alice", "person", "in the journal"))
			srv.cmd.Process.Kill()
			srv.close()
			if version == "http" {
				cmd := exec.Command(binary, "--http", "127.0.0.1:0")
				cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file, "MEMORY_DATABASE_URL=")
				waitLog(t, startChild(t, cmd).stderr, regexp.MustCompile(`memory file `))
			} else {
				startServer(t, file, version, nil)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				data, _ := os.ReadFile(file)
				_, err := os.Stat(file + ".journal")
				if strings.Contains(string(data), `"name":"Alice"`) && os.IsNotExist(err) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("10 s after the start the journal is still there (%v) and the file holds %q", err, data)
				}
			}
		})
	}
}
