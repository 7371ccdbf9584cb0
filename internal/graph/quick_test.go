package graph

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Like bbolt's quick_test.go: the seed is fixed so a run is repeatable, and
// -seed picks another (0: from the clock). A failure prints the seed and the
// operations that led to it.
var (
	quickSeed  = flag.Int64("seed", 1, "seed for TestGraphAgainstModel (0: from the clock)")
	quickRuns  = flag.Int("quick.runs", 20, "graphs TestGraphAgainstModel builds")
	quickSteps = flag.Int("quick.steps", 400, "operations per graph in TestGraphAgainstModel")
)

// model is the graph written the obvious way: slices in graph order and
// linear scans, straight from docs/design.md §1 and §2.
type model struct {
	ents []Entity // Observations never nil
	rels []Relation
}

func (m *model) entity(name string) *Entity {
	for i := range m.ents {
		if m.ents[i].Name == name {
			return &m.ents[i]
		}
	}
	return nil
}

func sameRelation(a, b Relation) bool {
	return a.From == b.From && a.To == b.To && a.RelationType == b.RelationType
}

func (m *model) hasRelation(r Relation) bool {
	return slices.ContainsFunc(m.rels, func(x Relation) bool { return sameRelation(x, r) })
}

func copyEntity(e Entity) Entity { return ent(e.Name, e.EntityType, e.Observations...) }

func (m *model) createEntities(in []Entity) CreateEntitiesResult {
	res := CreateEntitiesResult{Entities: []Entity{}}
	existedBefore := func(name string) bool {
		return m.entity(name) != nil && !slices.ContainsFunc(res.Entities, func(c Entity) bool { return c.Name == name })
	}
	for _, e := range in {
		if m.entity(e.Name) != nil {
			if slices.Contains(res.Skipped, e.Name) || slices.Contains(res.Repeated, e.Name) {
				continue
			}
			res.Skipped = append(res.Skipped, e.Name)
			if !existedBefore(e.Name) {
				res.Repeated = append(res.Repeated, e.Name)
			}
			continue
		}
		ne := ent(e.Name, e.EntityType)
		for _, o := range e.Observations {
			if !slices.Contains(ne.Observations, o) {
				ne.Observations = append(ne.Observations, o)
			}
		}
		m.ents = append(m.ents, ne)
		res.Entities = append(res.Entities, copyEntity(ne))
	}
	return res
}

// missing returns the names among want that are not entities.
func (m *model) missing(want ...string) []string {
	var out []string
	for _, n := range want {
		if m.entity(n) == nil {
			out = append(out, n)
		}
	}
	return out
}

func (m *model) createRelations(in []Relation) (CreateRelationsResult, []string) {
	var missing []string
	for _, r := range in {
		missing = append(missing, m.missing(r.From, r.To)...)
	}
	if len(missing) > 0 {
		return CreateRelationsResult{}, missing
	}
	res := CreateRelationsResult{Relations: []Relation{}}
	for _, r := range in {
		if !m.hasRelation(r) {
			r = rel(r.From, r.RelationType, r.To)
			m.rels = append(m.rels, r)
			res.Relations = append(res.Relations, r)
		}
	}
	return res, nil
}

func (m *model) addObservations(in []ObservationAddition) (AddObservationsResult, []string) {
	var missing []string
	for _, a := range in {
		missing = append(missing, m.missing(a.EntityName)...)
	}
	if len(missing) > 0 {
		return AddObservationsResult{}, missing
	}
	res := AddObservationsResult{Results: []AddedObservations{}}
	for _, a := range in {
		e := m.entity(a.EntityName)
		added := []string{}
		for _, c := range a.Contents {
			if !slices.Contains(e.Observations, c) {
				e.Observations = append(e.Observations, c)
				added = append(added, c)
			}
		}
		res.Results = append(res.Results, AddedObservations{a.EntityName, added})
	}
	return res, nil
}

