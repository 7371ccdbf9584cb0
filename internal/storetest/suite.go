package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// Memory opens the memory under test. Each call returns a new instance on
// the same memory, as another process would open it; the suite closes
// nothing, so the opener registers its own cleanup with t.
type Memory func(t *testing.T) graph.Store

// NewMemory makes a new, empty memory for one test.
type NewMemory func(t *testing.T) Memory

// WatchInterval is the interval the suite passes to Watch.
const WatchInterval = 20 * time.Millisecond

// Run runs the whole contract against the store newMemory makes.
func Run(t *testing.T, newMemory NewMemory) {
	tests := []struct {
		name string
		test func(*testing.T, Memory)
	}{
		{"CreateEntities", testCreateEntities},
		{"CreateRelations", testCreateRelations},
		{"AddObservations", testAddObservations},
		{"DeleteEntities", testDeleteEntities},
		{"DeleteObservations", testDeleteObservations},
		{"DeleteRelations", testDeleteRelations},
		{"FailedCallWritesNothing", testFailedCallWritesNothing},
		{"OtherInstanceReads", testOtherInstanceReads},
		{"GraphOrder", testGraphOrder},
		{"ExtraAndText", testExtraAndText},
		{"Search", testSearch},
		{"Notifications", testNotifications},
		{"ConcurrentInstances", testConcurrentInstances},
		{"Times", testTimes},
		{"History", testHistory},
		{"OneClock", testOneClock},
		{"HistoryLimit", testHistoryLimit},
		{"HistoryPurge", testHistoryPurge},
		{"WriteWaitingIsSeen", testWriteWaitingIsSeen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, newMemory(t)) })
	}
}

// Dump renders the whole graph, Extra members and known times included,
// one line per entity and relation in graph order, for comparing what two
// instances see.
func Dump(g *graph.Graph) string {
	var b strings.Builder
	for _, e := range g.Entities() {
		fmt.Fprintf(&b, "E %q %q %q %q", e.Name, e.EntityType, e.Observations, e.Extra)
		if e.Created != 0 || e.Updated != 0 || e.HasObservationTimes() {
			fmt.Fprintf(&b, " @%d/%d", e.Created, e.Updated)
			for i := range e.Observations {
				fmt.Fprintf(&b, " %d", e.ObservationTime(i))
			}
		}
		b.WriteByte('\n')
	}
	for _, r := range g.Relations() {
		fmt.Fprintf(&b, "R %q %q %q %q", r.From, r.To, r.RelationType, r.Extra)
		if r.Created != 0 {
			fmt.Fprintf(&b, " @%d", r.Created)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func dump(t *testing.T, s graph.Store) string {
	t.Helper()
	var out string
	if err := s.View(context.Background(), func(g *graph.Graph) error { out = Dump(g); return nil }); err != nil {
		t.Fatalf("View: %v", err)
	}
	return out
}

// update runs fn under Update and fails the test on a store error. fn
// writes at an unknown time (it sets aside the time the store gives it),
// so that the dumps say no times; updateAt writes at a given one.
func update(t *testing.T, s graph.Store, fn func(g *graph.Graph) error) bool {
	t.Helper()
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		g.SetNow(0)
		return fn(g)
	}})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return changed
}

// persisted checks that the memory, read by a new instance and again by s,
// is want.
func persisted(t *testing.T, open Memory, s graph.Store, want string) {
	t.Helper()
	if got := dump(t, s); got != want {
		t.Errorf("the writer sees\n%s\nwant\n%s", got, want)
	}
	if got := dump(t, open(t)); got != want {
		t.Errorf("a new instance reads\n%s\nwant\n%s", got, want)
	}
}

func ent(name, typ string, obs ...string) graph.Entity {
	if obs == nil {
		obs = []string{}
	}
	return graph.Entity{Name: name, EntityType: typ, Observations: obs}
}

func rel(from, to, typ string) graph.Relation {
	return graph.Relation{From: from, To: to, RelationType: typ}
}

func seed(t *testing.T, s graph.Store) {
	t.Helper()
	update(t, s, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{ent("Alice", "person", "likes tea"), ent("Bob", "person"), ent("Acme", "company")})
		_, err := g.CreateRelations([]graph.Relation{rel("Alice", "Acme", "works_at"), rel("Bob", "Acme", "works_at"), rel("Alice", "Bob", "knows")})
		return err
	})
}

