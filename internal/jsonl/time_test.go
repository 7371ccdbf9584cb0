package jsonl

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

func hashOf(obs ...string) string { return fmt.Sprintf("%08x", graph.ObservationsHash(obs)) }

const (
	t1 = graph.Time(1796030100) // 2026-11-30T09:15:00Z
	t2 = graph.Time(1796119200) // 2026-12-01T10:00:00Z
)

func TestTimesRoundTrip(t *testing.T) {
	g := graph.New()
	g.LoadEntity(graph.Entity{Name: "Alice", EntityType: "person", Observations: []string{"Works at Acme", "Likes tea"},
		Created: t1, Updated: t2, ObservedAt: []graph.Time{t1, t2}})
	g.LoadEntity(graph.Entity{Name: "Acme", EntityType: "company", Observations: []string{"old", "new"},
		Updated: t2, ObservedAt: []graph.Time{0, t2}})
	g.LoadEntity(graph.Entity{Name: "Bare", EntityType: "t", Observations: []string{"x"}})
	g.LoadEntity(graph.Entity{Name: "Same", EntityType: "t", Observations: []string{}, Created: t1, Updated: t1})
	g.LoadEntity(graph.Entity{Name: "AtOnce", EntityType: "t", Observations: []string{"p", "q", "r"}, Created: t1, Updated: t1, ObservedAt: []graph.Time{t1, t1, t1}})
	g.LoadEntity(graph.Entity{Name: "Runs", EntityType: "t", Observations: []string{"p", "q", "r", "s"}, Created: t1, Updated: t2, ObservedAt: []graph.Time{t1, t1, t2, t2}})
	g.LoadRelation(graph.Relation{From: "Alice", To: "Acme", RelationType: "works_at", Created: t1})
	g.LoadRelation(graph.Relation{From: "Acme", To: "Alice", RelationType: "employs"})
	out := string(encode(nil, g, nil))
	want := `{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme","Likes tea"],"createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z","observationTimes":["2026-11-30T09:15:00Z",1,"2026-12-01T10:00:00Z",1],"observationsHash":"` + hashOf("Works at Acme", "Likes tea") + `"}
{"type":"entity","name":"Acme","entityType":"company","observations":["old","new"],"updatedAt":"2026-12-01T10:00:00Z","observationTimes":[null,1,"2026-12-01T10:00:00Z",1],"observationsHash":"` + hashOf("old", "new") + `"}
{"type":"entity","name":"Bare","entityType":"t","observations":["x"]}
{"type":"entity","name":"Same","entityType":"t","observations":[],"createdAt":"2026-11-30T09:15:00Z"}
{"type":"entity","name":"AtOnce","entityType":"t","observations":["p","q","r"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"` + hashOf("p", "q", "r") + `"}
{"type":"entity","name":"Runs","entityType":"t","observations":["p","q","r","s"],"createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z","observationTimes":["2026-11-30T09:15:00Z",2,"2026-12-01T10:00:00Z",2],"observationsHash":"` + hashOf("p", "q", "r", "s") + `"}
{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at","createdAt":"2026-11-30T09:15:00Z"}
{"type":"relation","from":"Acme","to":"Alice","relationType":"employs"}
`
	if out != want {
		t.Fatalf("encoded\n%s\nwant\n%s", out, want)
	}
	data := []byte(out)
	f := Decode(data)
	if got, w := snapshot(f.Graph), snapshot(g); !equalSnapshots(got, w) {
		t.Fatalf("decoded\n%s\nwant\n%s", showSnapshot(got), showSnapshot(w))
	}
	// Every line is what Write writes.
	if again := string(encode(nil, f.Graph, nil)); again != want {
		t.Fatalf("written again\n%s\nwant\n%s", again, want)
	}
}

