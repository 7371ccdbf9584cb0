package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// testHistoryPurge: purging an entity from the history removes every
// change naming it, in every instance's view, records left empty included,
// and keeps the others' changes; the memory itself is not changed.
func testHistoryPurge(t *testing.T, open Memory) {
	a, b := open(t), open(t)
	p, ok := a.(history.Purger)
	if !ok {
		t.Fatalf("%T cannot purge its history", a)
	}
	ctx := context.Background()
	for _, fn := range []func(g *graph.Graph){
		func(g *graph.Graph) {
			g.CreateEntities([]graph.Entity{{Name: "Secret", EntityType: "t", Observations: []string{"pin 1234"}}, {Name: "B", EntityType: "t"}})
		},
		func(g *graph.Graph) {
			g.CreateRelations([]graph.Relation{{From: "B", To: "Secret", RelationType: "knows"}})
		},
		func(g *graph.Graph) { g.DeleteEntities([]string{"Secret"}) },
	} {
		if _, err := b.Update(ctx, graph.Write{Tool: "test", Apply: func(g *graph.Graph) error { fn(g); return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.PurgeHistory(context.Background(), "Secret")
	if err != nil || n != 3 {
		t.Fatalf("purged %d records, %v; want 3", n, err)
	}
	for _, s := range []graph.Store{a, b, open(t)} {
		checkPurged(t, s)
	}
	if d := dump(t, b); !strings.Contains(d, `"B"`) || strings.Contains(d, "Secret") {
		t.Errorf("the memory after the purge: %s", d)
	}
	if n, err := p.PurgeHistory(context.Background(), "Secret"); n != 0 || err != nil {
		t.Errorf("second purge: %d, %v", n, err)
	}
}

// checkPurged checks s's view of the history after "Secret" was purged:
// one record is left, B's, and nothing names Secret.
func checkPurged(t *testing.T, s graph.Store) {
	t.Helper()
	recs, err := s.(history.Reader).History(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, string(graph.AppendChanges(nil, r.Changes)))
	}
	if len(recs) != 1 || strings.Contains(strings.Join(got, " "), "Secret") || !strings.Contains(got[0], `"name":"B"`) {
		t.Errorf("history after the purge: %q", got)
	}
}
