package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// updateAt runs fn under Update as a write at the time at, as the tools,
// commands and page do.
func updateAt(t *testing.T, s graph.Store, at graph.Time, fn func(g *graph.Graph) error) bool {
	t.Helper()
	return update(t, s, func(g *graph.Graph) error {
		g.SetNow(at)
		defer g.SetNow(0)
		return fn(g)
	})
}

// testTimes: the times of each write are stored and read back, by the
// writer, by an instance that catches up, and by a new instance; rename and
// merge keep the creation times and record the change; what was read without
// a time stays unknown.
func testTimes(t *testing.T, open Memory) {
	a, b := open(t), open(t)
	dump(t, b) // b has read the empty memory, so it catches up below
	updateAt(t, a, 1000, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{ent("Alice", "person", "likes tea"), ent("Bob", "person"), ent("Acme", "company", "old")})
		_, err := g.CreateRelations([]graph.Relation{rel("Alice", "Acme", "works_at"), rel("Bob", "Acme", "works_at")})
		return err
	})
	updateAt(t, a, 2000, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Alice", Contents: []string{"likes jazz"}}})
		return err
	})
	want := `E "Alice" "person" ["likes tea" "likes jazz"] "" @1000/2000 1000 2000
E "Bob" "person" [] "" @1000/1000
E "Acme" "company" ["old"] "" @1000/1000 1000
R "Alice" "Acme" "works_at" "" @1000
R "Bob" "Acme" "works_at" "" @1000
`
	persisted(t, open, a, want)
	if got := dump(t, b); got != want {
		t.Fatalf("an instance that caught up reads\n%s\nwant\n%s", got, want)
	}

	// b writes: rename and delete an observation; a catches up.
	updateAt(t, b, 3000, func(g *graph.Graph) error {
		if _, err := g.Rename("Alice", "Alice Liddell"); err != nil {
			return err
		}
		g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "Acme", Observations: []string{"old"}}})
		return nil
	})
	want = `E "Alice Liddell" "person" ["likes tea" "likes jazz"] "" @1000/3000 1000 2000
E "Bob" "person" [] "" @1000/1000
E "Acme" "company" [] "" @1000/3000
R "Alice Liddell" "Acme" "works_at" "" @1000
R "Bob" "Acme" "works_at" "" @1000
`
	persisted(t, open, b, want)
	if got := dump(t, a); got != want {
		t.Fatalf("an instance that caught up reads\n%s\nwant\n%s", got, want)
	}

	updateAt(t, a, 4000, func(g *graph.Graph) error {
		_, err := g.Merge("Bob", "Alice Liddell")
		return err
	})
	want = `E "Bob" "person" ["likes tea" "likes jazz"] "" @1000/4000 1000 2000
E "Acme" "company" [] "" @1000/3000
R "Bob" "Acme" "works_at" "" @1000
`
	persisted(t, open, a, want)
	if got := dump(t, b); got != want {
		t.Fatalf("an instance that caught up reads\n%s\nwant\n%s", got, want)
	}

	// A write that gives no time records unknown, and the known times of
	// the rest stay.
	update(t, a, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"untimed"}}})
		return err
	})
	want = strings.Replace(want, `["likes tea" "likes jazz"] "" @1000/4000 1000 2000`, `["likes tea" "likes jazz" "untimed"] "" @1000/0 1000 2000 0`, 1)
	persisted(t, open, a, want)
}

