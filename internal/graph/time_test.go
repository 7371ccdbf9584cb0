package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// times renders an entity's times: "created/updated [obs times]", with 0 for
// unknown, in seconds.
func entityTimes(e *Entity) (Time, Time, []Time) {
	ts := make([]Time, len(e.Observations))
	for i := range ts {
		ts[i] = e.ObservationTime(i)
	}
	return e.Created, e.Updated, ts
}

func checkTimes(t *testing.T, g *Graph, name string, created, updated Time, obs ...Time) {
	t.Helper()
	e := g.Entity(name)
	if e == nil {
		t.Fatalf("%s: no such entity", name)
	}
	c, u, o := entityTimes(e)
	if c != created || u != updated || !slices.Equal(o, obs) {
		t.Errorf("%s: times created %d updated %d observations %v, want %d %d %v", name, c, u, o, created, updated, obs)
	}
}

func TestTimesOfTheTools(t *testing.T) {
	g := New()
	g.SetNow(100)
	g.CreateEntities([]Entity{ent("A", "t", "a1", "a2", "a1"), ent("B", "t")})
	if _, err := g.CreateRelations([]Relation{rel("A", "knows", "B")}); err != nil {
		t.Fatal(err)
	}
	checkTimes(t, g, "A", 100, 100, 100, 100)
	checkTimes(t, g, "B", 100, 100)
	if r := g.Relations()[0]; r.Created != 100 {
		t.Errorf("relation created %d, want 100", r.Created)
	}

	g.SetNow(200)
	g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a1", "a3"}}})
	checkTimes(t, g, "A", 100, 200, 100, 100, 200)
	// Adding only what it has changes nothing, not even the time.
	g.SetNow(250)
	g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a1"}}})
	checkTimes(t, g, "A", 100, 200, 100, 100, 200)

	g.SetNow(300)
	g.DeleteObservations([]ObservationDeletion{{EntityName: "A", Observations: []string{"a2"}}})
	checkTimes(t, g, "A", 100, 300, 100, 200)

	g.SetNow(400)
	if err := g.ReplaceObservation("A", "a1", "a1 corrected"); err != nil {
		t.Fatal(err)
	}
	checkTimes(t, g, "A", 100, 400, 400, 200)

	g.SetNow(500)
	if _, err := g.Rename("A", "A2"); err != nil {
		t.Fatal(err)
	}
	checkTimes(t, g, "A2", 100, 500, 400, 200)
	if r := g.Relations()[0]; r.From != "A2" || r.Created != 100 {
		t.Errorf("renamed relation %+v, want from A2 created 100", r)
	}

	// A snapshot carries the times.
	snap := g.Open([]string{"A2"}).Snapshot()
	if e := snap.Entities[0]; e.Created != 100 || e.Updated != 500 || !slices.Equal(e.ObservedAt, []Time{400, 200}) {
		t.Errorf("snapshot times %d %d %v", e.Created, e.Updated, e.ObservedAt)
	}
}

func TestTimesUnknownStayUnknown(t *testing.T) {
	g := New()
	// Loaded from a file without times.
	g.LoadEntity(ent("Old", "t", "o1", "o2"))
	g.LoadRelation(rel("Old", "r", "Old"))
	checkTimes(t, g, "Old", 0, 0, 0, 0)

	g.SetNow(700)
	g.AddObservations([]ObservationAddition{{EntityName: "Old", Contents: []string{"o3"}}})
	// The old observations keep "unknown"; the entity's creation stays
	// unknown; the new observation and the change are known.
	checkTimes(t, g, "Old", 0, 700, 0, 0, 700)
	g.DeleteObservations([]ObservationDeletion{{EntityName: "Old", Observations: []string{"o1"}}})
	checkTimes(t, g, "Old", 0, 700, 0, 700)
	if r := g.Relations()[0]; r.Created != 0 {
		t.Errorf("relation loaded without a time got %d", r.Created)
	}

	// A graph nobody told the time records unknown.
	g.SetNow(0)
	g.CreateEntities([]Entity{ent("New", "t", "n")})
	checkTimes(t, g, "New", 0, 0, 0)
	if g.Entity("New").ObservedAt != nil {
		t.Error("a write without a time allocated observation times")
	}
}