func (m *model) deleteEntities(in []string) DeleteResult {
	var asked, notFound []string
	for _, n := range in {
		if slices.Contains(asked, n) {
			continue
		}
		asked = append(asked, n)
		if m.entity(n) == nil {
			notFound = append(notFound, n)
		}
	}
	// The relations of the entities deleted go with them; those of a name
	// no entity has (loaded from a file) stay.
	deleted := func(name string) bool { return slices.Contains(asked, name) && !slices.Contains(notFound, name) }
	m.ents = slices.DeleteFunc(m.ents, func(e Entity) bool { return slices.Contains(asked, e.Name) })
	m.rels = slices.DeleteFunc(m.rels, func(r Relation) bool { return deleted(r.From) || deleted(r.To) })
	if len(notFound) == 0 {
		return DeleteResult{Success: true, Message: "Entities deleted successfully"}
	}
	return DeleteResult{
		Success:  true,
		Message:  fmt.Sprintf("Deleted %d of %d entities. Not found: %s", len(asked)-len(notFound), len(asked), strings.Join(notFound, ", ")),
		NotFound: notFound,
	}
}

func (m *model) deleteObservations(in []ObservationDeletion) DeleteResult {
	var asked [][2]string
	var missing []string
	deleted := 0
	for _, d := range in {
		e := m.entity(d.EntityName)
		if e == nil && !slices.Contains(missing, d.EntityName) {
			missing = append(missing, d.EntityName)
		}
		for _, o := range d.Observations {
			p := [2]string{d.EntityName, o}
			if slices.Contains(asked, p) {
				continue
			}
			asked = append(asked, p)
			if e != nil {
				if i := slices.Index(e.Observations, o); i >= 0 {
					e.Observations = slices.Delete(e.Observations, i, i+1)
					deleted++
				}
			}
		}
	}
	res := DeleteResult{Success: true, DeletedCount: &deleted}
	switch {
	case deleted == len(asked):
		res.Message = "Observations deleted successfully"
	case len(missing) == 0:
		res.Message = fmt.Sprintf("Deleted %d of %d observations.", deleted, len(asked))
	default:
		res.Message = fmt.Sprintf("Deleted %d of %d observations. Entities not found: %s", deleted, len(asked), strings.Join(missing, ", "))
	}
	return res
}

func (m *model) deleteRelations(in []Relation) DeleteResult {
	var asked []Relation
	deleted := 0
	for _, r := range in {
		if slices.ContainsFunc(asked, func(x Relation) bool { return sameRelation(x, r) }) {
			continue
		}
		asked = append(asked, r)
		if i := slices.IndexFunc(m.rels, func(x Relation) bool { return sameRelation(x, r) }); i >= 0 {
			m.rels = slices.Delete(m.rels, i, i+1)
			deleted++
		}
	}
	res := DeleteResult{Success: true, DeletedCount: &deleted}
	if deleted == len(asked) {
		res.Message = "Relations deleted successfully"
	} else {
		res.Message = fmt.Sprintf("Deleted %d of %d relations. The rest matched nothing.", deleted, len(asked))
	}
	return res
}

// snapshot returns ents and the relations keep accepts, copied.
func (m *model) snapshot(ents []Entity, keep func(from, to bool) bool) Snapshot {
	s := Snapshot{Entities: []Entity{}, Relations: []Relation{}}
	in := func(name string) bool {
		return slices.ContainsFunc(ents, func(e Entity) bool { return e.Name == name })
	}
	for _, e := range ents {
		s.Entities = append(s.Entities, copyEntity(e))
	}
	for _, r := range m.rels {
		if keep(in(r.From), in(r.To)) {
			s.Relations = append(s.Relations, r)
		}
	}
	return s
}

func (m *model) readGraph() Snapshot {
	return m.snapshot(m.ents, func(bool, bool) bool { return true })
}

func (m *model) openNodes(names []string) Snapshot {
	var ents []Entity
	for _, e := range m.ents {
		if slices.Contains(names, e.Name) {
			ents = append(ents, e)
		}
	}
	return m.snapshot(ents, func(from, to bool) bool { return from && to })
}