func testCreateEntities(t *testing.T, open Memory) {
	s := open(t)
	var res graph.CreateEntitiesResult
	if !update(t, s, func(g *graph.Graph) error {
		res = g.CreateEntities([]graph.Entity{ent("Alice", "person", "a", "b", "a"), ent("Bob", "person")})
		return nil
	}) {
		t.Fatal("creating two entities reported no change")
	}
	if len(res.Entities) != 2 || res.Skipped != nil {
		t.Fatalf("result %+v", res)
	}
	update(t, s, func(g *graph.Graph) error {
		res = g.CreateEntities([]graph.Entity{ent("Alice", "robot", "c"), ent("Carol", "person"), ent("Carol", "cat", "d")})
		return nil
	})
	// A name repeated in one call is created once, from its first entry;
	// its later entry is skipped, as names that existed before the call
	// are, and the notice tells the two apart.
	if len(res.Entities) != 1 || res.Entities[0].Name != "Carol" || fmt.Sprint(res.Skipped) != "[Alice Carol]" || fmt.Sprint(res.Repeated) != "[Carol]" {
		t.Fatalf("result %+v", res)
	}
	if notice := res.Notice(); !strings.HasPrefix(notice, "Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities.") || !strings.Contains(notice, "Carol") {
		t.Errorf("notice %q", res.Notice())
	}
	persisted(t, open, s, `E "Alice" "person" ["a" "b"] ""
E "Bob" "person" [] ""
E "Carol" "person" [] ""
`)
	if update(t, s, func(g *graph.Graph) error { g.CreateEntities([]graph.Entity{ent("Bob", "x")}); return nil }) {
		t.Error("creating only existing entities reported a change")
	}
}

func testCreateRelations(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	before := dump(t, s)
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.CreateRelations([]graph.Relation{rel("Bob", "Alice", "knows"), rel("Alice", "Nobody", "knows")})
		return err
	}})
	var nf *graph.NotFoundError
	if changed || !errors.As(err, &nf) || err.Error() != "Entity with name Nobody not found" {
		t.Fatalf("a relation to a missing entity: changed %v, err %v", changed, err)
	}
	persisted(t, open, s, before)

	var res graph.CreateRelationsResult
	update(t, s, func(g *graph.Graph) (err error) {
		res, err = g.CreateRelations([]graph.Relation{rel("Alice", "Acme", "works_at"), rel("Bob", "Alice", "knows"), rel("Bob", "Alice", "knows")})
		return err
	})
	if len(res.Relations) != 1 || res.Relations[0].From != "Bob" || res.Relations[0].To != "Alice" || res.Relations[0].RelationType != "knows" {
		t.Fatalf("created %+v", res.Relations)
	}
	persisted(t, open, s, before+`R "Bob" "Alice" "knows" ""
`)
}

func testAddObservations(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	before := dump(t, s)
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"new"}}, {EntityName: "Zed", Contents: []string{"x"}}})
		return err
	}})
	if changed || err == nil || err.Error() != "Entity with name Zed not found" {
		t.Fatalf("adding to a missing entity: changed %v, err %v", changed, err)
	}
	persisted(t, open, s, before)

	var res graph.AddObservationsResult
	update(t, s, func(g *graph.Graph) (err error) {
		res, err = g.AddObservations([]graph.ObservationAddition{
			{EntityName: "Alice", Contents: []string{"likes tea", "reads", "reads"}},
			{EntityName: "Bob", Contents: []string{}},
		})
		return err
	})
	if fmt.Sprint(res.Results) != "[{Alice [reads]} {Bob []}]" {
		t.Fatalf("added %v", res.Results)
	}
	persisted(t, open, s, strings.Replace(before, `["likes tea"]`, `["likes tea" "reads"]`, 1))
}

func testDeleteEntities(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	var res graph.DeleteResult
	update(t, s, func(g *graph.Graph) error { res = g.DeleteEntities([]string{"Acme", "Ghost", "Ghost2"}); return nil })
	if res.Message != "Deleted 1 of 3 entities. Not found: Ghost, Ghost2" || fmt.Sprint(res.NotFound) != "[Ghost Ghost2]" {
		t.Fatalf("result %+v", res)
	}
	persisted(t, open, s, `E "Alice" "person" ["likes tea"] ""
E "Bob" "person" [] ""
R "Alice" "Bob" "knows" ""
`)
	update(t, s, func(g *graph.Graph) error { res = g.DeleteEntities([]string{"Bob"}); return nil })
	if res.Message != "Entities deleted successfully" || res.NotFound != nil {
		t.Fatalf("result %+v", res)
	}
	persisted(t, open, s, `E "Alice" "person" ["likes tea"] ""
`)
}