// A tool that edits the observations without knowing about the times (or a
// person) makes the observation times unknown, never wrong; the rest of
// the times stay.
func TestObservationTimesGuarded(t *testing.T) {
	line := func(obs string) string {
		return `{"type":"entity","name":"A","entityType":"t","observations":[` + obs + `],"createdAt":"2026-11-30T09:15:00Z","observationTimes":["2026-11-30T09:15:00Z",1,"2026-12-01T10:00:00Z",1],"observationsHash":"` + hashOf("a", "b") + `"}`
	}
	for _, tc := range []struct {
		name, obs string
		want      []graph.Time
	}{
		{"untouched", `"a","b"`, []graph.Time{t1, t2}},
		{"reordered", `"b","a"`, nil},
		{"one changed", `"a","B"`, nil},
		{"one removed", `"a"`, nil},
		{"one added", `"a","b","c"`, nil},
	} {
		f := Decode([]byte(line(tc.obs)))
		e := f.Graph.Entity("A")
		if e == nil || len(f.Unreadable) > 0 {
			t.Fatalf("%s: not read: %q", tc.name, f.Problems)
		}
		if e.Created != t1 || !graph.SameTimes(e.ObservedAt, tc.want) {
			t.Errorf("%s: created %v, observation times %v, want %v", tc.name, e.Created, e.ObservedAt, tc.want)
		}
		if tc.want == nil {
			// The stale pair is dropped on the next write; nothing else is.
			out := string(encode(nil, f.Graph, nil))
			if strings.Contains(out, "observationTimes") || !strings.Contains(out, `"createdAt":"2026-11-30T09:15:00Z"`) || e.Extra != nil {
				t.Errorf("%s: rewritten as %s", tc.name, out)
			}
		}
	}
}

// The hash alone says every observation was written with the entity; it
// guards that as it guards the runs. Runs that do not count the
// observations are no times.
func TestObservationTimesImplied(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []graph.Time
	}{
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"` + hashOf("a", "b") + `"}`, []graph.Time{t1, t1}},
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b","c"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"` + hashOf("a", "b") + `"}`, nil},
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"observationsHash":"` + hashOf("a", "b") + `"}`, nil},
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","observationTimes":["2026-11-30T09:15:00Z",3],"observationsHash":"` + hashOf("a", "b") + `"}`, nil},
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","observationTimes":["2026-11-30T09:15:00Z",1],"observationsHash":"` + hashOf("a", "b") + `"}`, nil},
		{`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","observationTimes":[null,1,"2026-12-01T10:00:00Z",1],"observationsHash":"` + hashOf("a", "b") + `"}`, []graph.Time{0, t2}},
	} {
		f := Decode([]byte(tc.line))
		e := f.Graph.Entity("A")
		if e == nil || !graph.SameTimes(e.ObservedAt, tc.want) || e.Extra != nil {
			t.Errorf("%s: %v (extra %q), want %v", tc.line, e.ObservedAt, e.Extra, tc.want)
		}
	}
}

// Members of the time names that another tool wrote, in another form, are
// not times: kept as they are, and the times are unknown.
func TestForeignTimeMembersKept(t *testing.T) {
	in := `{"type":"entity","name":"A","entityType":"t","observations":["a"],"createdAt":"2024-05-01","observationTimes":[1],"observationsHash":"xyz"}` + "\n" +
		`{"type":"relation","from":"A","to":"A","relationType":"r","createdAt":1714521600}` + "\n"
	f := Decode([]byte(in))
	e := f.Graph.Entity("A")
	if e.Created != 0 || e.Updated != 0 || e.ObservedAt != nil || f.Graph.Relations()[0].Created != 0 {
		t.Fatalf("foreign members read as times: %v %v %v", e.Created, e.Updated, e.ObservedAt)
	}
	if out := string(encode(nil, f.Graph, nil)); out != in {
		t.Fatalf("rewritten\n%s\nwant\n%s", out, in)
	}
	// A write that gives the entity times does not write a second member
	// of a name the line has.
	f.Graph.SetNow(t2)
	f.Graph.AddObservations([]graph.ObservationAddition{{EntityName: "A", Contents: []string{"b"}}})
	out := encode(nil, f.Graph, nil)
	if bytes.Count(out, []byte(`"createdAt"`)) != 2 || bytes.Count(out, []byte(`"observationTimes"`)) != 1 {
		t.Fatalf("a time member written twice: %s", out)
	}
	again := Decode(out)
	if e := again.Graph.Entity("A"); e.Updated != t2 || e.Created != 0 || e.ObservedAt != nil || !slices.Equal(e.Observations, []string{"a", "b"}) {
		t.Errorf("after the write: %v %v %v %q", e.Created, e.Updated, e.ObservedAt, e.Observations)
	}
}

// A time written with an offset or a fraction of a second reads as its
// instant, and is written back in UTC to the second.
func TestTimeForms(t *testing.T) {
	in := `{"type":"relation","from":"A","to":"A","relationType":"r","createdAt":"2026-11-30T10:15:00.900+01:00"}`
	f := Decode([]byte(in))
	r := f.Graph.Relations()[0]
	if r.Created != t1 || r.Extra != nil {
		t.Fatalf("created %v extra %q", r.Created, r.Extra)
	}
	if out := string(encode(nil, f.Graph, nil)); !strings.Contains(out, `"createdAt":"2026-11-30T09:15:00Z"}`) {
		t.Errorf("written as %s", out)
	}
}
