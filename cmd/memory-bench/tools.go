package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// Batches of the load through the tools: one create_entities call carries
// loadEntityBatch entities (about 400 kB of JSON), one create_relations
// call loadRelationBatch relations.
const (
	loadEntityBatch   = 1000
	loadRelationBatch = 2000
)

// toolsBackend gives a server the generated graph through its own tools,
// for servers that keep their memory where MEMORY_FILE_PATH cannot point
// (a SQLite database under $HOME, say). Each run gets a fresh directory as
// HOME (and a memory file in it, for servers that do read
// MEMORY_FILE_PATH), so the server starts from an empty memory; one process
// of the server is started on it, loads the graph by create_entities and
// create_relations calls, is checked with open_nodes and exits before the
// timed run starts.
type toolsBackend struct {
	command string
	client  clientOptions
	timeout time.Duration // of one call
}

func (b toolsBackend) fresh(ctx context.Context, graphFile, dir string) (*memoryCopy, error) {
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "memory.jsonl")
	env := []string{"HOME=" + home, "MEMORY_FILE_PATH=" + file, "MEMORY_DATABASE_URL="}
	if _, set := os.LookupEnv("npm_config_cache"); !set {
		// npx keeps its cache under HOME: keep using the caller's.
		if h, err := os.UserHomeDir(); err == nil {
			env = append(env, "npm_config_cache="+filepath.Join(h, ".npm"))
		}
	}
	m := &memoryCopy{
		env:    env,
		bytes:  func(context.Context) int64 { return treeBytes(home) + treeBytes(file) },
		remove: func() { os.RemoveAll(home); os.Remove(file) },
	}
	if graphFile == "" {
		return m, nil
	}
	g, err := readGraphFile(graphFile)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	p, err := startServer(ctx, b.command, env, b.client)
	if err != nil {
		m.remove()
		return nil, err
	}
	load, err := loadThroughTools(ctx, p, g, b.timeout)
	checked := 0
	if err == nil {
		checked, err = checkLoaded(ctx, p, g, b.timeout)
	}
	p.close()
	if err != nil {
		m.remove()
		return nil, fmt.Errorf("loading the graph through the server's tools: %w", err)
	}
	m.describe = fmt.Sprintf("HOME and MEMORY_FILE_PATH in a fresh directory; the server itself loaded the graph through its tools before the run: "+
		"%s entities (%s observations) and %s relations created in %d create_entities and %d create_relations calls, in %s (server start and exit included); "+
		"open_nodes gave back the types, observations and relations of %d of them; memory on disk after: %.1f MB",
		withThousands(int64(load.entities)), withThousands(int64(g.ObservationCount())), withThousands(int64(load.relations)),
		load.entityCalls, load.relationCalls, fmtDuration(time.Since(start)), checked, float64(m.bytes(ctx))/(1<<20))
	return m, nil
}

// toolsLoad counts what the server said it created.
type toolsLoad struct {
	entities, relations        int
	entityCalls, relationCalls int
}

// loadThroughTools creates g's entities, then its relations, in batches,
// and fails unless the server says it created every one of them: the
// memory must have been empty, and hold the whole graph after.
func loadThroughTools(ctx context.Context, p *serverProcess, g *testgraph.Graph, timeout time.Duration) (toolsLoad, error) {
	var l toolsLoad
	for batch := range slices.Chunk(g.Entities, loadEntityBatch) {
		items := make([]any, len(batch))
		for i, e := range batch {
			items[i] = map[string]any{"name": e.Name, "entityType": e.EntityType, "observations": e.Observations}
		}
		res, _, err := p.call(ctx, timeout, "create_entities", map[string]any{"entities": items})
		if err != nil {
			return l, fmt.Errorf("create_entities of entities %d to %d: %w", l.entities, l.entities+len(batch), err)
		}
		l.entityCalls++
		if n := countCreated(res, "entities"); n != len(batch) {
			return l, fmt.Errorf("create_entities of %d new entities (from %q) created %d: was the memory not empty?", len(batch), batch[0].Name, n)
		}
		l.entities += len(batch)
	}
	for batch := range slices.Chunk(g.Relations, loadRelationBatch) {
		items := make([]any, len(batch))
		for i, r := range batch {
			items[i] = map[string]any{"from": r.From, "to": r.To, "relationType": r.RelationType}
		}
		res, _, err := p.call(ctx, timeout, "create_relations", map[string]any{"relations": items})
		if err != nil {
			return l, fmt.Errorf("create_relations of relations %d to %d: %w", l.relations, l.relations+len(batch), err)
		}
		l.relationCalls++
		if n := countCreated(res, "relations"); n != len(batch) {
			return l, fmt.Errorf("create_relations of %d new relations created %d", len(batch), n)
		}
		l.relations += len(batch)
	}
	return l, nil
}

