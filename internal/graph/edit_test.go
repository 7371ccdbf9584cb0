package graph

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// checkConsistent verifies that every index of g agrees with its entity and
// relation lists: what a later call relies on after an edit.
func checkConsistent(t *testing.T, g *Graph) {
	t.Helper()
	if len(g.byName) != len(g.entities) {
		t.Errorf("byName has %d names, entities %d", len(g.byName), len(g.entities))
	}
	for _, e := range g.entities {
		if g.byName[e.Name] != e {
			t.Errorf("byName[%q] is not the entity", e.Name)
		}
	}
	if g.relSet.len() != len(g.relations) {
		t.Errorf("relSet has %d triples, relations %d", g.relSet.len(), len(g.relations))
	}
	outs, ins := 0, 0
	for _, r := range g.relations {
		if g.relSet.get(r.key()) != r {
			t.Errorf("relSet misses %v", r.key())
		}
		if !slices.Contains(g.outOf(r.From), r) || !slices.Contains(g.inOf(r.To), r) {
			t.Errorf("out/in misses %v", r.key())
		}
	}
	lists := make(map[string]*endLists)
	for _, e := range g.entities {
		lists[e.Name] = &e.rels
	}
	for name, l := range g.loose {
		if g.byName[name] != nil {
			t.Errorf("loose lists of %q, which has an entity", name)
		}
		if len(l.out) == 0 && len(l.in) == 0 {
			t.Errorf("empty loose lists of %q", name)
		}
		lists[name] = l
	}
	for name, l := range lists {
		outs += len(l.out)
		ins += len(l.in)
		for _, list := range [][]*Relation{l.out, l.in} {
			if !slices.IsSortedFunc(list, bySeq) {
				t.Errorf("lists of %q not in graph order", name)
			}
		}
		for _, r := range l.out {
			if r.From != name {
				t.Errorf("out of %q holds %v", name, r.key())
			}
		}
		for _, r := range l.in {
			if r.To != name {
				t.Errorf("in of %q holds %v", name, r.key())
			}
		}
	}
	if outs != len(g.relations) || ins != len(g.relations) {
		t.Errorf("out holds %d, in %d, relations %d", outs, ins, len(g.relations))
	}
}

func TestRename(t *testing.T) {
	g := newGraph(t,
		[]Entity{ent("Alice", "person", "likes tea"), ent("Bob", "person"), ent("Acme", "org")},
		[]Relation{rel("Alice", "knows", "Bob"), rel("Bob", "knows", "Alice"), rel("Alice", "works_at", "Acme"), rel("Alice", "is", "Alice"), rel("Bob", "works_at", "Acme")})
	g.Search("tea") // build the search index so the rename must keep it in step

	res, err := g.Rename("Alice", "Алиса 東京")
	if err != nil {
		t.Fatal(err)
	}
	if res.Relations != 4 {
		t.Errorf("Relations = %d, want 4", res.Relations)
	}
	checkConsistent(t, g)
	want := "Алиса 東京/person[likes tea] Bob/person[] Acme/org[] | Алиса 東京-knows->Bob Bob-knows->Алиса 東京 Алиса 東京-works_at->Acme Алиса 東京-is->Алиса 東京 Bob-works_at->Acme"
	if got := describe(g.ReadGraph()); got != want {
		t.Errorf("after rename:\n got %s\nwant %s", got, want)
	}
	if got := names(searchNodes(g, "алиса").Entities); !slices.Equal(got, []string{"Алиса 東京"}) {
		t.Errorf("search алиса = %v", got)
	}
	if got := names(searchNodes(g, "tea").Entities); !slices.Equal(got, []string{"Алиса 東京"}) {
		t.Errorf("search tea = %v", got)
	}
	if got := searchNodes(g, "Alice").Entities; len(got) != 0 {
		t.Errorf("the old name is still found: %v", names(got))
	}
	if got := describe(openNodes(g, []string{"Алиса 東京", "Bob"})); got != "Алиса 東京/person[likes tea] Bob/person[] | Алиса 東京-knows->Bob Bob-knows->Алиса 東京 Алиса 東京-is->Алиса 東京" {
		t.Errorf("open after rename: %s", got)
	}
	// Deleting the renamed entity takes its relations along.
	g.DeleteEntities([]string{"Алиса 東京"})
	checkConsistent(t, g)
	if got := describe(g.ReadGraph()); got != "Bob/person[] Acme/org[] | Bob-works_at->Acme" {
		t.Errorf("after delete: %s", got)
	}
}

