package graph

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
)

func TestCreateEntities(t *testing.T) {
	tests := []struct {
		name        string
		existing    []Entity
		in          []Entity
		wantCreated string // describe() of the returned entities
		wantSkipped []string
		// wantRepeated: names new before the call that it gave more than once
		wantRepeated []string
		wantGraph    string
	}{
		{
			name:        "new entities are created in input order",
			in:          []Entity{ent("C", "t", "c1"), ent("A", "t"), ent("B", "u", "b1", "b2")},
			wantCreated: "C/t[c1] A/t[] B/u[b1,b2]",
			wantGraph:   "C/t[c1] A/t[] B/u[b1,b2]",
		},
		{
			name:        "existing name is skipped whole, its observations not added",
			existing:    []Entity{ent("Alice", "person", "likes tea")},
			in:          []Entity{ent("Alice", "robot", "likes oil"), ent("Bob", "person")},
			wantCreated: "Bob/person[]",
			wantSkipped: []string{"Alice"},
			wantGraph:   "Alice/person[likes tea] Bob/person[]",
		},
		{
			name:         "name repeated within one call is created once; its later entries are skipped",
			in:           []Entity{ent("Alice", "person", "a"), ent("Bob", "person"), ent("Alice", "robot", "b"), ent("Alice", "x")},
			wantCreated:  "Alice/person[a] Bob/person[]",
			wantSkipped:  []string{"Alice"},
			wantRepeated: []string{"Alice"},
			wantGraph:    "Alice/person[a] Bob/person[]",
		},
		{
			name:         "an existing name repeated is skipped once; new repeats are told apart",
			existing:     []Entity{ent("Alice", "person")},
			in:           []Entity{ent("Alice", "x"), ent("Bob", "person"), ent("Alice", "y"), ent("Bob", "z")},
			wantCreated:  "Bob/person[]",
			wantSkipped:  []string{"Alice", "Bob"},
			wantRepeated: []string{"Bob"},
			wantGraph:    "Alice/person[] Bob/person[]",
		},
		{
			name:        "skipped names are listed in input order",
			existing:    []Entity{ent("Alice", "person"), ent("Bob", "person")},
			in:          []Entity{ent("Bob", "x"), ent("Carol", "person"), ent("Alice", "x")},
			wantCreated: "Carol/person[]",
			wantSkipped: []string{"Bob", "Alice"},
			wantGraph:   "Alice/person[] Bob/person[] Carol/person[]",
		},
		{
			name:        "everything skipped returns no entities",
			existing:    []Entity{ent("Alice", "person")},
			in:          []Entity{ent("Alice", "person", "new")},
			wantCreated: "",
			wantSkipped: []string{"Alice"},
			wantGraph:   "Alice/person[]",
		},
		{
			name:        "repeated observations of a new entity are stored once",
			in:          []Entity{ent("A", "t", "x", "y", "x", "z", "y")},
			wantCreated: "A/t[x,y,z]",
			wantGraph:   "A/t[x,y,z]",
		},
		{
			name:        "names are case-sensitive",
			existing:    []Entity{ent("alice", "person")},
			in:          []Entity{ent("Alice", "person"), ent("ALICE", "person")},
			wantCreated: "Alice/person[] ALICE/person[]",
			wantGraph:   "alice/person[] Alice/person[] ALICE/person[]",
		},
		{
			name:        "nil observations become an empty list",
			in:          []Entity{{Name: "A", EntityType: "t"}},
			wantCreated: "A/t[]",
			wantGraph:   "A/t[]",
		},
		{
			name: "empty call",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, tt.existing, nil)
			res := g.CreateEntities(tt.in)
			if got := describe(Snapshot{Entities: res.Entities}); got != tt.wantCreated {
				t.Errorf("created = %q, want %q", got, tt.wantCreated)
			}
			if !reflect.DeepEqual(res.Skipped, tt.wantSkipped) {
				t.Errorf("Skipped = %#v, want %#v", res.Skipped, tt.wantSkipped)
			}
			if !reflect.DeepEqual(res.Repeated, tt.wantRepeated) {
				t.Errorf("Repeated = %#v, want %#v", res.Repeated, tt.wantRepeated)
			}
			if got := describe(g.ReadGraph()); got != tt.wantGraph {
				t.Errorf("graph afterwards = %q, want %q", got, tt.wantGraph)
			}
			for _, e := range res.Entities {
				if e.Observations == nil {
					t.Errorf("created entity %s has nil Observations; clients would read null", e.Name)
				}
			}
		})
	}
}

func TestCreateEntitiesNotice(t *testing.T) {
	tests := []struct {
		skipped, repeated []string
		want              string
	}{
		{nil, nil, ""},
		{[]string{"Alice"}, nil, "Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities."},
		{[]string{"Alice", "Bob"}, nil, "Skipped 2 entities that already exist: Alice, Bob. Their observations were not added; use add_observations for existing entities."},
		{[]string{"Bob", "Alice", "Carol"}, nil, "Skipped 3 entities that already exist: Bob, Alice, Carol. Their observations were not added; use add_observations for existing entities."},
		{[]string{"Dan"}, []string{"Dan"}, "Dan was repeated in this call: created once, from its first entry; the observations of the later entries were not added (use add_observations)."},
		{[]string{"Dan", "Eve"}, []string{"Dan", "Eve"}, "Dan, Eve were repeated in this call: each created once, from its first entry; the observations of the later entries were not added (use add_observations)."},
		{[]string{"Dan", "Alice"}, []string{"Dan"}, "Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities. Dan was repeated in this call: created once, from its first entry; the observations of the later entries were not added (use add_observations)."},
	}
	for _, tt := range tests {
		if got := (CreateEntitiesResult{Skipped: tt.skipped, Repeated: tt.repeated}).Notice(); got != tt.want {
			t.Errorf("Notice() with Skipped %v, Repeated %v = %q, want %q", tt.skipped, tt.repeated, got, tt.want)
		}
	}
}

