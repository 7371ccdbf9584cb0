package pgstore_test

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// importGenerated imports a generated memory of n entities through s and
// returns it and the size of its memory file.
func importGenerated(t testing.TB, s *pgstore.Store, n int) (*testgraph.Graph, int) {
	t.Helper()
	tg, _ := testgraph.Generate(n, 1)
	var buf bytes.Buffer
	if err := tg.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	f := jsonl.Decode(buf.Bytes())
	if err := s.Import(ctx, f.Graph, f.Unreadable, false); err != nil {
		t.Fatal(err)
	}
	return tg, buf.Len()
}

// A whole read of a big memory takes the relation rows over a second
// connection and holds what one connection reads, rows moved by writes
// included; a write committed between the two connections' snapshots
// makes the read take the relation rows itself, at its own revision; and
// a pool with no connection to spare reads both tables over one.
func TestWholeReadOverTwoConnections(t *testing.T) {
	defer pgstore.SetSideRead(0, nil)()
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	open := func(t *testing.T) *pgstore.Store { return pgtest.Open(t, url, name, pgstore.Options{}) }
	a := open(t)
	importGenerated(t, a, 2000)
	// Move rows out of seq order: each write gives the changed rows new
	// sequence numbers.
	for i := range 50 {
		if _, err := a.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
			e := g.Entities()[i*37%len(g.Entities())]
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: e.Name, Contents: []string{fmt.Sprint("moved ", i)}}})
			if err != nil {
				return err
			}
			r := g.Relations()[i*53%len(g.Relations())]
			g.DeleteRelations([]graph.Relation{{From: r.From, To: r.To, RelationType: r.RelationType}})
			_, err = g.CreateRelations([]graph.Relation{{From: r.From, To: r.To, RelationType: r.RelationType}})
			return err
		}}); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(t, a)

	b := open(t)
	if got := dump(t, b); got != want {
		t.Errorf("read over two connections:\n%s\nwant\n%s", got, want)
	}
	if n := b.SideReads(); n != 1 {
		t.Errorf("%d whole reads took a second connection, want 1", n)
	}

	// A write between the two snapshots.
	w := open(t)
	dump(t, w)
	var fired atomic.Bool
	restore := pgstore.SetSideRead(0, func() {
		if fired.CompareAndSwap(false, true) {
			if _, err := w.Update(ctx, graph.Write{Apply: func(g *graph.Graph) error {
				ents := g.Entities()
				_, err := g.CreateRelations([]graph.Relation{{From: ents[0].Name, To: ents[1].Name, RelationType: "written between the snapshots"}})
				return err
			}}); err != nil {
				t.Error(err)
			}
		}
	})
	c := open(t)
	if got := dump(t, c); got != want {
		t.Errorf("read with a write between its snapshots:\n%s\nwant the memory before that write:\n%s", got, want)
	}
	restore()
	if !fired.Load() {
		t.Fatal("the hook never ran")
	}
	if n := c.SideReads(); n != 0 {
		t.Errorf("a read whose second snapshot held another revision kept it (%d side reads)", n)
	}
	if got, want := dump(t, c), dump(t, w); got != want {
		t.Errorf("after catching up:\n%s\nwant\n%s", got, want)
	}

	// No connection to spare.
	single := pgtest.Open(t, url+"&pool_max_conns=1", name, pgstore.Options{})
	if got, want := dump(t, single), dump(t, w); got != want {
		t.Errorf("read over one connection:\n%s\nwant\n%s", got, want)
	}
	if whole, _ := single.Reads(); whole != 1 || single.SideReads() != 0 {
		t.Errorf("a pool of one connection read whole %d times, %d over two connections; want once, over one", whole, single.SideReads())
	}
}