// searchNodes is the contract's search (docs/design.md §2) for ASCII text,
// where folding is lower-casing.
func (m *model) searchNodes(query string) Snapshot {
	q := strings.ToLower(query)
	words := strings.Fields(q)
	inName := func(e Entity, s string) bool { return strings.Contains(strings.ToLower(e.Name), s) }
	inType := func(e Entity, s string) bool { return strings.Contains(strings.ToLower(e.EntityType), s) }
	inObs := func(e Entity, s string) bool {
		return slices.ContainsFunc(e.Observations, func(o string) bool { return strings.Contains(strings.ToLower(o), s) })
	}
	var byName, byType, byObs, byWords []Entity
	for _, e := range m.ents {
		switch {
		case inName(e, q):
			byName = append(byName, e)
		case inType(e, q):
			byType = append(byType, e)
		case inObs(e, q):
			byObs = append(byObs, e)
		case len(words) > 1 && !slices.ContainsFunc(words, func(w string) bool { return !inName(e, w) && !inType(e, w) && !inObs(e, w) }):
			byWords = append(byWords, e)
		}
	}
	return m.snapshot(slices.Concat(byName, byType, byObs, byWords), func(from, to bool) bool { return from || to })
}

// neighbours is open_nodes at a depth: the named entities, then breadth
// first the entities related to those found, depth times.
func (m *model) neighbours(names []string, depth int) Snapshot {
	var found []string
	for _, n := range names {
		if m.entity(n) != nil && !slices.Contains(found, n) {
			found = append(found, n)
		}
	}
	for range depth {
		var next []string
		for _, r := range m.rels {
			for _, end := range [2][2]string{{r.From, r.To}, {r.To, r.From}} {
				if slices.Contains(found, end[0]) && m.entity(end[1]) != nil && !slices.Contains(found, end[1]) && !slices.Contains(next, end[1]) {
					next = append(next, end[1])
				}
			}
		}
		found = append(found, next...)
	}
	return m.openNodes(found)
}