// The notice is built from what CreateEntities really skipped: a name
// repeated in the call is never said to "already exist".
func TestCreateEntitiesNoticeFromCall(t *testing.T) {
	g := newGraph(t, []Entity{ent("Alice", "person")}, nil)
	if got, want := g.CreateEntities([]Entity{ent("Alice", "person", "x")}).Notice(),
		"Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities."; got != want {
		t.Errorf("Notice() = %q, want %q", got, want)
	}
	if got, want := g.CreateEntities([]Entity{ent("Bob", "person"), ent("Alice", "person"), ent("Bob", "person")}).Notice(),
		"Skipped 1 entity that already exists: Alice. Its observations were not added; use add_observations for existing entities. Bob was repeated in this call: created once, from its first entry; the observations of the later entries were not added (use add_observations)."; got != want {
		t.Errorf("Notice() = %q, want %q", got, want)
	}
	if got := g.CreateEntities([]Entity{ent("Carol", "person")}).Notice(); got != "" {
		t.Errorf("Notice() with nothing skipped = %q, want empty", got)
	}
}

func TestCreateEntitiesResultJSON(t *testing.T) {
	tests := []struct {
		name     string
		existing []Entity
		in       []Entity
		want     string
	}{
		{"empty call", nil, nil, `{"entities":[]}`},
		{"everything skipped", []Entity{ent("A", "t")}, []Entity{ent("A", "t")}, `{"entities":[],"skipped":["A"]}`},
		{"created, nothing skipped", nil, []Entity{ent("A", "t"), ent("B", "u", "b")},
			`{"entities":[{"name":"A","entityType":"t","observations":[]},{"name":"B","entityType":"u","observations":["b"]}]}`},
		{"created and skipped", []Entity{ent("A", "t")}, []Entity{ent("A", "t"), ent("B", "u")},
			`{"entities":[{"name":"B","entityType":"u","observations":[]}],"skipped":["A"]}`},
		{"repeated in the call: the later entry is skipped", []Entity{ent("A", "t")}, []Entity{ent("B", "u", "b1"), ent("A", "t"), ent("B", "v", "b2")},
			`{"entities":[{"name":"B","entityType":"u","observations":["b1"]}],"skipped":["A","B"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, tt.existing, nil)
			assertJSON(t, "CreateEntities result", g.CreateEntities(tt.in), tt.want)
		})
	}
}

// The caller's input is not retained: changing it afterwards changes nothing.
func TestCreateEntitiesDoesNotKeepInput(t *testing.T) {
	in := []Entity{ent("A", "t", "x", "y")}
	g := New()
	res := g.CreateEntities(in)
	in[0].Observations[0] = "changed"
	in[0].Name = "Z"
	res.Entities[0].Observations[1] = "changed too"
	if got, want := describe(g.ReadGraph()), "A/t[x,y]"; got != want {
		t.Errorf("graph after mutating the input and the result = %q, want %q", got, want)
	}
}

func TestCreateRelations(t *testing.T) {
	base := []Entity{ent("A", "t"), ent("B", "t"), ent("C", "t")}
	existing := []Relation{rel("A", "knows", "B")}
	tests := []struct {
		name        string
		in          []Relation
		wantCreated string
		wantMissing string // the entity the error names; "" for success
	}{
		{
			name:        "new relations are created in input order",
			in:          []Relation{rel("C", "knows", "A"), rel("B", "knows", "C")},
			wantCreated: "C-knows->A B-knows->C",
		},
		{
			name:        "existing relation is skipped",
			in:          []Relation{rel("A", "knows", "B"), rel("B", "knows", "C")},
			wantCreated: "B-knows->C",
		},
		{
			name:        "relation repeated within one call is skipped",
			in:          []Relation{rel("B", "knows", "C"), rel("C", "knows", "A"), rel("B", "knows", "C")},
			wantCreated: "B-knows->C C-knows->A",
		},
		{
			name:        "other type, reverse direction and self relation are distinct triples",
			in:          []Relation{rel("A", "likes", "B"), rel("B", "knows", "A"), rel("A", "knows", "A")},
			wantCreated: "A-likes->B B-knows->A A-knows->A",
		},
		{
			name: "nothing new",
			in:   []Relation{rel("A", "knows", "B")},
		},
		{
			name: "empty call",
		},
		{
			name:        "missing from fails",
			in:          []Relation{rel("Ghost", "knows", "A")},
			wantMissing: "Ghost",
		},
		{
			name:        "missing to fails",
			in:          []Relation{rel("A", "knows", "Ghost")},
			wantMissing: "Ghost",
		},
		{
			name:        "entity names are case-sensitive",
			in:          []Relation{rel("A", "knows", "b")},
			wantMissing: "b",
		},
		{
			name:        "valid relations earlier in the call are not written",
			in:          []Relation{rel("B", "knows", "C"), rel("C", "knows", "A"), rel("A", "works_at", "Acme")},
			wantMissing: "Acme",
		},
		{
			name:        "a failing relation after a duplicate",
			in:          []Relation{rel("A", "knows", "B"), rel("Nobody", "knows", "B"), rel("B", "knows", "C")},
			wantMissing: "Nobody",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, existing)
			before := g.ReadGraph()
			res, err := g.CreateRelations(tt.in)
			if tt.wantMissing != "" {
				assertNotFound(t, err, tt.wantMissing)
				if after := g.ReadGraph(); !reflect.DeepEqual(after, before) {
					t.Errorf("graph changed by a failing call:\n got %s\nwant %s", describe(after), describe(before))
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateRelations: %v", err)
			}
			if res.Relations == nil {
				t.Errorf("Relations is nil; clients would read null")
			}
			if got := describeRelations(res.Relations); got != tt.wantCreated {
				t.Errorf("created = %q, want %q", got, tt.wantCreated)
			}
			want := describeRelations(existing)
			if tt.wantCreated != "" {
				want += " " + tt.wantCreated
			}
			if got := describeRelations(g.ReadGraph().Relations); got != want {
				t.Errorf("relations afterwards = %q, want %q", got, want)
			}
		})
	}
}

// When several names are missing the error names one of them; which one is
// not part of the contract.
func TestCreateRelationsSeveralMissing(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t")}, nil)
	_, err := g.CreateRelations([]Relation{rel("X", "r", "Y"), rel("A", "r", "Z")})
	var nf *NotFoundError
	if !errors.As(err, &nf) || !slices.Contains([]string{"X", "Y", "Z"}, nf.Name) {
		t.Fatalf("err = %v, want a NotFoundError naming X, Y or Z", err)
	}
	if got := describe(g.ReadGraph()); got != "A/t[]" {
		t.Errorf("graph afterwards = %q, want unchanged", got)
	}
}

func TestCreateRelationsResultJSON(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t"), ent("B", "t")}, nil)
	res, err := g.CreateRelations([]Relation{rel("A", "works_at", "B")})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, `{"relations":[{"from":"A","to":"B","relationType":"works_at"}]}`)
	res, err = g.CreateRelations([]Relation{rel("A", "works_at", "B")})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result with nothing new", res, `{"relations":[]}`)
}

// bigEntity returns an entity with n observations o0 … o(n-1): more than 32
// puts it on the set-indexed path.
func bigEntity(name string, n int) Entity {
	e := ent(name, "big")
	for i := range n {
		e.Observations = append(e.Observations, fmt.Sprintf("o%d", i))
	}
	return e
}

func TestAddObservations(t *testing.T) {
	base := []Entity{ent("A", "t", "a1"), ent("B", "t"), bigEntity("Big", 40), bigEntity("Edge", 30)}
	tests := []struct {
		name        string
		in          []ObservationAddition
		want        string // JSON of the result; "" when the call must fail
		wantMissing string
		wantObs     map[string][]string // observations afterwards, by entity
	}{
		{
			name:    "new contents are appended in order",
			in:      []ObservationAddition{{"A", []string{"a2", "a3"}}},
			want:    `{"results":[{"entityName":"A","addedObservations":["a2","a3"]}]}`,
			wantObs: map[string][]string{"A": {"a1", "a2", "a3"}},
		},
		{
			name:    "contents already on the entity are skipped",
			in:      []ObservationAddition{{"A", []string{"a1", "a2"}}},
			want:    `{"results":[{"entityName":"A","addedObservations":["a2"]}]}`,
			wantObs: map[string][]string{"A": {"a1", "a2"}},
		},
		{
			name:    "contents repeated within one item are added once",
			in:      []ObservationAddition{{"A", []string{"x", "y", "x"}}},
			want:    `{"results":[{"entityName":"A","addedObservations":["x","y"]}]}`,
			wantObs: map[string][]string{"A": {"a1", "x", "y"}},
		},
		{
			name:    "two items for the same entity",
			in:      []ObservationAddition{{"A", []string{"x"}}, {"A", []string{"x", "y"}}},
			want:    `{"results":[{"entityName":"A","addedObservations":["x"]},{"entityName":"A","addedObservations":["y"]}]}`,
			wantObs: map[string][]string{"A": {"a1", "x", "y"}},
		},
		{
			name:    "nothing added reports an empty list, not null",
			in:      []ObservationAddition{{"A", []string{"a1"}}, {"B", nil}},
			want:    `{"results":[{"entityName":"A","addedObservations":[]},{"entityName":"B","addedObservations":[]}]}`,
			wantObs: map[string][]string{"A": {"a1"}, "B": {}},
		},
		{
			name:    "results follow input order, not graph order",
			in:      []ObservationAddition{{"B", []string{"b"}}, {"A", []string{"a1"}}},
			want:    `{"results":[{"entityName":"B","addedObservations":["b"]},{"entityName":"A","addedObservations":[]}]}`,
			wantObs: map[string][]string{"A": {"a1"}, "B": {"b"}},
		},
		{
			name:    "observations are case-sensitive",
			in:      []ObservationAddition{{"A", []string{"A1"}}},
			want:    `{"results":[{"entityName":"A","addedObservations":["A1"]}]}`,
			wantObs: map[string][]string{"A": {"a1", "A1"}},
		},
		{
			name:    "empty call",
			want:    `{"results":[]}`,
			wantObs: map[string][]string{"A": {"a1"}},
		},
		{
			name:    "entity with more than 32 observations behaves the same",
			in:      []ObservationAddition{{"Big", []string{"o5", "new", "new", "o39"}}, {"Big", []string{"new", "newer"}}},
			want:    `{"results":[{"entityName":"Big","addedObservations":["new"]},{"entityName":"Big","addedObservations":["newer"]}]}`,
			wantObs: map[string][]string{"Big": append(bigEntity("", 40).Observations, "new", "newer")},
		},
		{
			name: "entity crossing 32 observations within one call",
			in: []ObservationAddition{
				{"Edge", []string{"n1", "n2", "n3", "o0", "n4", "n1", "o29", "n5"}},
				{"Edge", []string{"n2", "n5", "n6", "o17"}},
			},
			want:    `{"results":[{"entityName":"Edge","addedObservations":["n1","n2","n3","n4","n5"]},{"entityName":"Edge","addedObservations":["n6"]}]}`,
			wantObs: map[string][]string{"Edge": append(bigEntity("", 30).Observations, "n1", "n2", "n3", "n4", "n5", "n6")},
		},
		{
			name:        "missing entity fails the whole call",
			in:          []ObservationAddition{{"A", []string{"a2"}}, {"Ghost", []string{"g"}}, {"B", []string{"b"}}},
			wantMissing: "Ghost",
		},
		{
			name:        "entity names are case-sensitive",
			in:          []ObservationAddition{{"a", []string{"x"}}},
			wantMissing: "a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, nil)
			before := g.ReadGraph()
			res, err := g.AddObservations(tt.in)
			if tt.wantMissing != "" {
				assertNotFound(t, err, tt.wantMissing)
				if after := g.ReadGraph(); !reflect.DeepEqual(after, before) {
					t.Errorf("graph changed by a failing call:\n got %s\nwant %s", describe(after), describe(before))
				}
				return
			}
			if err != nil {
				t.Fatalf("AddObservations: %v", err)
			}
			assertJSON(t, "result", res, tt.want)
			for name, want := range tt.wantObs {
				got := openNodes(g, []string{name}).Entities
				if len(got) != 1 || !slices.Equal(got[0].Observations, want) {
					t.Errorf("%s afterwards = %v, want observations %q", name, got, want)
				}
			}
		})
	}
}

// An entity past 32 observations keeps an index of them; deleting and adding
// again must keep that index and the list in step.
func TestLargeEntityObservations(t *testing.T) {
	g := newGraph(t, []Entity{bigEntity("Big", 40)}, nil)
	del := g.DeleteObservations([]ObservationDeletion{{"Big", []string{"o5", "o39", "o0"}}})
	if *del.DeletedCount != 3 {
		t.Fatalf("DeletedCount = %d, want 3", *del.DeletedCount)
	}
	del = g.DeleteObservations([]ObservationDeletion{{"Big", []string{"o5"}}})
	if *del.DeletedCount != 0 || del.Message != "Deleted 0 of 1 observations." {
		t.Errorf("deleting o5 again = %d, %q; want 0, %q", *del.DeletedCount, del.Message, "Deleted 0 of 1 observations.")
	}
	res, err := g.AddObservations([]ObservationAddition{{"Big", []string{"o5", "o6", "o5"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Results[0].AddedObservations; !slices.Equal(got, []string{"o5"}) {
		t.Errorf("re-adding o5, o6 added %q, want [o5]", got)
	}
	// Shrink below the threshold and grow again.
	var most []string
	for i := 1; i < 39; i++ {
		most = append(most, fmt.Sprintf("o%d", i))
	}
	g.DeleteObservations([]ObservationDeletion{{"Big", most}})
	res, err = g.AddObservations([]ObservationAddition{{"Big", []string{"o7", "o7", "o0", "o1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Results[0].AddedObservations; !slices.Equal(got, []string{"o7", "o0", "o1"}) {
		t.Errorf("added %q, want [o7 o0 o1]", got)
	}
	if got, want := describe(g.ReadGraph()), "Big/big[o7,o0,o1]"; got != want {
		t.Errorf("graph = %q, want %q", got, want)
	}
}

func TestDeleteEntities(t *testing.T) {
	base := []Entity{ent("A", "t"), ent("B", "t"), ent("C", "t"), ent("D", "t")}
	rels := []Relation{rel("A", "r", "B"), rel("B", "r", "C"), rel("C", "r", "A"), rel("C", "r", "D"), rel("D", "self", "D"), rel("A", "s", "C")}
	tests := []struct {
		name      string
		in        []string
		want      string // JSON of the result
		wantGraph string
	}{
		{
			name:      "relations from and to the entity go with it",
			in:        []string{"B"},
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "A/t[] C/t[] D/t[] | C-r->A C-r->D D-self->D A-s->C",
		},
		{
			name:      "self relation goes with the entity",
			in:        []string{"D"},
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "A/t[] B/t[] C/t[] | A-r->B B-r->C C-r->A A-s->C",
		},
		{
			name:      "several entities, a relation between them",
			in:        []string{"C", "A"},
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "B/t[] D/t[] | D-self->D",
		},
		{
			name:      "unknown names are reported, not an error",
			in:        []string{"A", "X", "Y"},
			want:      `{"success":true,"message":"Deleted 1 of 3 entities. Not found: X, Y","notFound":["X","Y"]}`,
			wantGraph: "B/t[] C/t[] D/t[] | B-r->C C-r->D D-self->D",
		},
		{
			name:      "nothing found",
			in:        []string{"X"},
			want:      `{"success":true,"message":"Deleted 0 of 1 entities. Not found: X","notFound":["X"]}`,
			wantGraph: "A/t[] B/t[] C/t[] D/t[] | A-r->B B-r->C C-r->A C-r->D D-self->D A-s->C",
		},
		{
			name:      "repeated names count once",
			in:        []string{"A", "X", "A", "X", "a"},
			want:      `{"success":true,"message":"Deleted 1 of 3 entities. Not found: X, a","notFound":["X","a"]}`,
			wantGraph: "B/t[] C/t[] D/t[] | B-r->C C-r->D D-self->D",
		},
		{
			name:      "repeated names, all found",
			in:        []string{"B", "B"},
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "A/t[] C/t[] D/t[] | C-r->A C-r->D D-self->D A-s->C",
		},
		{
			name:      "empty call",
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "A/t[] B/t[] C/t[] D/t[] | A-r->B B-r->C C-r->A C-r->D D-self->D A-s->C",
		},
		{
			name:      "everything",
			in:        []string{"D", "C", "B", "A"},
			want:      `{"success":true,"message":"Entities deleted successfully"}`,
			wantGraph: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, rels)
			assertJSON(t, "result", g.DeleteEntities(tt.in), tt.want)
			if got := describe(g.ReadGraph()); got != tt.wantGraph {
				t.Errorf("graph afterwards = %q, want %q", got, tt.wantGraph)
			}
		})
	}
}

// A deleted name is free again: the new entity goes to the end of graph
// order, starts with only its own observations and none of the old
// relations come back.
func TestDeleteEntitiesThenRecreate(t *testing.T) {
	g := newGraph(t,
		[]Entity{ent("A", "t", "old"), ent("B", "t"), ent("C", "t")},
		[]Relation{rel("A", "r", "B"), rel("C", "r", "A"), rel("B", "r", "C")})
	g.DeleteEntities([]string{"A"})
	res := g.CreateEntities([]Entity{ent("A", "u", "new")})
	if res.Skipped != nil {
		t.Fatalf("re-creating a deleted name skipped %v", res.Skipped)
	}
	if got, want := describe(g.ReadGraph()), "B/t[] C/t[] A/u[new] | B-r->C"; got != want {
		t.Errorf("graph = %q, want %q", got, want)
	}
	if _, err := g.CreateRelations([]Relation{rel("A", "r", "B")}); err != nil {
		t.Fatal(err)
	}
	if got, want := describe(g.ReadGraph()), "B/t[] C/t[] A/u[new] | B-r->C A-r->B"; got != want {
		t.Errorf("graph = %q, want %q", got, want)
	}
}

func TestDeleteObservations(t *testing.T) {
	base := []Entity{ent("A", "t", "a1", "a2", "a3"), ent("B", "t", "b1", "a1")}
	tests := []struct {
		name      string
		in        []ObservationDeletion
		want      string // JSON of the result
		wantGraph string
	}{
		{
			name:      "every requested observation removed",
			in:        []ObservationDeletion{{"A", []string{"a1", "a3"}}},
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":2}`,
			wantGraph: "A/t[a2] B/t[b1,a1]",
		},
		{
			name:      "remaining observations keep their order",
			in:        []ObservationDeletion{{"A", []string{"a2"}}},
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":1}`,
			wantGraph: "A/t[a1,a3] B/t[b1,a1]",
		},
		{
			name:      "unknown observations are counted, not an error",
			in:        []ObservationDeletion{{"A", []string{"a1", "zz", "A2"}}},
			want:      `{"success":true,"message":"Deleted 1 of 3 observations.","deletedCount":1}`,
			wantGraph: "A/t[a2,a3] B/t[b1,a1]",
		},
		{
			name:      "unknown entities are listed",
			in:        []ObservationDeletion{{"A", []string{"a1"}}, {"X", []string{"x1", "x2"}}, {"Y", []string{"y"}}},
			want:      `{"success":true,"message":"Deleted 1 of 4 observations. Entities not found: X, Y","deletedCount":1}`,
			wantGraph: "A/t[a2,a3] B/t[b1,a1]",
		},
		{
			name:      "an unknown entity named twice is listed once",
			in:        []ObservationDeletion{{"X", []string{"x"}}, {"A", []string{"a9"}}, {"X", []string{"y"}}},
			want:      `{"success":true,"message":"Deleted 0 of 3 observations. Entities not found: X","deletedCount":0}`,
			wantGraph: "A/t[a1,a2,a3] B/t[b1,a1]",
		},
		{
			name:      "a repeated entity and observation pair counts once",
			in:        []ObservationDeletion{{"A", []string{"a1", "a1"}}, {"A", []string{"a1", "a2"}}},
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":2}`,
			wantGraph: "A/t[a3] B/t[b1,a1]",
		},
		{
			name:      "the same text on two entities counts twice",
			in:        []ObservationDeletion{{"A", []string{"a1"}}, {"B", []string{"a1"}}},
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":2}`,
			wantGraph: "A/t[a2,a3] B/t[b1]",
		},
		{
			name:      "an observation only on another entity is not removed",
			in:        []ObservationDeletion{{"B", []string{"a2"}}},
			want:      `{"success":true,"message":"Deleted 0 of 1 observations.","deletedCount":0}`,
			wantGraph: "A/t[a1,a2,a3] B/t[b1,a1]",
		},
		{
			name:      "every observation of an entity",
			in:        []ObservationDeletion{{"B", []string{"a1", "b1"}}},
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":2}`,
			wantGraph: "A/t[a1,a2,a3] B/t[]",
		},
		{
			name:      "empty call",
			want:      `{"success":true,"message":"Observations deleted successfully","deletedCount":0}`,
			wantGraph: "A/t[a1,a2,a3] B/t[b1,a1]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, nil)
			assertJSON(t, "result", g.DeleteObservations(tt.in), tt.want)
			if got := describe(g.ReadGraph()); got != tt.wantGraph {
				t.Errorf("graph afterwards = %q, want %q", got, tt.wantGraph)
			}
		})
	}
}