func testDeleteObservations(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	var res graph.DeleteResult
	update(t, s, func(g *graph.Graph) error {
		res = g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "Alice", Observations: []string{"likes tea", "never said"}}, {EntityName: "Ghost", Observations: []string{"x"}}})
		return nil
	})
	if res.Message != "Deleted 1 of 3 observations. Entities not found: Ghost" || *res.DeletedCount != 1 {
		t.Fatalf("result %+v", res)
	}
	after := dump(t, s)
	if !strings.Contains(after, `E "Alice" "person" [] ""`) {
		t.Fatalf("graph after deleting:\n%s", after)
	}
	persisted(t, open, s, after)
	if update(t, s, func(g *graph.Graph) error {
		res = g.DeleteObservations([]graph.ObservationDeletion{{EntityName: "Bob", Observations: []string{}}})
		return nil
	}) {
		t.Error("deleting nothing reported a change")
	}
	if res.Message != "Observations deleted successfully" {
		t.Errorf("message %q", res.Message)
	}
}

func testDeleteRelations(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	var res graph.DeleteResult
	update(t, s, func(g *graph.Graph) error {
		res = g.DeleteRelations([]graph.Relation{rel("Alice", "Bob", "knows"), rel("Bob", "Alice", "knows")})
		return nil
	})
	if res.Message != "Deleted 1 of 2 relations. The rest matched nothing." || *res.DeletedCount != 1 {
		t.Fatalf("result %+v", res)
	}
	persisted(t, open, s, `E "Alice" "person" ["likes tea"] ""
E "Bob" "person" [] ""
E "Acme" "company" [] ""
R "Alice" "Acme" "works_at" ""
R "Bob" "Acme" "works_at" ""
`)
}

func testFailedCallWritesNothing(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	before := dump(t, s)
	refused := errors.New("refused")
	changed, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error { return refused }})
	if changed || !errors.Is(err, refused) {
		t.Fatalf("a failing mutation: changed %v, err %v; want fn's error", changed, err)
	}
	persisted(t, open, s, before)
	// A write after a failed one goes through.
	update(t, s, func(g *graph.Graph) error { g.CreateEntities([]graph.Entity{ent("Dan", "person")}); return nil })
	persisted(t, open, s, strings.Replace(before, "R ", `E "Dan" "person" [] ""`+"\nR ", 1))
}

// testWriteWaitingIsSeen: the store tells the background index build
// (graph.Contended) that a write waits for a View in progress, so that a
// build step ends at its next entity, and no longer once the write ran.
func testWriteWaitingIsSeen(t *testing.T, open Memory) {
	s := open(t)
	seed(t, s)
	c, ok := s.(graph.Contended)
	if !ok {
		t.Fatalf("%T does not say when a write waits (graph.Contended)", s)
	}
	viewing, release := make(chan struct{}), make(chan struct{})
	viewDone := make(chan error, 1)
	go func() {
		viewDone <- s.View(context.Background(), func(*graph.Graph) error {
			close(viewing)
			<-release
			return nil
		})
	}()
	<-viewing
	if c.ExclusiveWanted() {
		t.Fatal("a write is said to wait while none was made")
	}
	written := make(chan error, 1)
	go func() {
		_, err := s.Update(context.Background(), graph.Write{Tool: "test", Apply: func(g *graph.Graph) error {
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"while a View ran"}}})
			return err
		}})
		written <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); !c.ExclusiveWanted(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("a write waiting for a View was never said to wait")
		}
	}
	close(release)
	if err := <-viewDone; err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if c.ExclusiveWanted() {
		t.Error("a write is still said to wait after it ran")
	}
}