// checkRanked checks a ranked search against the model: the exact part is
// the model's search_nodes answer, the rest are the entities with the best
// scores (naiveScores), as many as the limit leaves room for.
func checkRanked(t *testing.T, g *Graph, m *model, query string, limit int) {
	t.Helper()
	r := g.SearchRanked(query, limit)
	exact := m.searchNodes(query)
	got := r.Selection().Snapshot()
	if want := names(exact.Entities); !slices.Equal(names(got.Entities[:r.Exact]), want) {
		t.Errorf("SearchRanked(%q, %d) exact part %q, want %q", query, limit, names(got.Entities[:r.Exact]), want)
		return
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	scores := naiveRankedScores(g, query)
	var candidates []string // entities with a score, not exact matches
	for _, e := range m.ents {
		if scores[e.Name] > 0 && !slices.Contains(names(exact.Entities), e.Name) {
			candidates = append(candidates, e.Name)
		}
	}
	partial := r.Hits[r.Exact:]
	if want := min(max(limit-r.Exact, 0), len(candidates)); len(partial) != want {
		t.Errorf("SearchRanked(%q, %d) has %d partial matches, want %d", query, limit, len(partial), want)
		return
	}
	lowest := math.Inf(1)
	for i, h := range partial {
		if h.Exact || h.Score <= 0 || math.Abs(h.Score-scores[h.Entity.Name]) > 1e-9*h.Score {
			t.Errorf("SearchRanked(%q) partial hit %s: exact %v, score %v (naive %v)", query, h.Entity.Name, h.Exact, h.Score, scores[h.Entity.Name])
		}
		if i > 0 && better(partial[i-1], h) > 0 {
			t.Errorf("SearchRanked(%q) partial hits out of order at %s", query, h.Entity.Name)
		}
		lowest = min(lowest, scores[h.Entity.Name])
	}
	for _, c := range candidates {
		if !slices.ContainsFunc(partial, func(h Hit) bool { return h.Entity.Name == c }) && scores[c] > lowest*(1+1e-9) {
			t.Errorf("SearchRanked(%q, %d) left out %s (score %v) but kept one scoring %v", query, limit, c, scores[c], lowest)
		}
	}
	if want := m.snapshot(got.Entities, func(from, to bool) bool { return from || to }); !reflect.DeepEqual(got.Relations, want.Relations) {
		t.Errorf("SearchRanked(%q) relations %s, want %s", query, describeRelations(got.Relations), describeRelations(want.Relations))
	}
}

// Random input is drawn from small pools so that names collide, relations
// repeat and searches hit. Names and texts contain spaces for multi-word
// queries; the observation pool is large enough for an entity to pass 32.
var (
	quickNames = []string{"Alice", "alice", "Bob", "Carol Ann", "dave", "AB", "b c", "Eve"}
	quickTypes = []string{"person", "Person", "org", "big city", "tea"}
	quickRels  = []string{"knows", "Knows", "works_at"}
	quickWords = []string{"likes tea", "Lives in Paris", "alice's friend", "works at ACME", "b", "c d", "Bob", "moved on 3 May 2021"}
)

func quickObservation(rng *rand.Rand) string {
	i := rng.IntN(56)
	return fmt.Sprintf("%s %d", quickWords[i%len(quickWords)], i/len(quickWords))
}

func pick[T any](rng *rand.Rand, from []T) T { return from[rng.IntN(len(from))] }

// quickName is usually a name that may exist, sometimes one that never does.
func quickName(rng *rand.Rand) string {
	if rng.IntN(12) == 0 {
		return "Zed"
	}
	return pick(rng, quickNames)
}

func quickList[T any](rng *rand.Rand, max int, gen func() T) []T {
	n := rng.IntN(max + 1)
	out := make([]T, n)
	for i := range out {
		out[i] = gen()
	}
	return out
}

func quickQuery(rng *rand.Rand, m *model) string {
	switch rng.IntN(8) {
	case 0:
		return ""
	case 1, 2: // two words from anywhere
		return pick(rng, strings.Fields(quickObservation(rng)+" "+pick(rng, quickNames)+" "+pick(rng, quickTypes))) +
			" " + pick(rng, strings.Fields(quickObservation(rng)+" "+pick(rng, quickTypes)))
	case 3:
		return pick(rng, []string{"a", "B", "c", " ", "e", "1", "S"})
	case 4: // a question about when, and what Alice's neighbours hold
		return pick(rng, []string{"When did Alice move to Paris?", "when does bob like tea", "What does Alice's friend like?"})
	}
	// A piece of some text in the graph, in some case.
	var texts []string
	for _, e := range m.ents {
		texts = append(texts, e.Name, e.EntityType)
		texts = append(texts, e.Observations...)
	}
	if len(texts) == 0 {
		return pick(rng, quickNames)
	}
	s := pick(rng, texts)
	i := rng.IntN(len(s))
	s = s[i : i+1+rng.IntN(len(s)-i)]
	switch rng.IntN(3) {
	case 0:
		s = strings.ToUpper(s)
	case 1:
		s = strings.ToLower(s)
	}
	return s
}

// quickStep applies one random operation to g and m, checks that both return
// the same, and describes what it did.
func quickStep(t *testing.T, rng *rand.Rand, g *Graph, m *model) string {
	check := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
		}
	}
	// checkErr compares an all-or-nothing failure.
	checkErr := func(err error, missing []string) {
		var nf *NotFoundError
		switch {
		case missing == nil && err != nil:
			t.Errorf("err = %v, want success", err)
		case missing != nil && !errors.As(err, &nf):
			t.Errorf("err = %v, want a NotFoundError for one of %q", err, missing)
		case missing != nil && !slices.Contains(missing, nf.Name):
			t.Errorf("NotFoundError names %q, want one of %q", nf.Name, missing)
		}
	}
	newRelation := func() Relation { return rel(quickName(rng), pick(rng, quickRels), quickName(rng)) }
	switch op := rng.IntN(100); {
	case op < 18:
		in := quickList(rng, 3, func() Entity {
			return ent(quickName(rng), pick(rng, quickTypes), quickList(rng, 4, func() string { return quickObservation(rng) })...)
		})
		check("CreateEntities", g.CreateEntities(in), m.createEntities(in))
		return fmt.Sprintf("CreateEntities(%s)", describe(Snapshot{Entities: in}))
	case op < 36:
		in := quickList(rng, 4, newRelation)
		got, err := g.CreateRelations(in)
		want, missing := m.createRelations(in)
		checkErr(err, missing)
		if err == nil {
			check("CreateRelations", got, want)
		}
		return fmt.Sprintf("CreateRelations(%v)", describeRelations(in))
	case op < 66:
		in := quickList(rng, 3, func() ObservationAddition {
			return ObservationAddition{quickName(rng), quickList(rng, 12, func() string { return quickObservation(rng) })}
		})
		got, err := g.AddObservations(in)
		want, missing := m.addObservations(in)
		checkErr(err, missing)
		if err == nil {
			check("AddObservations", got, want)
		}
		return fmt.Sprintf("AddObservations(%v)", in)
	case op < 70:
		in := quickList(rng, 3, func() string { return quickName(rng) })
		check("DeleteEntities", g.DeleteEntities(in), m.deleteEntities(in))
		return fmt.Sprintf("DeleteEntities(%q)", in)
	case op < 86:
		in := quickList(rng, 3, func() ObservationDeletion {
			name := quickName(rng)
			return ObservationDeletion{name, quickList(rng, 5, func() string {
				// Mostly observations the entity has, so deletions happen.
				if e := m.entity(name); e != nil && len(e.Observations) > 0 && rng.IntN(3) > 0 {
					return pick(rng, e.Observations)
				}
				return quickObservation(rng)
			})}
		})
		check("DeleteObservations", g.DeleteObservations(in), m.deleteObservations(in))
		return fmt.Sprintf("DeleteObservations(%v)", in)
	case op < 88:
		// As storage loads a file: a name seen again is merged.
		e := ent(quickName(rng), pick(rng, quickTypes), quickList(rng, 6, func() string { return quickObservation(rng) })...)
		me := m.entity(e.Name)
		if me != nil && !slices.ContainsFunc(e.Observations, func(o string) bool { return !slices.Contains(me.Observations, o) }) {
			// Storage merges without asking whether anything changed
			// (Version moves): keep to loads that change the graph.
			return "LoadEntity(nothing new)"
		}
		_, merged := g.LoadEntity(e)
		check("LoadEntity merged", merged, m.loadEntity(e))
		return fmt.Sprintf("LoadEntity(%s)", describe(Snapshot{Entities: []Entity{e}}))
	case op < 90:
		// As storage loads a file: the ends need not exist.
		r := newRelation()
		_, duplicate := g.LoadRelation(r)
		check("LoadRelation duplicate", duplicate, m.hasRelation(r))
		if !duplicate {
			m.rels = append(m.rels, r)
		}
		return fmt.Sprintf("LoadRelation(%v)", describeRelations([]Relation{r}))
	default:
		in := quickList(rng, 4, newRelation)
		// Mostly relations that exist, so deletions happen.
		for i := range in {
			if len(m.rels) > 0 && rng.IntN(3) > 0 {
				in[i] = pick(rng, m.rels)
			}
		}
		check("DeleteRelations", g.DeleteRelations(in), m.deleteRelations(in))
		return fmt.Sprintf("DeleteRelations(%v)", describeRelations(in))
	}
}