func TestDeleteRelations(t *testing.T) {
	base := []Entity{ent("A", "t"), ent("B", "t"), ent("C", "t")}
	rels := []Relation{rel("A", "knows", "B"), rel("B", "knows", "C"), rel("A", "likes", "C")}
	tests := []struct {
		name     string
		in       []Relation
		want     string // JSON of the result
		wantRels string
	}{
		{
			name:     "every requested relation removed",
			in:       []Relation{rel("A", "knows", "B"), rel("A", "likes", "C")},
			want:     `{"success":true,"message":"Relations deleted successfully","deletedCount":2}`,
			wantRels: "B-knows->C",
		},
		{
			name:     "unknown relations are counted, not an error",
			in:       []Relation{rel("A", "knows", "B"), rel("A", "likes", "B"), rel("B", "knows", "A"), rel("X", "knows", "Y")},
			want:     `{"success":true,"message":"Deleted 1 of 4 relations. The rest matched nothing.","deletedCount":1}`,
			wantRels: "B-knows->C A-likes->C",
		},
		{
			name:     "nothing matched",
			in:       []Relation{rel("A", "Knows", "B")},
			want:     `{"success":true,"message":"Deleted 0 of 1 relations. The rest matched nothing.","deletedCount":0}`,
			wantRels: "A-knows->B B-knows->C A-likes->C",
		},
		{
			name:     "a repeated relation counts once",
			in:       []Relation{rel("B", "knows", "C"), rel("B", "knows", "C")},
			want:     `{"success":true,"message":"Relations deleted successfully","deletedCount":1}`,
			wantRels: "A-knows->B A-likes->C",
		},
		{
			name:     "a repeated unknown relation counts once",
			in:       []Relation{rel("C", "knows", "B"), rel("C", "knows", "B"), rel("B", "knows", "C")},
			want:     `{"success":true,"message":"Deleted 1 of 2 relations. The rest matched nothing.","deletedCount":1}`,
			wantRels: "A-knows->B A-likes->C",
		},
		{
			name:     "empty call",
			want:     `{"success":true,"message":"Relations deleted successfully","deletedCount":0}`,
			wantRels: "A-knows->B B-knows->C A-likes->C",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, rels)
			assertJSON(t, "result", g.DeleteRelations(tt.in), tt.want)
			got := g.ReadGraph()
			if d := describeRelations(got.Relations); d != tt.wantRels {
				t.Errorf("relations afterwards = %q, want %q", d, tt.wantRels)
			}
			if n := len(got.Entities); n != 3 {
				t.Errorf("%d entities afterwards, want all 3 kept", n)
			}
		})
	}
}

