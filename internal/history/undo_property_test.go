package history

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// undoModel drives a graph with random writes and undos, each recorded as
// the stores record it (through the line format), and keeps the content
// the memory had after each record: the model undo is checked against.
type undoModel struct {
	t       *testing.T
	rnd     *rand.Rand
	g       *graph.Graph
	now     time.Time
	records []graph.Record // oldest first
	after   []string       // the content after each record
	start   string         // the content before the first record
}

// content is what undo must give back: every entity with its type, its
// creation time and each observation with its time, and every relation
// with its time, in no particular order (an undo moves what it brings
// back to the end, as the commands' edits do).
func content(g *graph.Graph) string {
	var out []string
	for _, e := range g.Entities() {
		obs := make([]string, len(e.Observations))
		for i, o := range e.Observations {
			obs[i] = fmt.Sprintf("%s@%d", o, e.ObservationTime(i))
		}
		slices.Sort(obs)
		out = append(out, fmt.Sprintf("E %s (%s) @%d %v", e.Name, e.EntityType, e.Created, obs))
	}
	for _, r := range g.Relations() {
		out = append(out, fmt.Sprintf("R %s %s %s @%d", r.From, r.RelationType, r.To, r.Created))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// write runs fn as one tracked write a second after the last, and records
// it when it changed something. It returns what fn returned.
func (m *undoModel) write(tool string, fn func(g *graph.Graph) []string) []string {
	m.now = m.now.Add(time.Second)
	m.g.SetNow(graph.TimeOf(m.now))
	defer m.g.SetNow(0)
	m.g.TrackChanges()
	out := fn(m.g)
	changes, _ := m.g.TakeChanges()
	if len(changes) == 0 {
		return out
	}
	last := ""
	if n := len(m.records); n > 0 {
		last = m.records[n-1].ID
	}
	r := graph.Record{ID: graph.NewID(m.now, last), Time: m.now.UTC(), Tool: tool, Changes: changes}
	// As a store keeps it: the record read back from its line.
	r, err := jsonl.DecodeRecord(graph.AppendRecord(nil, &r))
	if err != nil {
		m.t.Fatal(err)
	}
	m.records = append(m.records, r)
	m.after = append(m.after, content(m.g))
	return out
}

// before is the content before record i.
func (m *undoModel) before(i int) string {
	if i == 0 {
		return m.start
	}
	return m.after[i-1]
}

var modelNames = []string{"A", "B", "C", "D", "E"}

func (m *undoModel) name() string { return modelNames[m.rnd.IntN(len(modelNames))] }

func (m *undoModel) observations() []string {
	var out []string
	for range 1 + m.rnd.IntN(3) {
		out = append(out, fmt.Sprintf("o%d", m.rnd.IntN(6)))
	}
	return out
}

// randomWrite makes one of the six tools' writes, a rename or a merge.
func (m *undoModel) randomWrite() {
	switch m.rnd.IntN(8) {
	case 0, 1:
		m.write("create_entities", func(g *graph.Graph) []string {
			g.CreateEntities([]graph.Entity{{Name: m.name(), EntityType: "t", Observations: m.observations()}, {Name: m.name(), EntityType: "u"}})
			return nil
		})
	case 2:
		m.write("delete_entities", func(g *graph.Graph) []string { g.DeleteEntities([]string{m.name(), m.name()}); return nil })
	case 3:
		m.write("add_observations", func(g *graph.Graph) []string {
			g.AddObservations([]graph.ObservationAddition{{EntityName: m.name(), Contents: m.observations()}})
			return nil
		})
	case 4:
		m.write("delete_observations", func(g *graph.Graph) []string {
			g.DeleteObservations([]graph.ObservationDeletion{{EntityName: m.name(), Observations: m.observations()}})
			return nil
		})
	case 5:
		m.write("create_relations", func(g *graph.Graph) []string {
			g.CreateRelations([]graph.Relation{{From: m.name(), To: m.name(), RelationType: "r"}, {From: m.name(), To: m.name(), RelationType: "s"}})
			return nil
		})
	case 6:
		m.write("delete_relations", func(g *graph.Graph) []string {
			g.DeleteRelations([]graph.Relation{{From: m.name(), To: m.name(), RelationType: "r"}})
			return nil
		})
	case 7:
		if m.rnd.IntN(2) == 0 {
			m.write("rename", func(g *graph.Graph) []string { g.Rename(m.name(), m.name()+"x"); return nil })
		} else {
			m.write("merge", func(g *graph.Graph) []string { g.Merge(m.name(), m.name()); return nil })
		}
	}
}

// undo undoes records from..to-1 (newest first, as the command does) as
// one recorded write; it reports whether that changed the memory, and the
// conflicts.
func (m *undoModel) undo(from, to int) (changed bool, conflicts []string) {
	recs := slices.Clone(m.records[from:to])
	slices.Reverse(recs)
	n := len(m.records)
	conflicts = m.write("undo", func(g *graph.Graph) []string { return Undo(g, recs) })
	return len(m.records) > n, conflicts
}

// expect checks the memory holds want, and that the undo said nothing of
// a changed memory.
func (m *undoModel) expect(what, want string, conflicts []string) {
	m.t.Helper()
	if got := content(m.g); got != want {
		m.t.Fatalf("%s gave\n%s\nwant\n%s", what, got, want)
	}
	if len(conflicts) > 0 {
		m.t.Fatalf("%s: conflicts %q with nothing changed since", what, conflicts)
	}
}

// Undo is exact: undoing the newest change, or the newest changes since a
// time, gives back the memory before them; and undoing an undo, of any
// change, with the memory changed since or not, gives back the memory
// before that undo, times included.
func TestUndoIsExactAgainstAModel(t *testing.T) {
	for seed := range uint64(100) {
		m := &undoModel{t: t, rnd: rand.New(rand.NewPCG(seed, 7)), g: graph.New(), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		m.start = content(m.g)
		for step := range 60 {
			m.randomWrite()
			n := len(m.records)
			if n == 0 || m.rnd.IntN(3) != 0 {
				continue
			}
			what := fmt.Sprintf("seed %d step %d: ", seed, step)
			switch m.rnd.IntN(3) {
			case 0: // the newest change
				if _, c := m.undo(n-1, n); true {
					m.expect(what+"undo of the newest", m.before(n-1), c)
				}
			case 1: // a window: every change since record k (of the last few,
				// as an undo of undos grows with each)
				k := max(0, n-1-m.rnd.IntN(8))
				effect := m.preview(k, n)
				_, c := m.undo(k, n)
				m.checkEffect(what, effect)
				m.expect(fmt.Sprintf("%sundo of the %d newest", what, n-k), m.before(k), c)
			case 2: // any change, the memory changed since or not
				k := m.rnd.IntN(n)
				if changed, _ := m.undo(k, k+1); !changed {
					continue
				}
				u := len(m.records) - 1
				_, c := m.undo(u, u+1)
				m.expect(what+"undo of the undo of "+m.records[k].Tool, m.before(u), c)
			}
		}
	}
}

// preview runs Preview of the undo of records from..to-1 and checks it
// changed nothing and saw no conflict; it returns the effect applied to a
// copy of the memory.
func (m *undoModel) preview(from, to int) *graph.Graph {
	m.t.Helper()
	recs := slices.Clone(m.records[from:to])
	slices.Reverse(recs)
	before := content(m.g)
	effect, conflicts := Preview(m.g, recs, graph.TimeOf(m.now))
	if content(m.g) != before || len(conflicts) > 0 {
		m.t.Fatalf("preview changed the memory or saw conflicts %q", conflicts)
	}
	g := graph.New()
	snap := m.g.ReadGraph()
	for _, e := range snap.Entities {
		g.LoadEntity(e)
	}
	for _, r := range snap.Relations {
		g.LoadRelation(r)
	}
	g.Apply(effect)
	return g
}

// checkEffect checks the memory holds what the preview's effect said,
// times aside (the effect lists what changes, not when).
func (m *undoModel) checkEffect(what string, effect *graph.Graph) {
	m.t.Helper()
	if got, want := untimed(effect), untimed(m.g); got != want {
		m.t.Fatalf("%sthe preview said\n%s\nthe undo gave\n%s", what, got, want)
	}
}

var times = regexp.MustCompile(`@\d+`)

func untimed(g *graph.Graph) string { return times.ReplaceAllString(content(g), "") }