// loadEntity loads e as storage loads a file, merging it into the entity
// of its name if there is one, and reports whether it did.
func (m *model) loadEntity(e Entity) (merged bool) {
	me := m.entity(e.Name)
	merged = me != nil
	if me == nil {
		m.ents = append(m.ents, ent(e.Name, e.EntityType))
		me = &m.ents[len(m.ents)-1]
	}
	for _, o := range e.Observations {
		if !slices.Contains(me.Observations, o) {
			me.Observations = append(me.Observations, o)
		}
	}
	return merged
}

// quickLoad loads random entities and relations into g between BeginLoad
// and EndLoad, as storage loads a file (names and triples repeated among
// them, relations before their ends), and into m.
func quickLoad(t *testing.T, rng *rand.Rand, g *Graph, m *model) string {
	g.BeginLoad()
	rels, repeats := 0, 0
	for range 20 + rng.IntN(60) {
		if rng.IntN(3) == 0 {
			e := ent(quickName(rng), pick(rng, quickTypes), quickList(rng, 4, func() string { return quickObservation(rng) })...)
			g.LoadEntity(e)
			m.loadEntity(e)
			continue
		}
		r := rel(quickName(rng), pick(rng, quickRels), quickName(rng))
		g.LoadRelation(r)
		if m.hasRelation(r) {
			repeats++
		} else {
			m.rels = append(m.rels, r)
		}
		rels++
	}
	if got := len(g.EndLoad()); got != repeats {
		t.Errorf("EndLoad dropped %d repeated relations, want %d", got, repeats)
	}
	return fmt.Sprintf("a load of %d relations, %d of them repeats", rels, repeats)
}

