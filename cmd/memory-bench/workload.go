package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// runSettings bound how long each tool is measured.
type runSettings struct {
	iters       int           // measured calls per tool at most
	minIters    int           // measured calls per tool at least (time allowing)
	budget      time.Duration // stop a tool once minIters are done and this has passed
	gap         time.Duration // a pause before each measured call
	warmups     int           // unmeasured calls per tool first
	callTimeout time.Duration // one call longer than this fails
	starts      int           // process starts timed (start-to-first-answer)
	skip        []string      // labels of tool rows not to run (substrings)
	writes      int           // one-entity writes before the RSS comparison; 0 skips it
	client      clientOptions
}

// ToolResult is what one row of the table reports for one server.
type ToolResult struct {
	Label      string `json:"label"`
	Tool       string `json:"tool"`
	Calls      int    `json:"calls"`
	Errors     int    `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
	// Samples are the latencies as the client sees them; WireSamples end
	// at the answer's last byte instead (see serverProcess.call).
	Samples     []time.Duration `json:"-"`
	WireSamples []time.Duration `json:"-"`
	Latency     Summary         `json:"-"`
	Wire        Summary         `json:"-"`
	// Entities is how many entities the last successful answer held
	// (search_nodes, open_nodes, read_graph), -1 when not applicable.
	Entities int `json:"entities"`
	// Problems describe wrong answers (not errors): counts that differ from
	// what the workload knows the graph holds; the first few distinct ones.
	// WrongAnswers of Checked answers (warm-ups included) were wrong.
	Problems     []string `json:"problems,omitempty"`
	WrongAnswers int      `json:"wrongAnswers"`
	Checked      int      `json:"checked"`
	Note         string   `json:"note,omitempty"`
	// AnswerBytes is the largest answer, in bytes on the pipe.
	AnswerBytes int64 `json:"-"`
}

// RunResult is one server's run against one graph size.
type RunResult struct {
	StartSamples []time.Duration `json:"-"`
	Start        Summary         `json:"-"`
	Error        string          `json:"error,omitempty"`
	Memory       memoryPeak      `json:"memory"`
	// LoadBefore and LoadAfter are the machine's 1-minute load average:
	// other work on the machine makes latencies noisy.
	LoadBefore string        `json:"loadBefore"`
	LoadAfter  string        `json:"loadAfter"`
	Tools      []*ToolResult `json:"tools"`
	// Writes is the resident set after --writes small writes, beside a
	// fresh server's on the same memory; nil with --writes 0.
	Writes *WritesResult `json:"writes,omitempty"`
	// Store is where the run's memory was: "file" or "postgres";
	// MemoryNote says more (the database, the import).
	Store      string `json:"store"`
	MemoryNote string `json:"memoryNote,omitempty"`
	// Backends is the memory of the PostgreSQL backends that served the
	// run (not in the server's process tree); nil for a file.
	Backends *backendPeak `json:"postgresBackends,omitempty"`
}

// workload is the sequence of tool calls made against one server for one
// graph. Its writes are bounded by the number of calls: create_entities uses
// fresh names, create_relations fresh relation types, and
// delete_observations removes what add_observations added.
type workload struct {
	graph   *testgraph.Graph
	queries testgraph.Queries
	rng     *rand.Rand

	added           []observationRef // by add_observations, not yet deleted
	pendingAdd      observationRef   // sent by add_observations, not yet answered
	createdEntities int
	createdRels     int
	counter         int // makes every written name and text unique in the run
}

type observationRef struct{ entity, text string }

func newWorkload(g *testgraph.Graph, q testgraph.Queries, seed uint64) *workload {
	return &workload{graph: g, queries: q, rng: rand.New(rand.NewPCG(seed, 0x776f726b6c6f6164))}
}

// toolCase is one row of the benchmark: a tool and how to call it.
type toolCase struct {
	label string
	tool  string
	// args returns the arguments of the next call, or ok=false when the
	// case has nothing left to do (delete_observations with nothing added).
	args func() (args map[string]any, ok bool)
	// check inspects a successful answer; it returns a problem description
	// when the answer is wrong, and the entity count it saw (-1 if none).
	check func(res *mcp.CallToolResult) (entities int, problem string)
}

// cases are the rows of the benchmark, in the order they run: the reads,
// then the writes (delete_observations deletes what add_observations
// added), then read_graph, which sees what the writes made.
func (w *workload) cases() []toolCase {
	return []toolCase{
		w.openNodesCase(),
		w.searchCase("rare", w.queries.Rare),
		w.searchCase("common", w.queries.Common),
		w.searchCase("two words", w.queries.TwoWords),
		w.searchCase("Japanese", w.queries.Japanese),
		w.addObservationsCase(),
		w.createEntitiesCase(),
		w.createRelationsCase(),
		w.deleteObservationsCase(),
		w.readGraphCase(),
	}
}

// searchCase searches for query and checks that no entity containing it
// is missing from the answer.
func (w *workload) searchCase(label, query string) toolCase {
	want := w.graph.CountMatches(query)
	return toolCase{
		label: fmt.Sprintf("search_nodes %s %q (%d)", label, query, want),
		tool:  "search_nodes",
		args:  func() (map[string]any, bool) { return map[string]any{"query": query}, true },
		check: func(res *mcp.CallToolResult) (int, string) {
			got := countField(res, "entities")
			if got < want {
				return got, fmt.Sprintf("returned %d entities; %d contain %q", got, want, query)
			}
			return got, ""
		},
	}
}

// openNodesCase opens three existing entities by name.
func (w *workload) openNodesCase() toolCase {
	return toolCase{
		label: "open_nodes (3 names)",
		tool:  "open_nodes",
		args:  func() (map[string]any, bool) { return map[string]any{"names": w.pickNames(3)}, true },
		check: func(res *mcp.CallToolResult) (int, string) {
			got := countField(res, "entities")
			if got != 3 {
				return got, fmt.Sprintf("returned %d entities for 3 existing names", got)
			}
			return got, ""
		},
	}
}

// addObservationsCase adds one observation on an existing entity,
// remembered for delete_observations.
func (w *workload) addObservationsCase() toolCase {
	return toolCase{
		label: "add_observations (1)",
		tool:  "add_observations",
		args: func() (map[string]any, bool) {
			w.counter++
			ref := observationRef{
				entity: w.pickNames(1)[0],
				text:   fmt.Sprintf("Benchmark note %d: asked for a follow-up call next week", w.counter),
			}
			w.pendingAdd = ref
			return map[string]any{"observations": []any{
				map[string]any{"entityName": ref.entity, "contents": []string{ref.text}},
			}}, true
		},
		check: func(res *mcp.CallToolResult) (int, string) {
			type result struct {
				AddedObservations []string `json:"addedObservations"`
			}
			var out struct {
				Results []result `json:"results"`
			}
			if err := decodeStructured(res, &out); err != nil {
				// Older versions of the reference answer a bare array
				// in the text.
				if res.StructuredContent != nil || json.Unmarshal([]byte(firstText(res)), &out.Results) != nil {
					return -1, err.Error()
				}
			}
			if len(out.Results) != 1 || len(out.Results[0].AddedObservations) != 1 {
				return -1, fmt.Sprintf("expected 1 result with 1 added observation, got %+v", out.Results)
			}
			w.added = append(w.added, w.pendingAdd)
			return -1, ""
		},
	}
}

// createEntitiesCase creates one entity with a fresh name.
func (w *workload) createEntitiesCase() toolCase {
	return toolCase{
		label: "create_entities (1)",
		tool:  "create_entities",
		args: func() (map[string]any, bool) {
			w.counter++
			return map[string]any{"entities": []any{map[string]any{
				"name":       fmt.Sprintf("Bench_Person_%d", w.counter),
				"entityType": "person",
				"observations": []string{
					fmt.Sprintf("Created by memory-bench, call %d", w.counter),
					"Prefers email over phone calls",
				},
			}}}, true
		},
		check: func(res *mcp.CallToolResult) (int, string) {
			if got := countCreated(res, "entities"); got != 1 {
				return -1, fmt.Sprintf("created %d entities, want 1 (fresh name)", got)
			}
			w.createdEntities++
			return -1, ""
		},
	}
}

// createRelationsCase creates one relation of a fresh type between
// existing entities.
func (w *workload) createRelationsCase() toolCase {
	return toolCase{
		label: "create_relations (1)",
		tool:  "create_relations",
		args: func() (map[string]any, bool) {
			w.counter++
			names := w.pickNames(2)
			return map[string]any{"relations": []any{map[string]any{
				"from": names[0], "to": names[1],
				"relationType": fmt.Sprintf("bench_link_%d", w.counter),
			}}}, true
		},
		check: func(res *mcp.CallToolResult) (int, string) {
			if got := countCreated(res, "relations"); got != 1 {
				return -1, fmt.Sprintf("created %d relations, want 1 (fresh type)", got)
			}
			w.createdRels++
			return -1, ""
		},
	}
}

// deleteObservationsCase deletes one of the observations add_observations added.
func (w *workload) deleteObservationsCase() toolCase {
	return toolCase{
		label: "delete_observations (1)",
		tool:  "delete_observations",
		args: func() (map[string]any, bool) {
			if len(w.added) == 0 {
				return nil, false
			}
			ref := w.added[0]
			w.added = w.added[1:]
			return map[string]any{"deletions": []any{
				map[string]any{"entityName": ref.entity, "observations": []string{ref.text}},
			}}, true
		},
		check: func(res *mcp.CallToolResult) (int, string) {
			// The reference answers only {success, message}, its older
			// versions only a sentence of text; ours also counts what
			// it deleted.
			var out struct {
				DeletedCount *int `json:"deletedCount"`
			}
			if res.StructuredContent == nil && !json.Valid([]byte(firstText(res))) {
				return -1, ""
			}
			if err := decodeStructured(res, &out); err != nil {
				return -1, err.Error()
			}
			if out.DeletedCount != nil && *out.DeletedCount != 1 {
				return -1, fmt.Sprintf("deletedCount %d, want 1", *out.DeletedCount)
			}
			return -1, ""
		},
	}
}

// readGraphCase reads the whole graph, with what the workload created.
func (w *workload) readGraphCase() toolCase {
	return toolCase{
		label: "read_graph",
		tool:  "read_graph",
		args:  func() (map[string]any, bool) { return map[string]any{}, true },
		check: func(res *mcp.CallToolResult) (int, string) {
			ents, rels := countField(res, "entities"), countField(res, "relations")
			wantEnts := len(w.graph.Entities) + w.createdEntities
			wantRels := len(w.graph.Relations) + w.createdRels
			if ents != wantEnts || rels != wantRels {
				return ents, fmt.Sprintf("returned %d entities and %d relations, want %d and %d",
					ents, rels, wantEnts, wantRels)
			}
			return ents, ""
		},
	}
}

// pickNames returns k distinct existing entity names, chosen at random.
func (w *workload) pickNames(k int) []string {
	names := make([]string, 0, k)
	for len(names) < k {
		name := w.graph.Entities[w.rng.IntN(len(w.graph.Entities))].Name
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// measure runs one case: warm-up calls, then measured calls until iters are
// done, or minIters are done and the budget is spent.
func measure(ctx context.Context, p *serverProcess, tc toolCase, s runSettings) *ToolResult {
	m := &measurement{ctx: ctx, p: p, tc: tc, s: s, r: &ToolResult{Label: tc.label, Tool: tc.tool, Entities: -1}}
	defer func() {
		m.r.Latency = summarize(m.r.Samples)
		m.r.Wire = summarize(m.r.WireSamples)
	}()
	for range s.warmups {
		if m.call(false) {
			return m.r
		}
	}
	start := time.Now()
	for i := 0; i < s.iters; i++ {
		if i >= s.minIters && time.Since(start) > s.budget {
			m.r.Note = fmt.Sprintf("time budget: %d of %d calls", i, s.iters)
			break
		}
		time.Sleep(s.gap)
		if m.call(true) {
			break
		}
	}
	return m.r
}

// measurement is one case being measured on one server.
type measurement struct {
	ctx context.Context
	p   *serverProcess
	tc  toolCase
	s   runSettings
	r   *ToolResult
}

// call makes one call of the case, counting it when measured, and checks
// the answer. It reports whether the case should stop: out of work, or the
// server or the run gone.
func (m *measurement) call(measured bool) (stop bool) {
	r := m.r
	args, ok := m.tc.args()
	if !ok {
		r.Note = fmt.Sprintf("ran out of work after %d measured calls", len(r.Samples))
		return true
	}
	res, t, err := m.p.call(m.ctx, m.s.callTimeout, m.tc.tool, args)
	if measured {
		r.Calls++
	}
	r.AnswerBytes = max(r.AnswerBytes, t.bytes)
	if err != nil {
		r.Errors++
		if r.FirstError == "" {
			r.FirstError = err.Error()
		}
		return !m.p.alive() || m.ctx.Err() != nil
	}
	if measured {
		r.Samples = append(r.Samples, t.client)
		r.WireSamples = append(r.WireSamples, t.wire)
	}
	m.check(res)
	return false
}

// check checks one answer, keeping up to three distinct problems.
func (m *measurement) check(res *mcp.CallToolResult) {
	r := m.r
	ents, problem := m.tc.check(res)
	r.Entities = ents
	r.Checked++
	if problem != "" {
		r.WrongAnswers++
		if len(r.Problems) < 3 && !slices.Contains(r.Problems, problem) {
			r.Problems = append(r.Problems, problem)
		}
	}
}

// countField counts the elements of an array field of the structured
// result (the text content when there is none). -1 means absent.
func countField(res *mcp.CallToolResult, field string) int {
	if m, ok := res.StructuredContent.(map[string]any); ok {
		if items, ok := m[field].([]any); ok {
			return len(items)
		}
		return -1
	}
	var out map[string]json.RawMessage
	if err := decodeStructured(res, &out); err != nil {
		return -1
	}
	var items []json.RawMessage
	if err := json.Unmarshal(out[field], &items); err != nil {
		return -1
	}
	return len(items)
}

// decodeStructured decodes a result's structured content into v: the SDK
// hands it over as decoded JSON (maps), so it goes through JSON once more.
// Without structured content it decodes the first text content.
func decodeStructured(res *mcp.CallToolResult, v any) error {
	var data []byte
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return fmt.Errorf("re-encoding structured content: %w", err)
		}
		data = b
	} else {
		data = []byte(firstText(res))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding result: %w", err)
	}
	return nil
}