func testOtherInstanceReads(t *testing.T, open Memory) {
	a, b := open(t), open(t)
	if got := dump(t, b); got != "" {
		t.Fatalf("a new memory holds\n%s", got)
	}
	seed(t, a)
	want := dump(t, a)
	if got := dump(t, b); got != want {
		t.Fatalf("the other instance reads\n%s\nwant\n%s", got, want)
	}
	// b writes on top of what a wrote, having read it only through View.
	update(t, b, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"from b"}}})
		return err
	})
	want = strings.Replace(want, `"Bob" "person" []`, `"Bob" "person" ["from b"]`, 1)
	if got := dump(t, a); got != want {
		t.Fatalf("the first instance reads\n%s\nwant\n%s", got, want)
	}
}

func testGraphOrder(t *testing.T, open Memory) {
	s := open(t)
	update(t, s, func(g *graph.Graph) error {
		g.CreateEntities([]graph.Entity{ent("e5", "t"), ent("e1", "t"), ent("e3", "t"), ent("e2", "t")})
		_, err := g.CreateRelations([]graph.Relation{rel("e2", "e1", "r"), rel("e1", "e5", "r"), rel("e3", "e1", "r")})
		return err
	})
	// Delete and create again, in one call and in two: both go to the end.
	update(t, s, func(g *graph.Graph) error {
		g.DeleteEntities([]string{"e1"})
		g.CreateEntities([]graph.Entity{ent("e1", "again")})
		_, err := g.CreateRelations([]graph.Relation{rel("e1", "e5", "r")})
		return err
	})
	update(t, s, func(g *graph.Graph) error {
		g.DeleteRelations([]graph.Relation{rel("e2", "e1", "r")}) // already gone with e1
		g.CreateEntities([]graph.Entity{ent("e4", "t")})
		_, err := g.CreateRelations([]graph.Relation{rel("e4", "e5", "r"), rel("e2", "e5", "r")})
		return err
	})
	update(t, s, func(g *graph.Graph) error {
		g.DeleteRelations([]graph.Relation{rel("e4", "e5", "r")})
		_, err := g.CreateRelations([]graph.Relation{rel("e4", "e5", "r")})
		return err
	})
	persisted(t, open, s, `E "e5" "t" [] ""
E "e3" "t" [] ""
E "e2" "t" [] ""
E "e1" "again" [] ""
E "e4" "t" [] ""
R "e1" "e5" "r" ""
R "e2" "e5" "r" ""
R "e4" "e5" "r" ""
`)
}

func testExtraAndText(t *testing.T, open Memory) {
	s := open(t)
	awkward := []string{"東京で働く", "Москва, зима", "quote \" backslash \\ tab \t newline \n", "nul \x00 byte", "emoji 🧠", "<b>&amp;</b>", "\u2028"}
	update(t, s, func(g *graph.Graph) error {
		// Extra members come from a memory file another tool wrote.
		g.LoadEntity(graph.Entity{Name: "Алиса", EntityType: "人", Observations: awkward, Extra: []byte(`,"createdAt":"2026-01-01","tags":["x",{"y":null}]`)})
		g.LoadEntity(graph.Entity{Name: "Bob \x00", EntityType: "", Observations: []string{""}})
		g.LoadRelation(graph.Relation{From: "Алиса", To: "Bob \x00", RelationType: "знает", Extra: []byte(`,"weight":0.5`)})
		return nil
	})
	want := dump(t, s)
	if !strings.Contains(want, "createdAt") || !strings.Contains(want, "weight") {
		t.Fatalf("Extra members were not kept:\n%s", want)
	}
	persisted(t, open, s, want)
	// A later write keeps them too.
	update(t, s, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Алиса", Contents: []string{"more"}}})
		return err
	})
	persisted(t, open, s, strings.Replace(want, `\u2028"]`, `\u2028" "more"]`, 1))
}

// notified counts calls of a Watch's onChange.
type notified struct{ ch chan struct{} }

func watch(t *testing.T, s graph.Store) notified {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n := notified{make(chan struct{}, 1000)}
	go func() {
		defer close(done)
		s.Watch(ctx, WatchInterval, func() { n.ch <- struct{}{} })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return n
}

func (n notified) wait(d time.Duration) bool {
	select {
	case <-n.ch:
		return true
	case <-time.After(d):
		return false
	}
}

func (n notified) drain() {
	for {
		select {
		case <-n.ch:
		default:
			return
		}
	}
}

func addObservation(t *testing.T, s graph.Store, name, obs string) {
	t.Helper()
	update(t, s, func(g *graph.Graph) error {
		if g.Entity(name) == nil {
			g.CreateEntities([]graph.Entity{ent(name, "t")})
		}
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{obs}}})
		return err
	})
}

