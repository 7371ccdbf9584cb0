package graph

import (
	"testing"
	"time"
)

func at(s string) Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return TimeOf(t)
}

// TestLines checks the lines byte for byte: the reference's members first,
// the times after them, what the line had that this server does not know
// last, and a time member that Extra already holds not written twice.
func TestLines(t *testing.T) {
	t0, t1 := at("2026-11-30T09:15:00Z"), at("2026-12-01T10:00:00Z")
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"no times", AppendEntity(nil, &Entity{Name: "Alice", EntityType: "person", Observations: []string{"Works at Acme"}}),
			`{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme"]}`},
		{"all at creation", AppendEntity(nil, &Entity{Name: "Acme", EntityType: "company", Observations: []string{"Makes anvils"},
			Created: t0, Updated: t0, ObservedAt: []Time{t0}}),
			`{"type":"entity","name":"Acme","entityType":"company","observations":["Makes anvils"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"10d95ea4"}`},
		{"runs", AppendEntity(nil, &Entity{Name: "Alice", EntityType: "person", Observations: []string{"Works at Acme", "Likes tea"},
			Created: t0, Updated: t1, ObservedAt: []Time{t0, t1}}),
			`{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme","Likes tea"],` +
				`"createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z",` +
				`"observationTimes":["2026-11-30T09:15:00Z",1,"2026-12-01T10:00:00Z",1],"observationsHash":"82f747e6"}`},
		{"unknown creation", AppendEntity(nil, &Entity{Name: "B", EntityType: "t", Updated: t1}),
			`{"type":"entity","name":"B","entityType":"t","observations":[],"updatedAt":"2026-12-01T10:00:00Z"}`},
		{"extra holds createdAt", AppendEntity(nil, &Entity{Name: "C", EntityType: "t", Created: t0, Updated: t0, Extra: []byte(`,"createdAt":"2024-05-01"`)}),
			`{"type":"entity","name":"C","entityType":"t","observations":[],"createdAt":"2024-05-01"}`},
		{"relation", AppendRelation(nil, &Relation{From: "Alice", To: "Acme", RelationType: "works_at", Created: t0}),
			`{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at","createdAt":"2026-11-30T09:15:00Z"}`},
		{"relation extra", AppendRelation(nil, &Relation{From: "a", To: "b\n", RelationType: "r", Extra: []byte(`,"w":1`)}),
			`{"type":"relation","from":"a","to":"b\n","relationType":"r","w":1}`},
		{"record", AppendRecord(nil, &Record{ID: "01a2310c01784f3e1b", Time: t1.UTC(), Tool: "add_observations", Client: "Claude Desktop",
			Changes: []Change{
				{Kind: ObservationsAdded, Entity: Entity{Name: "Alice", Observations: []string{"Likes tea"}, Updated: t1}},
				{Kind: ObservationsDeleted, Entity: Entity{Name: "Alice", Observations: []string{"a", "b"}, Updated: t1, ObservedAt: []Time{0, t0}}},
				{Kind: RelationCreated, Relation: Relation{From: "a", To: "b", RelationType: "r"}},
				{Kind: EntityDeleted, Entity: Entity{Name: "x", EntityType: "y"}},
			}}),
			`{"id":"01a2310c01784f3e1b","time":"2026-12-01T10:00:00Z","tool":"add_observations","client":"Claude Desktop","changes":[` +
				`{"op":"addObservations","entityName":"Alice","observations":["Likes tea"],"updatedAt":"2026-12-01T10:00:00Z"},` +
				`{"op":"deleteObservations","entityName":"Alice","observations":["a","b"],"updatedAt":"2026-12-01T10:00:00Z","observedAt":[null,"2026-11-30T09:15:00Z"]},` +
				`{"op":"createRelation","relation":{"type":"relation","from":"a","to":"b","relationType":"r"}},` +
				`{"op":"deleteEntity","entity":{"type":"entity","name":"x","entityType":"y","observations":[]}}]}` + "\n"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, tt.got, tt.want)
		}
	}
}

func TestChangeKindOps(t *testing.T) {
	for k := EntityCreated; k <= RelationDeleted; k++ {
		op := k.Op()
		if got, ok := ChangeKindOf(op); op == "" || !ok || got != k {
			t.Errorf("kind %d: op %q reads back as %d, %v", k, op, got, ok)
		}
	}
	if _, ok := ChangeKindOf("renameEntity"); ok {
		t.Error("an op no record holds was read as a change kind")
	}
}
