package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestInteropTakingTurnsLosesNothing runs our server and the reference on
// one file at once, writing in turns: each writes an entity and a
// relation to the other's last entity, then waits until the file shows
// its write before the other writes. The reference writes right after our
// compaction renamed its file into place, while the compaction still
// moves the journal to the history: no write of either is ever lost.
func TestInteropTakingTurnsLosesNothing(t *testing.T) {
	requireReference(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ours := startServer(t, file, sharingVersion, nil, "MCP_SERVER_MEMORY_COMPACT_IDLE=2ms")
	ref := startReference(t, file)
	turns := 20
	if testing.Short() {
		turns = 6
	}
	var wantEntities, wantRelations []string
	write := func(p *serverProcess, name, other string) {
		t.Helper()
		wantEntities = append(wantEntities, name)
		if !p.mustCall(ctx, t, "create_entities", createEntitiesArgs(entityArg(name, "turn", "written by "+name))) {
			t.FailNow()
		}
		if other != "" {
			wantRelations = append(wantRelations, name+">"+other)
			if !p.mustCall(ctx, t, "create_relations", map[string]any{"relations": []map[string]any{relationArg(name, other, "follows")}}) {
				t.FailNow()
			}
		}
		// The other waits until the file shows this write.
		mark := []byte(fmt.Sprintf(`"name":%q`, name))
		if other != "" {
			mark = []byte(fmt.Sprintf(`"from":%q,"to":%q`, name, other))
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if data, _ := os.ReadFile(file); bytes.Contains(data, mark) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the file never showed %s", mark)
			}
		}
	}
	last := ""
	for i := range turns {
		o, r := fmt.Sprintf("Ours%d", i), fmt.Sprintf("Theirs%d", i)
		write(ours, o, last)
		write(ref, r, o)
		last = r
	}
	slices.Sort(wantEntities)
	slices.Sort(wantRelations)
	for _, p := range []struct {
		who string
		p   *serverProcess
	}{{"our server", ours}, {"the reference", ref}} {
		g := typedGraph(t, p.p.readGraph(ctx, t))
		var entities, relations []string
		for _, e := range g.Entities {
			entities = append(entities, e.Name)
		}
		for _, r := range g.Relations {
			relations = append(relations, r.From+">"+r.To)
		}
		slices.Sort(entities)
		slices.Sort(relations)
		if !slices.Equal(entities, wantEntities) || !slices.Equal(relations, wantRelations) {
			t.Errorf("%s serves entities %q and relations %q,\nwant %q and %q", p.who, entities, relations, wantEntities, wantRelations)
		}
	}
}