// testHistory: every write that changed the memory is recorded with the
// author its context carries, whichever instance wrote; another instance
// reads the same history, newest first; an undo is a recorded write.
func testHistory(t *testing.T, open Memory) {
	a, b := open(t), open(t)
	ra, ok := a.(history.Reader)
	if !ok {
		t.Fatalf("%T keeps no history", a)
	}
	write := func(s graph.Store, tool, client string, fn func(*graph.Graph)) {
		t.Helper()
		ctx := context.Background()
		if _, err := s.Update(ctx, graph.Write{Tool: tool, Client: client, Apply: func(g *graph.Graph) error { fn(g); return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "create_entities", "one", func(g *graph.Graph) {
		g.CreateEntities([]graph.Entity{{Name: "A", EntityType: "t", Observations: []string{"x"}}, {Name: "B", EntityType: "t"}})
	})
	write(b, "create_relations", "two", func(g *graph.Graph) {
		g.CreateRelations([]graph.Relation{{From: "A", To: "B", RelationType: "r"}})
	})
	write(a, "delete_entities", "one", func(g *graph.Graph) { g.DeleteEntities([]string{"nobody"}) }) // changes nothing
	write(a, "delete_entities", "one", func(g *graph.Graph) { g.DeleteEntities([]string{"A"}) })
	recs, err := b.(history.Reader).History(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Tool+"/"+r.Client+": "+history.Summary(r.Changes))
	}
	want := []string{
		"delete_entities/one: − entity A (t), 1 observation, 1 relation",
		"create_relations/two: + relation A r B",
		"create_entities/one: + entity A (t), 1 observation; + entity B (t), 0 observations",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("history\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if two, err := ra.History(history.Filter{Client: "two"}); err != nil || len(two) != 1 {
		t.Errorf("by client: %d records, %v", len(two), err)
	}
	write(b, "undo", "", func(g *graph.Graph) { history.Undo(g, recs[:1]) })
	if d := dump(t, a); !strings.Contains(d, `E "A"`) || !strings.Contains(d, `R "A" "B"`) {
		t.Errorf("after the undo:\n%s", d)
	}
	if recs, err := ra.History(history.Filter{Entity: "A"}); err != nil || len(recs) != 4 || recs[0].Tool != "undo" {
		t.Errorf("A's history: %d records (%v)", len(recs), err)
	}
}

// testOneClock: the store reads the clock once per write: the facts a
// write adds and its history record carry the same instant, and the
// record names the write's author, with nothing set by the caller but the
// Write.
func testOneClock(t *testing.T, open Memory) {
	s := open(t)
	for i := range 3 {
		name := fmt.Sprint("E", i)
		_, err := s.Update(context.Background(), graph.Write{Tool: "create_entities", Client: "c", Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: name, EntityType: "t", Observations: []string{"o"}}})
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.(history.Reader).History(history.Filter{Limit: 1})
		if err != nil || len(recs) != 1 {
			t.Fatalf("history: %d records, %v", len(recs), err)
		}
		var e graph.Entity
		if err := s.View(context.Background(), func(g *graph.Graph) error { e = *g.Entity(name); return nil }); err != nil {
			t.Fatal(err)
		}
		r := recs[0]
		if at := graph.TimeOf(r.Time); e.Created == 0 || e.Created != at || e.ObservationTime(0) != at || e.Updated != at {
			t.Errorf("write %d: entity created %v, observed %v, updated %v; its record says %v", i, e.Created, e.ObservationTime(0), e.Updated, at)
		}
		if r.Tool != "create_entities" || r.Client != "c" {
			t.Errorf("record by %s/%s", r.Tool, r.Client)
		}
	}
}

// testHistoryLimit: a read with a limit, or of one id, returns what the
// whole read returns cut to the newest records, with the other filters
// too, where the records asked for are far back.
func testHistoryLimit(t *testing.T, open Memory) {
	s := open(t)
	r := s.(history.Reader)
	ctx := context.Background()
	for i := range 130 {
		if _, err := s.Update(ctx, graph.Write{Tool: "t", Client: "c", Apply: func(g *graph.Graph) error {
			g.CreateEntities([]graph.Entity{{Name: fmt.Sprintf("N%03d", i), EntityType: "t"}})
			if i < 6 {
				g.CreateEntities([]graph.Entity{{Name: "E", EntityType: "t"}})
				g.AddObservations([]graph.ObservationAddition{{EntityName: "E", Contents: []string{fmt.Sprint(i)}}})
			}
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(ctx, graph.Write{Tool: "t", Client: "c", Apply: func(g *graph.Graph) error { g.DeleteEntities([]string{"N000"}); return nil }}); err != nil {
		t.Fatal(err)
	}
	all, err := r.History(history.Filter{})
	if err != nil || len(all) != 131 {
		t.Fatalf("the whole history: %d records, %v", len(all), err)
	}
	ids := func(recs []graph.Record) string {
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		f    history.Filter
		want []graph.Record
	}{
		{history.Filter{Limit: 3}, all[:3]},
		{history.Filter{Limit: 200}, all},
		{history.Filter{Entity: "E", Limit: 4}, all[125:129]},
		{history.Filter{Entity: "E", Limit: 10}, all[125:]},
		{history.Filter{ID: all[128].ID}, all[128:129]},
		{history.Filter{ID: all[128].ID, Client: "other"}, nil},
		{history.Filter{Since: all[2].Time, Limit: 1}, all[:1]},
		{history.Filter{DeletesEntity: true}, all[:1]},
		{history.Filter{Headers: true, Limit: 2}, all[:2]},
	} {
		got, err := r.History(c.f)
		if err != nil || ids(got) != ids(c.want) {
			t.Errorf("%+v: %d records (%v), want %d", c.f, len(got), err, len(c.want))
		}
		for _, r := range got {
			if c.f.Headers != (r.Changes == nil) {
				t.Errorf("%+v: a record with changes %v", c.f, r.Changes)
			}
		}
	}
}