func TestRenameRefuses(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t"), ent("B", "t")}, []Relation{rel("A", "r", "B")})
	before := describe(g.ReadGraph())
	v := g.Version()
	_, err := g.Rename("Nobody", "C")
	assertNotFound(t, err, "Nobody")
	_, err = g.Rename("A", "B")
	var ex *ExistsError
	if !errors.As(err, &ex) || ex.Name != "B" || err.Error() != "Entity with name B already exists" {
		t.Errorf("rename onto an existing name: err = %v", err)
	}
	if _, err := g.Rename("A", ""); err == nil {
		t.Error("rename to an empty name: no error")
	}
	if _, err := g.Rename("A", "A"); err != nil {
		t.Errorf("rename to itself: %v", err)
	}
	if g.Version() != v || describe(g.ReadGraph()) != before {
		t.Errorf("a refused rename changed the graph: %s", describe(g.ReadGraph()))
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name        string
		ents        []Entity
		rels        []Relation
		into, from  string
		want        string
		added       []string
		moved       string
		dropped     string
		typeDropped string
	}{{
		name: "observations united, relations moved",
		ents: []Entity{ent("Bob", "person", "b1", "shared"), ent("Robert", "human", "shared", "r1"), ent("Acme", "org")},
		rels: []Relation{rel("Robert", "works_at", "Acme"), rel("Acme", "employs", "Robert")},
		into: "Bob", from: "Robert",
		want:  "Bob/person[b1,shared,r1] Acme/org[] | Bob-works_at->Acme Acme-employs->Bob",
		added: []string{"r1"}, moved: "Bob-works_at->Acme Acme-employs->Bob", dropped: "", typeDropped: "human",
	}, {
		name: "duplicate relations and relations between the two dropped",
		ents: []Entity{ent("A", "t"), ent("B", "t"), ent("C", "t")},
		rels: []Relation{rel("A", "knows", "C"), rel("B", "knows", "C"), rel("A", "alias", "B"), rel("B", "alias", "A"), rel("B", "self", "B"), rel("C", "likes", "B")},
		into: "A", from: "B",
		want:  "A/t[] C/t[] | A-knows->C A-self->A C-likes->A",
		added: []string{}, moved: "A-self->A C-likes->A", dropped: "B-knows->C A-alias->B B-alias->A",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, tt.ents, tt.rels)
			g.Search("anything") // index built: it must follow the merge
			res, err := g.Merge(tt.into, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			checkConsistent(t, g)
			if got := describe(g.ReadGraph()); got != tt.want {
				t.Errorf("graph:\n got %s\nwant %s", got, tt.want)
			}
			if !slices.Equal(res.AddedObservations, tt.added) {
				t.Errorf("AddedObservations = %q, want %q", res.AddedObservations, tt.added)
			}
			if got := describeRelations(res.MovedRelations); got != tt.moved {
				t.Errorf("MovedRelations = %s, want %s", got, tt.moved)
			}
			if got := describeRelations(res.DroppedRelations); got != tt.dropped {
				t.Errorf("DroppedRelations = %s, want %s", got, tt.dropped)
			}
			if res.TypeDropped != tt.typeDropped {
				t.Errorf("TypeDropped = %q, want %q", res.TypeDropped, tt.typeDropped)
			}
			if got := searchNodes(g, tt.from).Entities; len(got) != 0 && got[0].Name == tt.from {
				t.Errorf("the merged entity is still found")
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t", "a")}, nil)
	v := g.Version()
	_, err := g.Merge("A", "Nobody")
	assertNotFound(t, err, "Nobody")
	_, err = g.Merge("Nobody", "A")
	assertNotFound(t, err, "Nobody")
	if _, err := g.Merge("A", "A"); err == nil {
		t.Error("merge into itself: no error")
	}
	if g.Version() != v {
		t.Error("a refused merge changed the graph")
	}
}

func TestReplaceObservation(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t", "one", "two", "three")}, nil)
	g.Search("one")
	if err := g.ReplaceObservation("A", "two", "2 — два — 二"); err != nil {
		t.Fatal(err)
	}
	if got := describe(g.ReadGraph()); got != "A/t[one,2 — два — 二,three]" {
		t.Errorf("got %s", got)
	}
	if got := names(searchNodes(g, "ДВА").Entities); !slices.Equal(got, []string{"A"}) {
		t.Errorf("search for the new text: %v", got)
	}
	if got := searchNodes(g, "two").Entities; len(got) != 0 {
		t.Errorf("the old text is still found")
	}
	v := g.Version()
	assertNotFound(t, g.ReplaceObservation("B", "one", "x"), "B")
	if err := g.ReplaceObservation("A", "missing", "x"); err == nil {
		t.Error("replacing a missing observation: no error")
	}
	if err := g.ReplaceObservation("A", "one", "three"); err == nil {
		t.Error("replacing with an existing observation: no error")
	}
	if g.Version() != v {
		t.Error("a refused change changed the graph")
	}
}

func TestReplaceObservationLongList(t *testing.T) {
	obs := make([]string, obsIndexThreshold+5)
	for i := range obs {
		obs[i] = string(rune('a'+i%26)) + string(rune('0'+i/26))
	}
	g := newGraph(t, []Entity{ent("A", "t", obs...)}, nil)
	if err := g.ReplaceObservation("A", obs[3], "new"); err != nil {
		t.Fatal(err)
	}
	e := g.Entity("A")
	if !e.hasObservation("new") || e.hasObservation(obs[3]) {
		t.Error("the observation set was not updated")
	}
	if e.addObservation(obs[3], 0) != true {
		t.Error("the old text can no longer be added")
	}
}

func TestDanglingRelations(t *testing.T) {
	g := New()
	g.LoadEntity(ent("A", "t"))
	g.LoadEntity(ent("B", "t"))
	g.LoadRelation(rel("A", "r", "B"))
	g.LoadRelation(rel("A", "r", "Ghost"))
	g.LoadRelation(rel("Ghost", "r", "B"))
	if got := describeRelations(g.DanglingRelations()); got != "A-r->Ghost Ghost-r->B" {
		t.Errorf("DanglingRelations = %s", got)
	}
	v := g.Version()
	if got := describeRelations(g.RemoveDanglingRelations()); got != "A-r->Ghost Ghost-r->B" {
		t.Errorf("RemoveDanglingRelations = %s", got)
	}
	if g.Version() == v {
		t.Error("removing relations did not change the version")
	}
	checkConsistent(t, g)
	if got := describe(g.ReadGraph()); got != "A/t[] B/t[] | A-r->B" {
		t.Errorf("after: %s", got)
	}
	if len(g.DanglingRelations()) != 0 {
		t.Error("still dangling")
	}
}

func TestNeighbourhood(t *testing.T) {
	// A chain A-B-C-D and a star around A.
	g := newGraph(t,
		[]Entity{ent("A", "t"), ent("B", "t"), ent("C", "t"), ent("D", "t"), ent("S1", "t"), ent("S2", "t")},
		[]Relation{rel("A", "r", "B"), rel("C", "r", "B"), rel("C", "r", "D"), rel("S1", "r", "A"), rel("A", "r", "S2")})
	for _, tt := range []struct {
		depth, limit int
		want         string
		truncated    bool
	}{
		{0, 0, "A/t[]", false},
		{1, 0, "A/t[] B/t[] S1/t[] S2/t[] | A-r->B S1-r->A A-r->S2", false},
		{2, 0, "A/t[] B/t[] S1/t[] S2/t[] C/t[] | A-r->B C-r->B S1-r->A A-r->S2", false},
		{2, 3, "A/t[] B/t[] S1/t[] | A-r->B S1-r->A", true},
	} {
		sel, truncated := g.Neighbourhood("A", tt.depth, tt.limit)
		if got := describe(sel.Snapshot()); got != tt.want || truncated != tt.truncated {
			t.Errorf("depth %d limit %d: got %s (truncated %v), want %s (%v)", tt.depth, tt.limit, got, truncated, tt.want, tt.truncated)
		}
	}
	if sel, _ := g.Neighbourhood("Nobody", 2, 0); len(sel.Entities) != 0 {
		t.Error("a missing entity has a neighbourhood")
	}
}

func TestImport(t *testing.T) {
	g := newGraph(t, []Entity{ent("Alice", "person", "a1"), ent("Acme", "org")}, []Relation{rel("Alice", "works_at", "Acme")})
	g.Search("a1")
	src := Snapshot{
		Entities:  []Entity{ent("Alice", "human", "a1", "a2"), ent("Борис", "person", "b1", "b1"), ent("東京", "city")},
		Relations: []Relation{rel("Alice", "works_at", "Acme"), rel("Борис", "lives_in", "東京"), rel("Alice", "knows", "Борис")},
	}
	res, err := g.Import(src)
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, g)
	want := "Alice/person[a1,a2] Acme/org[] Борис/person[b1] 東京/city[] | Alice-works_at->Acme Борис-lives_in->東京 Alice-knows->Борис"
	if got := describe(g.ReadGraph()); got != want {
		t.Errorf("graph:\n got %s\nwant %s", got, want)
	}
	assertJSON(t, "result", res, `{"addedEntities":["Борис","東京"],"addedObservations":[{"entityName":"Alice","addedObservations":["a2"]}],"addedRelations":[{"from":"Борис","to":"東京","relationType":"lives_in"},{"from":"Alice","to":"Борис","relationType":"knows"}],"skippedObservations":1,"skippedRelations":1,"typesKept":[{"name":"Alice","kept":"person","imported":"human"}]}`)
	if got := names(searchNodes(g, "a2").Entities); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("search a2 = %v", got)
	}

	// A relation to an entity in neither graph: nothing is imported.
	v := g.Version()
	_, err = g.Import(Snapshot{Entities: []Entity{ent("New", "t")}, Relations: []Relation{rel("New", "r", "Ghost")}})
	assertNotFound(t, err, "Ghost")
	if g.Version() != v || g.Entity("New") != nil {
		t.Error("a failed import changed the graph")
	}
}

// Members of a file's lines that the graph does not know (Extra) travel
// with the entities and relations an import adds, so a memory moved into
// another store and back loses nothing; an entity that exists keeps its
// own.
func TestImportKeepsUnknownMembers(t *testing.T) {
	old := ent("Old", "t")
	old.Extra = []byte(`"mine":1`)
	g := New()
	g.LoadEntity(old)
	newE, again := ent("New", "t", "o"), ent("Old", "t", "o2")
	newE.Extra, again.Extra = []byte(`"createdAt":"2026-01-02"`), []byte(`"theirs":2`)
	r := rel("New", "knows", "Old")
	r.Extra = []byte(`"weight":0.5`)
	if _, err := g.Import(Snapshot{Entities: []Entity{newE, again}, Relations: []Relation{r}}); err != nil {
		t.Fatal(err)
	}
	if got := string(g.Entity("New").Extra); got != `"createdAt":"2026-01-02"` {
		t.Errorf("the new entity's unknown members: %q", got)
	}
	if got := string(g.Entity("Old").Extra); got != `"mine":1` {
		t.Errorf("the existing entity's unknown members: %q", got)
	}
	if rels := g.Relations(); len(rels) != 1 || string(rels[0].Extra) != `"weight":0.5` {
		t.Errorf("the new relation: %+v", rels)
	}
}

// Relations the file holds to a name no entity has (dangling) reach the
// entity renamed to that name; one that says what a renamed relation says
// is kept once.
func TestRenameOntoDanglingRelations(t *testing.T) {
	g := New()
	g.LoadEntity(Entity{Name: "Bob", EntityType: "person"})
	g.LoadEntity(Entity{Name: "Acme", EntityType: "company"})
	g.LoadRelation(Relation{From: "Robert", To: "Acme", RelationType: "works_at"})
	g.LoadRelation(Relation{From: "Acme", To: "Robert", RelationType: "employs"})
	g.LoadRelation(Relation{From: "Bob", To: "Acme", RelationType: "works_at"})
	g.LoadRelation(Relation{From: "Bob", To: "Acme", RelationType: "likes"})
	if _, err := g.Rename("Bob", "Robert"); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, g)
	want := "Robert/person[] Acme/company[] | Robert-works_at->Acme Acme-employs->Robert Robert-likes->Acme"
	if got := describe(g.All().Snapshot()); got != want {
		t.Errorf("graph:\n got %s\nwant %s", got, want)
	}
	if out, in := g.RelationsOf("Robert"); len(out) != 2 || len(in) != 1 {
		t.Errorf("relations of Robert: %d out, %d in", len(out), len(in))
	}
}

// EntityIndex finds each entity where Entities holds it, through
// creations, deletions and renames.
func TestEntityIndex(t *testing.T) {
	g := New()
	var ents []Entity
	for i := range 40 {
		ents = append(ents, Entity{Name: fmt.Sprint("e", i), EntityType: "t"})
	}
	g.CreateEntities(ents)
	g.DeleteEntities([]string{"e0", "e7", "e39"})
	if _, err := g.Rename("e20", "twenty"); err != nil {
		t.Fatal(err)
	}
	g.CreateEntities([]Entity{{Name: "e0", EntityType: "t"}})
	for i, e := range g.Entities() {
		if got := g.EntityIndex(e.Name); got != i {
			t.Errorf("EntityIndex(%q) = %d, want %d", e.Name, got, i)
		}
	}
	for _, name := range []string{"e7", "e20", "nobody"} {
		if got := g.EntityIndex(name); got != -1 {
			t.Errorf("EntityIndex(%q) = %d, want -1", name, got)
		}
	}
}