// A deleted relation can be created again; it goes to the end of graph order.
func TestDeleteRelationsThenRecreate(t *testing.T) {
	g := newGraph(t, []Entity{ent("A", "t"), ent("B", "t")}, []Relation{rel("A", "r", "B"), rel("B", "r", "A")})
	g.DeleteRelations([]Relation{rel("A", "r", "B")})
	res, err := g.CreateRelations([]Relation{rel("A", "r", "B")})
	if err != nil {
		t.Fatal(err)
	}
	if got := describeRelations(res.Relations); got != "A-r->B" {
		t.Errorf("created %q, want A-r->B", got)
	}
	if got, want := describe(g.ReadGraph()), "A/t[] B/t[] | B-r->A A-r->B"; got != want {
		t.Errorf("graph = %q, want %q", got, want)
	}
}

func TestReadGraphOrder(t *testing.T) {
	g := New()
	if got := mustJSON(t, g.ReadGraph()); got != `{"entities":[],"relations":[]}` {
		t.Errorf("empty graph = %s, want empty lists", got)
	}
	g.CreateEntities([]Entity{ent("A", "t"), ent("B", "t"), ent("C", "t")})
	g.CreateRelations([]Relation{rel("A", "r", "C"), rel("C", "r", "A"), rel("A", "r", "B")})
	g.DeleteEntities([]string{"B"})
	g.CreateEntities([]Entity{ent("D", "t"), ent("B", "u")})
	g.DeleteRelations([]Relation{rel("A", "r", "C")})
	g.CreateRelations([]Relation{rel("B", "r", "D"), rel("A", "r", "C")})
	g.AddObservations([]ObservationAddition{{"A", []string{"later"}}})
	want := "A/t[later] C/t[] D/t[] B/u[] | C-r->A B-r->D A-r->C"
	if got := describe(g.ReadGraph()); got != want {
		t.Errorf("graph = %q, want %q", got, want)
	}
	if e, r := g.Len(); e != 4 || r != 3 {
		t.Errorf("Len() = %d, %d; want 4, 3", e, r)
	}
}