// quickCheckReads compares what every read tool returns.
func quickCheckReads(t *testing.T, rng *rand.Rand, g *Graph, m *model) {
	compare := func(what string, got, want Snapshot) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", what, describe(got), describe(want))
		}
	}
	compare("ReadGraph()", g.ReadGraph(), m.readGraph())
	names := quickList(rng, 5, func() string { return quickName(rng) })
	compare(fmt.Sprintf("OpenNodes(%q)", names), openNodes(g, names), m.openNodes(names))
	q := quickQuery(rng, m)
	compare(fmt.Sprintf("SearchNodes(%q)", q), searchNodes(g, q), m.searchNodes(q))
	depth := rng.IntN(MaxDepth + 1)
	sel, err := g.Neighbours(names, depth)
	if err != nil {
		t.Errorf("Neighbours(%q, %d): %v", names, depth, err)
	}
	compare(fmt.Sprintf("Neighbours(%q, %d)", names, depth), sel.Snapshot(), m.neighbours(names, depth))
	checkRanked(t, g, m, q, rng.IntN(6))
	if ents, rels := g.Len(); ents != len(m.ents) || rels != len(m.rels) {
		t.Errorf("Len() = %d, %d; want %d, %d", ents, rels, len(m.ents), len(m.rels))
	}
}

func TestGraphAgainstModel(t *testing.T) { runAgainstModel(t, false, nil) }

// TestGraphAgainstModelLoaded is TestGraphAgainstModel on graphs that
// start with a load in bulk, its relations kept sorted by hash as a big
// load's are: the operations after find, replace and delete them there.
func TestGraphAgainstModelLoaded(t *testing.T) {
	saved := sortedMin
	t.Cleanup(func() { sortedMin = saved })
	sortedMin = 1
	runAgainstModel(t, true, nil)
}

// TestGraphAgainstModelIndexing is TestGraphAgainstModel with the search
// indexes built a few entities at a time between the operations, as the
// server builds them in the background: every answer must be the model's
// whether an index is whole, in the making or dropped.
func TestGraphAgainstModelIndexing(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(*quickSeed), 7))
	runAgainstModel(t, false, func(g *Graph) {
		switch n := rng.IntN(10); {
		case n == 0:
			g.idx.x, g.words.x = nil, nil // as when writes outnumber the index
		case n < 6:
			g.IndexStep(1 + rng.IntN(3))
		}
	})
}

// runAgainstModel runs random operations on a graph and on the model and
// compares every answer; loaded, each run starts with a load in bulk
// (quickLoad); between, if not nil, runs after each operation.
func runAgainstModel(t *testing.T, loaded bool, between func(g *Graph)) {
	seed := *quickSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	mostObservations := 0
	for run := range *quickRuns {
		g, m := New(), &model{}
		var history []string
		if loaded {
			history = append(history, quickLoad(t, rng, g, m))
			quickCheckReads(t, rng, g, m)
			checkConsistent(t, g)
		}
		for step := range *quickSteps {
			version, before := g.Version(), g.ReadGraph()
			history = append(history, quickStep(t, rng, g, m))
			if between != nil {
				between(g)
			}
			if changed := !reflect.DeepEqual(g.ReadGraph(), before); changed != (g.Version() != version) {
				t.Errorf("graph changed = %v, but Version moved = %v", changed, g.Version() != version)
			}
			quickCheckReads(t, rng, g, m)
			checkConsistent(t, g)
			if t.Failed() {
				t.Fatalf("seed %d (rerun with -seed=%d), run %d, step %d; operations:\n%s",
					seed, seed, run, step, strings.Join(history, "\n"))
			}
			for _, e := range m.ents {
				mostObservations = max(mostObservations, len(e.Observations))
			}
		}
	}
	if mostObservations <= obsIndexThreshold && *quickRuns*(*quickSteps) >= 1000 {
		t.Errorf("no entity passed %d observations (most: %d); the test no longer exercises the indexed path", obsIndexThreshold, mostObservations)
	}
}
