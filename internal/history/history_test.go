package history

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func record(t time.Time, tool string) graph.Record {
	return graph.Record{ID: graph.NewID(t, ""), Time: t.UTC().Truncate(time.Second), Tool: tool, Client: "c",
		Changes: []graph.Change{{Kind: graph.EntityCreated, Entity: graph.Entity{Name: tool, EntityType: "t", Observations: []string{"o"}}}}}
}

func tools(recs []graph.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Tool)
	}
	return strings.Join(out, " ")
}

// AppendFile cuts a torn last line and skips the records a move cut short
// already wrote.
func TestAppendFileResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	now := time.Now()
	a, b, c := record(now, "a"), record(now.Add(time.Second), "b"), record(now.Add(2*time.Second), "c")
	if err := AppendFile(path, []graph.Record{a}, 0o600); err != nil {
		t.Fatal(err)
	}
	// A move of b and c killed after b and part of c.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(graph.AppendRecord(nil, &b))
	f.Write(graph.AppendRecord(nil, &c)[:20])
	f.Close()
	if err := AppendFile(path, []graph.Record{b, c}, 0o600); err != nil {
		t.Fatal(err)
	}
	recs, skipped, err := ReadFile(path, Filter{})
	if err != nil || skipped != 0 || tools(recs) != "a b c" {
		t.Errorf("read %q, %d skipped, %v; want a b c", tools(recs), skipped, err)
	}
	if LastID(path) != c.ID {
		t.Errorf("last id %s, want %s", LastID(path), c.ID)
	}
}

// Trim drops records older than MaxAge once the oldest is older by the
// slack, and the oldest records past 90 % of MaxBytes; it never keeps a
// file past MaxBytes; Off removes it.
func TestTrim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []graph.Record
	for i := range 100 {
		recs = append(recs, record(start.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("d%d", i)))
	}
	if err := AppendFile(path, recs, 0o600); err != nil {
		t.Fatal(err)
	}
	lim := Limits{MaxAge: 30 * 24 * time.Hour, MaxBytes: 1 << 20}
	// Day 99 + 1: the oldest (day 0) is 100 days old, far past 30 + 3.
	now := start.Add(100 * 24 * time.Hour)
	if trimmed, err := Trim(path, lim, now); !trimmed || err != nil {
		t.Fatalf("trim: %v %v", trimmed, err)
	}
	got, _, _ := ReadFile(path, Filter{})
	if len(got) != 30 || got[0].Tool != "d70" {
		t.Errorf("after the trim by age: %s", tools(got))
	}
	// Within the slack: nothing to do.
	if trimmed, err := Trim(path, lim, now.Add(48*time.Hour)); trimmed || err != nil {
		t.Errorf("trim within the slack: %v %v", trimmed, err)
	}
	fi, _ := os.Stat(path)
	lim.MaxBytes = fi.Size() / 2
	if trimmed, err := Trim(path, lim, now); !trimmed || err != nil {
		t.Fatalf("trim by size: %v %v", trimmed, err)
	}
	fi, _ = os.Stat(path)
	if fi.Size() > lim.MaxBytes*9/10 {
		t.Errorf("%d bytes after a trim to %d", fi.Size(), lim.MaxBytes)
	}
	got, _, _ = ReadFile(path, Filter{})
	if len(got) == 0 || got[len(got)-1].Tool != "d99" {
		t.Errorf("after the trim by size: %s", tools(got))
	}
	if trimmed, err := Trim(path, Limits{}, now); !trimmed || err != nil {
		t.Errorf("trim with no history kept: %v %v", trimmed, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the history is still there with no history kept: %v", err)
	}
}

// Inverse undoes in reverse, recreating before removing.
func TestInverse(t *testing.T) {
	g := graph.New()
	g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "p", Observations: []string{"a"}}, {Name: "B", EntityType: "p"}})
	g.CreateRelations([]graph.Relation{{From: "A", To: "B", RelationType: "r"}})
	content := func() string {
		s := g.ReadGraph()
		var out []string
		for _, e := range s.Entities {
			out = append(out, fmt.Sprint(e.Name, e.EntityType, e.Observations))
		}
		for _, r := range s.Relations {
			out = append(out, fmt.Sprint(r.From, r.RelationType, r.To))
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	before := content()
	g.TrackChanges()
	g.DeleteEntities([]string{"A"})
	changes, _ := g.TakeChanges()
	g.TrackChanges()
	if conflicts := Undo(g, []graph.Record{{Changes: changes}}); conflicts != nil {
		t.Fatalf("conflicts %v", conflicts)
	}
	if after := content(); after != before {
		t.Errorf("undone: %s\nwant %s", after, before)
	}
	redo, complete := g.TakeChanges()
	if !complete || len(redo) != 2 {
		t.Errorf("the undo recorded %v (complete %v)", redo, complete)
	}
}