// Snapshots and results are the caller's: later changes to the graph do not
// show through them, and changing them does not change the graph.
func TestResultsAreCopies(t *testing.T) {
	reads := []struct {
		name string
		read func(g *Graph) []Entity
	}{
		{"ReadGraph", func(g *Graph) []Entity { return g.ReadGraph().Entities }},
		{"OpenNodes", func(g *Graph) []Entity { return openNodes(g, []string{"A"}).Entities }},
		{"SearchNodes", func(g *Graph) []Entity { return searchNodes(g, "A").Entities }},
		{"CreateEntities", func(g *Graph) []Entity {
			g.DeleteEntities([]string{"A"})
			return g.CreateEntities([]Entity{ent("A", "t", "o1", "o2", "o3")}).Entities
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			g := newGraph(t, []Entity{ent("A", "t", "o1", "o2", "o3")}, nil)
			got := r.read(g)
			if len(got) != 1 {
				t.Fatalf("got %d entities, want 1", len(got))
			}
			g.DeleteObservations([]ObservationDeletion{{"A", []string{"o1"}}})
			g.AddObservations([]ObservationAddition{{"A", []string{"o4", "o5"}}})
			if want := []string{"o1", "o2", "o3"}; !slices.Equal(got[0].Observations, want) {
				t.Errorf("snapshot observations after changing the graph = %q, want %q", got[0].Observations, want)
			}
			got[0].Observations[0] = "scribbled"
			got[0].Observations = append(got[0].Observations, "appended")
			got[0].Name = "Renamed"
			if d, want := describe(g.ReadGraph()), "A/t[o2,o3,o4,o5]"; d != want {
				t.Errorf("graph after changing the snapshot = %q, want %q", d, want)
			}
		})
	}
}