func TestTimesMergeAndImport(t *testing.T) {
	g := New()
	g.SetNow(100)
	g.CreateEntities([]Entity{ent("Keep", "t", "k1"), ent("Gone", "t"), ent("C", "t")})
	g.SetNow(150)
	g.AddObservations([]ObservationAddition{{EntityName: "Gone", Contents: []string{"g1", "k1"}}})
	g.CreateRelations([]Relation{rel("Gone", "r", "C")})
	g.SetNow(300)
	if _, err := g.Merge("Keep", "Gone"); err != nil {
		t.Fatal(err)
	}
	checkTimes(t, g, "Keep", 100, 300, 100, 150)
	if r := g.Relations()[0]; r.From != "Keep" || r.Created != 150 {
		t.Errorf("moved relation %+v, want from Keep created 150", r)
	}

	src := Snapshot{
		Entities: []Entity{
			{Name: "Keep", EntityType: "t", Observations: []string{"k1", "i1", "i2"}, ObservedAt: []Time{50, 60, 0}, Created: 50, Updated: 60},
			{Name: "New", EntityType: "t", Observations: []string{"x"}, ObservedAt: []Time{40}, Created: 40, Updated: 45},
			{Name: "Bare", EntityType: "t", Observations: []string{"y"}},
		},
		Relations: []Relation{{From: "New", To: "Keep", RelationType: "r", Created: 42}, {From: "Bare", To: "Keep", RelationType: "r"}},
	}
	g.SetNow(900)
	if _, err := g.Import(src); err != nil {
		t.Fatal(err)
	}
	// The existing entity keeps its own times, gains the imported
	// observations with theirs, and changed now.
	checkTimes(t, g, "Keep", 100, 900, 100, 150, 60, 0)
	checkTimes(t, g, "New", 40, 45, 40)
	checkTimes(t, g, "Bare", 0, 0, 0)
	for _, r := range g.Relations() {
		want := map[string]Time{"New": 42, "Bare": 0, "Keep": 150}[r.From]
		if r.Created != want {
			t.Errorf("relation from %s created %d, want %d", r.From, r.Created, want)
		}
	}
}

func TestLoadEntityMergesTimes(t *testing.T) {
	g := New()
	g.LoadEntity(Entity{Name: "A", EntityType: "t", Observations: []string{"a", "b"}, ObservedAt: []Time{10, 20}, Created: 10, Updated: 20})
	g.LoadEntity(Entity{Name: "A", EntityType: "t", Observations: []string{"b", "c", "d"}, ObservedAt: []Time{99, 30, 0}, Created: 5, Updated: 30})
	checkTimes(t, g, "A", 10, 30, 10, 20, 30, 0)
}

func TestTimeString(t *testing.T) {
	if got := Time(0).String(); got != "unknown" {
		t.Errorf("zero: %q", got)
	}
	if got := Time(1796000000).String(); got != "2026-11-30T00:53:20Z" {
		t.Errorf("got %q", got)
	}
}

// Changes recorded by the tools redo with their times.
func TestApplyKeepsTimes(t *testing.T) {
	g, h := New(), New()
	g.TrackChanges()
	g.SetNow(100)
	g.CreateEntities([]Entity{ent("A", "t", "a1"), ent("B", "t")})
	g.CreateRelations([]Relation{rel("A", "r", "B")})
	g.SetNow(200)
	g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a2"}}})
	g.SetNow(300)
	g.DeleteObservations([]ObservationDeletion{{EntityName: "A", Observations: []string{"a1"}}})
	changes, complete := g.TakeChanges()
	if !complete {
		t.Fatal("record incomplete")
	}
	h.SetNow(999)
	if skipped := h.Apply(changes); skipped != 0 {
		t.Fatalf("%d skipped", skipped)
	}
	if h.Now() != 999 {
		t.Errorf("Apply left the time at %d", h.Now())
	}
	checkTimes(t, h, "A", 100, 300, 200)
	checkTimes(t, h, "B", 100, 100)
	if r := h.Relations()[0]; r.Created != 100 {
		t.Errorf("relation created %d", r.Created)
	}
}