// testNotifications: a Watch reports the writes of another instance and
// those of its own.
func testNotifications(t *testing.T, open Memory) {
	a, b := open(t), open(t)
	n := watch(t, b)
	// The watch starts in the background: write until it hears a write.
	heard := false
	for i := 0; i < 50 && !heard; i++ {
		addObservation(t, a, "A", fmt.Sprint("first ", i))
		heard = n.wait(200 * time.Millisecond)
	}
	if !heard {
		t.Fatal("a watch heard none of 50 writes of another instance")
	}
	time.Sleep(10 * WatchInterval)
	n.drain()
	// A write through b is reported to b's own Watch, once (the poll
	// that then finds the file or the revision moved does not report it
	// again).
	addObservation(t, b, "B", "own write")
	if !n.wait(10 * time.Second) {
		t.Error("a watch did not report its own instance's write")
	}
	if n.wait(15 * WatchInterval) {
		t.Error("a watch reported its own instance's write twice")
	}
	addObservation(t, a, "A", "second")
	if !n.wait(10 * time.Second) {
		t.Error("a watch did not hear a write of another instance")
	}
}

func testConcurrentInstances(t *testing.T, open Memory) {
	stores := []graph.Store{open(t), open(t)}
	const writers, writes = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				s := stores[(w+i)%len(stores)]
				_, err := s.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
					name := fmt.Sprintf("w%d", w)
					if g.Entity(name) == nil {
						g.CreateEntities([]graph.Entity{ent(name, "writer")})
					}
					_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: name, Contents: []string{fmt.Sprint(i)}}})
					return err
				}})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, s := range []graph.Store{stores[0], stores[1], open(t)} {
		if err := s.View(context.Background(), func(g *graph.Graph) error {
			if n, _ := g.Len(); n != writers {
				t.Errorf("%d entities, want %d", n, writers)
			}
			for w := range writers {
				e := g.Entity(fmt.Sprintf("w%d", w))
				if e == nil || len(e.Observations) != writes {
					t.Errorf("writer %d: %+v, want %d observations", w, e, writes)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Search answers from a store's graph are those of the same graph built in
// memory: the same entities and relations in the same order, for the
// instance that wrote and for one that read the memory from storage.
func testSearch(t *testing.T, open Memory) {
	tg, q := testgraph.Generate(300, 3)
	var ents []graph.Entity
	for _, e := range tg.Entities {
		ents = append(ents, ent(e.Name, e.EntityType, e.Observations...))
	}
	var rels []graph.Relation
	for _, r := range tg.Relations {
		rels = append(rels, rel(r.From, r.To, r.RelationType))
	}
	build := func(g *graph.Graph) error {
		g.CreateEntities(ents)
		_, err := g.CreateRelations(rels)
		return err
	}
	want := graph.New()
	if err := build(want); err != nil {
		t.Fatal(err)
	}
	s := open(t)
	update(t, s, build)
	queries := []string{q.Rare, q.Common, q.TwoWords, q.Japanese, "Москва", "WORK", "person", "no such thing anywhere"}
	render := func(snap graph.Snapshot) string {
		var b strings.Builder
		for _, e := range snap.Entities {
			fmt.Fprintf(&b, "%s|", e.Name)
		}
		for _, r := range snap.Relations {
			fmt.Fprintf(&b, "%s>%s:%s|", r.From, r.To, r.RelationType)
		}
		return b.String()
	}
	for i, st := range []graph.Store{s, open(t)} {
		for _, query := range queries {
			var got string
			if err := st.View(context.Background(), func(g *graph.Graph) error { got = render(g.SearchRanked(query, 0).Selection().Snapshot()); return nil }); err != nil {
				t.Fatal(err)
			}
			w := render(want.SearchRanked(query, 0).Selection().Snapshot())
			if w == "" && query != "no such thing anywhere" {
				t.Fatalf("search %q finds nothing even in memory; the test proves nothing", query)
			}
			if got != w {
				t.Errorf("instance %d, search %q:\n got %.300s\nwant %.300s", i, query, got, w)
			}
		}
	}
}