func TestOpenNodes(t *testing.T) {
	base := []Entity{ent("A", "t", "a"), ent("B", "t"), ent("C", "t"), ent("D", "t")}
	rels := []Relation{rel("A", "r", "B"), rel("B", "r", "C"), rel("C", "r", "A"), rel("A", "r", "D"), rel("D", "self", "D"), rel("C", "s", "A")}
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"graph order regardless of the order of names", []string{"C", "A"}, "A/t[a] C/t[] | C-r->A C-s->A"},
		{"unknown names are skipped", []string{"X", "B", "Y"}, "B/t[]"},
		{"repeated names are returned once", []string{"B", "A", "A", "B"}, "A/t[a] B/t[] | A-r->B"},
		{"relations among the returned entities only, in graph order", []string{"A", "B", "C"}, "A/t[a] B/t[] C/t[] | A-r->B B-r->C C-r->A C-s->A"},
		{"self relation", []string{"D"}, "D/t[] | D-self->D"},
		{"relation out of the set is left out", []string{"A", "D"}, "A/t[a] D/t[] | A-r->D D-self->D"},
		{"names are case-sensitive", []string{"a", "b"}, ""},
		{"no names", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, base, rels)
			if got := describe(openNodes(g, tt.in)); got != tt.want {
				t.Errorf("OpenNodes(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	g := newGraph(t, base, rels)
	assertJSON(t, "OpenNodes of nothing", openNodes(g, []string{"X"}), `{"entities":[],"relations":[]}`)
}

// Storage loads what the file holds: entity lines with one name merge (first
// type, union of observations) and relations may name missing entities.
func TestLoadedGraph(t *testing.T) {
	g := New()
	a, merged := g.LoadEntity(ent("A", "first", "x", "y", "x"))
	if merged || a != g.Entity("A") {
		t.Errorf("first A: merged %v, entity %p, want false and the graph's %p", merged, a, g.Entity("A"))
	}
	if a2, merged := g.LoadEntity(ent("A", "second", "y", "z")); !merged || a2 != a {
		t.Errorf("second A: merged %v, entity %p, want true and the first A %p", merged, a2, a)
	}
	g.LoadEntity(ent("B", "t"))
	ab, dup1 := g.LoadRelation(rel("A", "r", "B"))
	_, dup2 := g.LoadRelation(rel("A", "r", "Ghost"))
	if dup1 || dup2 {
		t.Errorf("new relations reported as duplicates")
	}
	if ab != g.Relations()[0] {
		t.Errorf("LoadRelation returned %p, not the graph's relation %p", ab, g.Relations()[0])
	}
	if ab2, dup := g.LoadRelation(rel("A", "r", "B")); !dup || ab2 != ab {
		t.Errorf("repeated relation: duplicate %v, relation %p, want true and the first %p", dup, ab2, ab)
	}
	if got, want := describe(g.ReadGraph()), "A/first[x,y,z] B/t[] | A-r->B A-r->Ghost"; got != want {
		t.Errorf("loaded graph = %q, want %q", got, want)
	}
	if got, want := describe(searchNodes(g, "z")), "A/first[x,y,z] | A-r->B A-r->Ghost"; got != want {
		t.Errorf("search after a merge = %q, want %q", got, want)
	}
	if got, want := describe(openNodes(g, []string{"A", "Ghost"})), "A/first[x,y,z]"; got != want {
		t.Errorf("OpenNodes = %q, want %q", got, want)
	}
	g.DeleteEntities([]string{"A"})
	if got, want := describe(g.ReadGraph()), "B/t[]"; got != want {
		t.Errorf("after deleting A = %q, want %q", got, want)
	}
}

// The package promises that read-only calls may run at once; -race checks.
func TestConcurrentReaders(t *testing.T) {
	g := newGraph(t,
		[]Entity{ent("Alice", "person", "likes tea"), ent("Bob", "person", "ＰＹＴＨＯＮ"), ent("Москва", "city")},
		[]Relation{rel("Alice", "knows", "Bob"), rel("Bob", "lives_in", "Москва")})
	want := describe(searchNodes(g, "python"))
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for range 50 {
				switch i % 6 {
				case 4:
					r := g.SearchRanked("who knows python", 0)
					if len(r.Hits) == 0 || r.Hits[0].Entity.Name != "Bob" {
						t.Errorf("concurrent ranked search = %q, want Bob first", hitNames(r))
					}
					for _, h := range r.Hits {
						h.Observations()
					}
				case 5:
					g.Neighbours([]string{"Alice"}, 2)
				case 0:
					if got := describe(searchNodes(g, "python")); got != want {
						t.Errorf("concurrent search = %q, want %q", got, want)
					}
				case 1:
					g.ReadGraph()
				case 2:
					openNodes(g, []string{"Bob", "Alice"})
				default:
					for _, e := range g.Entities() {
						_ = e.Name
					}
					g.Len()
				}
			}
		})
	}
	wg.Wait()
}