func TestWindow(t *testing.T) {
	g := New()
	g.LoadEntity(ent("Old", "t", "o1"))
	g.SetNow(100)
	g.CreateEntities([]Entity{ent("A", "t", "a1")})
	g.SetNow(200)
	g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a2"}}, {EntityName: "Old", Contents: []string{"o2"}}})
	g.SetNow(300)
	g.CreateEntities([]Entity{ent("B", "t")})

	for _, tc := range []struct {
		w    Window
		want string // kept entities with their observations
	}{
		{Window{}, "A[a1 a2] B[] Old[o1 o2]"}, // Learned with no bounds: everything known
		{Window{Since: 150}, "A[a2] B[] Old[o2]"},
		{Window{Until: 150}, "A[a1]"},
		{Window{Since: 150, Until: 250}, "A[a2] Old[o2]"},
		{Window{Since: 301}, ""},
	} {
		var got []string
		for _, e := range []*Entity{g.Entity("A"), g.Entity("B"), g.Entity("Old")} {
			if tc.w.IsZero() {
				got = append(got, fmt.Sprintf("%s%v", e.Name, e.Observations))
				continue
			}
			l, kept := tc.w.Learned(e)
			if l == nil {
				continue
			}
			if l != e && len(kept) != len(l.Observations) {
				t.Errorf("%+v: %s kept %v for %v", tc.w, e.Name, kept, l.Observations)
			}
			got = append(got, fmt.Sprintf("%s%v", l.Name, l.Observations))
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("%+v: %q, want %q", tc.w, s, tc.want)
		}
	}
	// Unknown is in no window, however wide.
	if (Window{Since: 1, Until: 1 << 40}).Contains(0) {
		t.Error("an unknown time is in a window")
	}
}

// Ranked ties: the entity that learned last comes first, and among an
// entity's matched observations the newer.
func TestRankedTiesNewerFirst(t *testing.T) {
	g := New()
	g.SetNow(100)
	g.CreateEntities([]Entity{ent("Older", "t", "likes green tea")})
	g.SetNow(200)
	g.CreateEntities([]Entity{ent("Newer", "t", "likes green tea")})
	r := g.SearchRanked("green tea lover", 10)
	if len(r.Hits) != 2 || r.Hits[0].Entity.Name != "Newer" || r.Hits[0].Score != r.Hits[1].Score || r.Hits[0].Exact {
		t.Fatalf("hits %v", hitNames(r))
	}
	g.SetNow(300)
	g.AddObservations([]ObservationAddition{{EntityName: "Older", Contents: []string{"likes green tea too"}}})
	g.SetNow(400)
	g.AddObservations([]ObservationAddition{{EntityName: "Older", Contents: []string{"likes green tea also"}}})
	r = g.SearchRankedFunc("tea", 10, func(e *Entity) bool { return e.Name == "Older" })
	if len(r.Hits) != 1 {
		t.Fatalf("filtered hits %v", hitNames(r))
	}
	if got := r.Hits[0].Observations(); !slices.Equal(got, []string{"likes green tea also", "likes green tea too", "likes green tea"}) {
		t.Errorf("matched observations %q, want the newer first", got)
	}
}

// TestWindowExactFoldsAnEntityOnce: matching the query against what of an
// entity was learned in a window folds the entity once, whatever how many
// of its observations the window keeps (folding it once per kept
// observation made a search of a big entity quadratic).
func TestWindowExactFoldsAnEntityOnce(t *testing.T) {
	g := New()
	g.SetNow(100)
	var old []string
	for i := range 200 {
		old = append(old, fmt.Sprintf("Old fact number %d about Tokyo", i))
	}
	g.CreateEntities([]Entity{ent("Big", "person", old...)})
	g.SetNow(200)
	var late []string
	for i := range 100 {
		late = append(late, fmt.Sprintf("Late fact number %d about Tokyo", i))
	}
	g.AddObservations([]ObservationAddition{{EntityName: "Big", Contents: late}})
	w := Window{Since: 150}
	e := g.Entity("Big")
	if got, _ := w.exact([]*Entity{e}, "Tokyo"); len(got) != 1 {
		t.Fatalf("exact found %d entities, want Big", len(got))
	}
	allocs := testing.AllocsPerRun(5, func() { w.exact([]*Entity{e}, "Tokyo") })
	if allocs > 40 {
		t.Errorf("matching one entity in a window took %.0f allocations, want a handful: is it folded once per observation?", allocs)
	}
}
