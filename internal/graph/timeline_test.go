package graph

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestAgo checks the English relative times on testdata/ago.json, the
// cases the page's script is tested on too (internal/ui).
func TestAgo(t *testing.T) {
	b, err := os.ReadFile("testdata/ago.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Seconds int64  `json:"seconds"`
		Want    string `json:"want"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	const now = Time(1_800_000_000)
	for _, c := range cases {
		if got := (now - Time(c.Seconds)).Ago(now); got != c.Want {
			t.Errorf("%d seconds before now: %q, want %q", c.Seconds, got, c.Want)
		}
	}
	if got := Time(0).Ago(now); got != "" {
		t.Errorf("unknown time: %q, want nothing", got)
	}
}

func TestTimeline(t *testing.T) {
	now := 20*Day + 15*60*60 // 15:00 on day 20
	g := New()
	g.SetNow(now - 2*Day) // day 18: an entity and two observations
	g.CreateEntities([]Entity{ent("A", "t", "a1", "a2")})
	g.SetNow(now - 60) // today: an observation
	if _, err := g.AddObservations([]ObservationAddition{{EntityName: "A", Contents: []string{"a3"}}}); err != nil {
		t.Fatal(err)
	}
	g.SetNow(0) // unknown: an entity with one observation, a relation
	g.CreateEntities([]Entity{ent("B", "t", "b1")})
	if _, err := g.CreateRelations([]Relation{rel("B", "knows", "A")}); err != nil {
		t.Fatal(err)
	}
	g.SetNow(now - 15*60*60 - 1) // the last second of day 19
	if _, err := g.CreateRelations([]Relation{rel("A", "knows", "B")}); err != nil {
		t.Fatal(err)
	}
	g.SetNow(now + 3*Day) // a clock ahead: newest, in no day counted
	if _, err := g.AddObservations([]ObservationAddition{{EntityName: "B", Contents: []string{"b2"}}}); err != nil {
		t.Fatal(err)
	}
	g.SetNow(5 * Day) // before the days counted
	if _, err := g.AddObservations([]ObservationAddition{{EntityName: "B", Contents: []string{"b3"}}}); err != nil {
		t.Fatal(err)
	}
	tl := g.Timeline(now, 4)
	want := Timeline{Oldest: 5 * Day, Newest: now + 3*Day, Known: 7, Unknown: 3, PerDay: PerDay{From: 17 * Day, Counts: []int{0, 3, 1, 1}}}
	if tl.Oldest != want.Oldest || tl.Newest != want.Newest || tl.Known != want.Known || tl.Unknown != want.Unknown ||
		tl.PerDay.From != want.PerDay.From || !slices.Equal(tl.PerDay.Counts, want.PerDay.Counts) {
		t.Errorf("timeline %+v, want %+v", tl, want)
	}
	if tl := New().Timeline(now, 30); tl.Oldest != 0 || tl.Newest != 0 || tl.Known+tl.Unknown != 0 || len(tl.PerDay.Counts) != 30 {
		t.Errorf("empty graph's timeline %+v", tl)
	}
}