// checkLoaded opens a few entities spread over the graph (the first, the
// middle and the last, and the ends of the first and last relations) and
// compares what the server holds of them with the graph: type,
// observations, and the two relations. It returns how many it opened.
func checkLoaded(ctx context.Context, p *serverProcess, g *testgraph.Graph, timeout time.Duration) (int, error) {
	byName := map[string]testgraph.Entity{}
	for _, e := range g.Entities {
		byName[e.Name] = e
	}
	first, last := g.Relations[0], g.Relations[len(g.Relations)-1]
	names := []string{g.Entities[0].Name, g.Entities[len(g.Entities)/2].Name, g.Entities[len(g.Entities)-1].Name,
		first.From, first.To, last.From, last.To}
	slices.Sort(names)
	names = slices.Compact(names)

	res, _, err := p.call(ctx, timeout, "open_nodes", map[string]any{"names": names})
	if err != nil {
		return 0, fmt.Errorf("open_nodes: %w", err)
	}
	type relation struct {
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	}
	var got struct {
		Entities []struct {
			Name         string   `json:"name"`
			EntityType   string   `json:"entityType"`
			Observations []string `json:"observations"`
		} `json:"entities"`
		Relations []relation `json:"relations"`
	}
	if err := decodeStructured(res, &got); err != nil {
		return 0, fmt.Errorf("open_nodes: %w", err)
	}
	if len(got.Entities) != len(names) {
		return 0, fmt.Errorf("open_nodes of %d loaded entities returned %d", len(names), len(got.Entities))
	}
	for _, e := range got.Entities {
		want, ok := byName[e.Name]
		switch {
		case !ok:
			return 0, fmt.Errorf("open_nodes returned %q, which is not in the graph", e.Name)
		case e.EntityType != want.EntityType:
			return 0, fmt.Errorf("entity %q has type %q, want %q", e.Name, e.EntityType, want.EntityType)
		case !sameSet(e.Observations, want.Observations):
			return 0, fmt.Errorf("entity %q has observations %q, want %q", e.Name, e.Observations, want.Observations)
		}
	}
	for _, want := range []testgraph.Relation{first, last} {
		if !slices.Contains(got.Relations, relation{want.From, want.To, want.RelationType}) {
			return 0, fmt.Errorf("open_nodes did not return the relation %q -%s-> %q", want.From, want.RelationType, want.To)
		}
	}
	return len(names), nil
}

// countCreated counts what a create_entities or create_relations answer
// says it created: the field of the structured content (this server, the
// reference today), or a bare JSON array in the text (older versions of
// the reference, and servers modelled on them). -1 when it says neither.
func countCreated(res *mcp.CallToolResult, field string) int {
	if n := countField(res, field); n >= 0 {
		return n
	}
	var items []json.RawMessage
	if res.StructuredContent != nil || json.Unmarshal([]byte(firstText(res)), &items) != nil {
		return -1
	}
	return len(items)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// readGraphFile reads a memory file as written by writeGraphFile, with the
// server's own codec; a line it cannot read is an error.
func readGraphFile(path string) (*testgraph.Graph, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := jsonl.Decode(data)
	if len(f.Problems) > 0 {
		return nil, fmt.Errorf("%s: %s", path, f.Problems[0])
	}
	g := &testgraph.Graph{}
	for _, e := range f.Graph.Entities() {
		g.Entities = append(g.Entities, testgraph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: e.Observations})
	}
	for _, r := range f.Graph.Relations() {
		g.Relations = append(g.Relations, testgraph.Relation{From: r.From, To: r.To, RelationType: r.RelationType})
	}
	if len(g.Entities) == 0 || len(g.Relations) == 0 {
		return nil, fmt.Errorf("%s: no entities or no relations", path)
	}
	return g, nil
}

// treeBytes is the size of a file, or of the files under a directory.
func treeBytes(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