// Version is how the server learns whether a call changed the graph (to save
// and to notify subscribers): it must move exactly when something changed.
func TestVersion(t *testing.T) {
	tests := []struct {
		name    string
		call    func(g *Graph)
		changed bool
	}{
		{"create_entities, new", func(g *Graph) { g.CreateEntities([]Entity{ent("C", "t")}) }, true},
		{"create_entities, all skipped", func(g *Graph) { g.CreateEntities([]Entity{ent("A", "t", "new")}) }, false},
		{"create_entities, empty", func(g *Graph) { g.CreateEntities(nil) }, false},
		{"create_relations, new", func(g *Graph) { g.CreateRelations([]Relation{rel("B", "r", "A")}) }, true},
		{"create_relations, all existing", func(g *Graph) { g.CreateRelations([]Relation{rel("A", "r", "B")}) }, false},
		{"create_relations, failing", func(g *Graph) { g.CreateRelations([]Relation{rel("B", "r", "A"), rel("A", "r", "X")}) }, false},
		{"add_observations, new", func(g *Graph) { g.AddObservations([]ObservationAddition{{"A", []string{"a2"}}}) }, true},
		{"add_observations, nothing new", func(g *Graph) { g.AddObservations([]ObservationAddition{{"A", []string{"a1"}}}) }, false},
		{"add_observations, failing", func(g *Graph) {
			g.AddObservations([]ObservationAddition{{"A", []string{"a2"}}, {"X", []string{"x"}}})
		}, false},
		{"delete_entities, found", func(g *Graph) { g.DeleteEntities([]string{"B"}) }, true},
		{"delete_entities, none found", func(g *Graph) { g.DeleteEntities([]string{"X"}) }, false},
		{"delete_observations, found", func(g *Graph) { g.DeleteObservations([]ObservationDeletion{{"A", []string{"a1"}}}) }, true},
		{"delete_observations, none found", func(g *Graph) {
			g.DeleteObservations([]ObservationDeletion{{"A", []string{"zz"}}, {"X", []string{"a1"}}})
		}, false},
		{"delete_relations, found", func(g *Graph) { g.DeleteRelations([]Relation{rel("A", "r", "B")}) }, true},
		{"delete_relations, none found", func(g *Graph) { g.DeleteRelations([]Relation{rel("B", "r", "A")}) }, false},
		{"reads", func(g *Graph) {
			g.ReadGraph()
			openNodes(g, []string{"A"})
			searchNodes(g, "a")
			g.SearchRanked("a b", 0)
			g.Neighbours([]string{"A"}, 1)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, []Entity{ent("A", "t", "a1"), ent("B", "t")}, []Relation{rel("A", "r", "B")})
			before := g.Version()
			tt.call(g)
			if changed := g.Version() != before; changed != tt.changed {
				t.Errorf("Version changed = %v, want %v", changed, tt.changed)
			}
		})
	}
}
