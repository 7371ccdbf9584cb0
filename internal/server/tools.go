package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

func boolPtr(b bool) *bool { return &b }

// annotations builds the reference's hints; openWorld is always false: the
// graph is a closed world.
func annotations(readOnly, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    readOnly,
		DestructiveHint: boolPtr(destructive),
		IdempotentHint:  idempotent,
		OpenWorldHint:   boolPtr(false),
	}
}

var (
	mutating    = annotations(false, false, false)
	destructive = annotations(false, true, true)
	readOnly    = annotations(true, false, true)
)

// reply is what a tool returns, already encoded: the structured result as
// compact JSON, and the text items, either as strings or, for sessions that
// take parked results, as the pre-encoded content array.
type reply struct {
	structured []byte
	texts      []string
	content    []byte
}

// replier encodes replies for one call, in the form its session takes.
type replier struct{ preencoded bool }

// json is a reply whose structured content is written by write and whose
// first text item is the same, indented (the reference's
// JSON.stringify(result, null, 2)); more text items follow.
func (rp replier) json(write func(*jsonWriter), more ...string) reply {
	r := reply{structured: encodeJSON(false, write)}
	if !rp.preencoded {
		r.texts = append([]string{string(encodeJSON(true, write))}, more...)
		return r
	}
	// The text item is written in one pass, already escaped as a JSON
	// string, rather than indented and then escaped.
	w := &jsonWriter{indent: true, quoted: true}
	w.buf = append(make([]byte, 0, len(r.structured)*3/2+64), `[{"type":"text","text":"`...)
	write(w)
	b := append(w.buf, `"}`...)
	for _, t := range more {
		b = appendTextItem(append(b, ','), t)
	}
	r.content = append(b, ']')
	return r
}

// message is a reply whose text item is text rather than the JSON.
func (rp replier) message(write func(*jsonWriter), text string) reply {
	r := reply{structured: encodeJSON(false, write)}
	if !rp.preencoded {
		r.texts = []string{text}
		return r
	}
	r.content = append(appendTextItem([]byte{'['}, text), ']')
	return r
}

func appendTextItem(b []byte, text string) []byte {
	b = append(b, `{"type":"text","text":`...)
	b = jsonl.AppendString(b, text)
	return append(b, '}')
}

// addTool registers a tool whose arguments are checked against its input
// schema and then decoded into In. Bad arguments and failures of run come
// back as tool errors (isError), never as protocol errors.
func addTool[In any](s *Server, t *mcp.Tool, run func(context.Context, replier, In) (reply, error)) {
	in := t.InputSchema.(*jsonschema.Schema)
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: bad input schema: %v", t.Name, err))
	}
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args In
		if err := decodeArguments(req.Params.Arguments, resolved, &args); err != nil {
			return toolError(fmt.Errorf("Invalid arguments for tool %s: %w", t.Name, err)), nil
		}
		_, preencoded := s.parkingSessions.Load(req.Session.ID())
		r, err := run(ctx, replier{preencoded}, args)
		if err != nil {
			return toolError(err), nil
		}
		if preencoded {
			tok := s.results.park(preencodedResult{content: r.content, structured: r.structured})
			return &mcp.CallToolResult{StructuredContent: placeholder{Token: tok}}, nil
		}
		res := &mcp.CallToolResult{StructuredContent: json.RawMessage(r.structured)}
		for _, text := range r.texts {
			res.Content = append(res.Content, &mcp.TextContent{Text: text})
		}
		return res, nil
	})
}

func decodeArguments(raw json.RawMessage, schema *jsonschema.Resolved, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return fmt.Errorf("arguments are not JSON: %v", err)
	}
	if err := schema.Validate(generic); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return err
	}
	return nil
}

func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

type entitiesArgs struct {
	Entities []graph.Entity `json:"entities"`
}
type relationsArgs struct {
	Relations []graph.Relation `json:"relations"`
}
type addObservationsArgs struct {
	Observations []graph.ObservationAddition `json:"observations"`
}
type deleteEntitiesArgs struct {
	EntityNames []string `json:"entityNames"`
}
type deleteObservationsArgs struct {
	Deletions []graph.ObservationDeletion `json:"deletions"`
}
type searchArgs struct {
	Query string `json:"query"`
}
type openArgs struct {
	Names []string `json:"names"`
}

func (s *Server) addTools() {
	entities := array(entitySchema(), "")
	relations := array(relationSchema(), "")

	addTool(s, &mcp.Tool{
		Name:        "create_entities",
		Title:       "Create Entities",
		Description: "Create multiple new entities in the knowledge graph",
		InputSchema: object(map[string]*jsonschema.Schema{"entities": entities}, "entities"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{
			"entities": array(closed(entitySchema()), ""),
			"skipped":  array(str(""), "Names of entities that already existed and were not created"),
		}, "entities")),
		Annotations: mutating,
	}, func(ctx context.Context, rp replier, a entitiesArgs) (reply, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.CreateEntitiesResult, error) {
			return g.CreateEntities(a.Entities), nil
		})
		if err != nil {
			return reply{}, err
		}
		if notice := res.Notice(); notice != "" {
			return rp.json(writeCreatedEntities(res), notice), nil
		}
		return rp.json(writeCreatedEntities(res)), nil
	})

	addTool(s, &mcp.Tool{
		Name:         "create_relations",
		Title:        "Create Relations",
		Description:  "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": relations}, "relations"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{"relations": array(closed(relationSchema()), "")}, "relations")),
		Annotations:  mutating,
	}, func(ctx context.Context, rp replier, a relationsArgs) (reply, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.CreateRelationsResult, error) {
			return g.CreateRelations(a.Relations)
		})
		if err != nil {
			return reply{}, err
		}
		return rp.json(writeCreatedRelations(res)), nil
	})

	addTool(s, &mcp.Tool{
		Name:        "add_observations",
		Title:       "Add Observations",
		Description: "Add new observations to existing entities in the knowledge graph",
		InputSchema: object(map[string]*jsonschema.Schema{"observations": array(object(map[string]*jsonschema.Schema{
			"entityName": str("The name of the entity to add the observations to"),
			"contents":   array(str(""), "An array of observation contents to add"),
		}, "entityName", "contents"), "")}, "observations"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{"results": array(closed(object(map[string]*jsonschema.Schema{
			"entityName":        str(""),
			"addedObservations": array(str(""), ""),
		}, "entityName", "addedObservations")), "")}, "results")),
		Annotations: mutating,
	}, func(ctx context.Context, rp replier, a addObservationsArgs) (reply, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.AddObservationsResult, error) {
			return g.AddObservations(a.Observations)
		})
		if err != nil {
			return reply{}, err
		}
		return rp.json(writeAddedObservations(res)), nil
	})

	addTool(s, &mcp.Tool{
		Name:         "delete_entities",
		Title:        "Delete Entities",
		Description:  "Delete multiple entities and their associated relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"entityNames": array(str(""), "An array of entity names to delete")}, "entityNames"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"notFound": array(str(""), "Names that matched no entity")}),
		Annotations:  destructive,
	}, func(ctx context.Context, rp replier, a deleteEntitiesArgs) (reply, error) {
		return s.delete(ctx, rp, func(g *graph.Graph) graph.DeleteResult { return g.DeleteEntities(a.EntityNames) })
	})

	addTool(s, &mcp.Tool{
		Name:        "delete_observations",
		Title:       "Delete Observations",
		Description: "Delete specific observations from entities in the knowledge graph",
		InputSchema: object(map[string]*jsonschema.Schema{"deletions": array(object(map[string]*jsonschema.Schema{
			"entityName":   str("The name of the entity containing the observations"),
			"observations": array(str(""), "An array of observations to delete"),
		}, "entityName", "observations"), "")}, "deletions"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"deletedCount": {Type: "integer"}}, "deletedCount"),
		Annotations:  destructive,
	}, func(ctx context.Context, rp replier, a deleteObservationsArgs) (reply, error) {
		return s.delete(ctx, rp, func(g *graph.Graph) graph.DeleteResult { return g.DeleteObservations(a.Deletions) })
	})

	addTool(s, &mcp.Tool{
		Name:         "delete_relations",
		Title:        "Delete Relations",
		Description:  "Delete multiple relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": array(relationSchema(), "An array of relations to delete")}, "relations"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"deletedCount": {Type: "integer"}}, "deletedCount"),
		Annotations:  destructive,
	}, func(ctx context.Context, rp replier, a relationsArgs) (reply, error) {
		return s.delete(ctx, rp, func(g *graph.Graph) graph.DeleteResult { return g.DeleteRelations(a.Relations) })
	})

	addTool(s, &mcp.Tool{
		Name:         "read_graph",
		Title:        "Read Graph",
		Description:  "Read the entire knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{}),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, rp replier, _ struct{}) (reply, error) {
		return s.view(rp, func(g *graph.Graph) graph.Selection { return g.All() })
	})

	addTool(s, &mcp.Tool{
		Name:         "search_nodes",
		Title:        "Search Nodes",
		Description:  "Search for nodes in the knowledge graph based on a query",
		InputSchema:  object(map[string]*jsonschema.Schema{"query": str("The search query to match against entity names, types, and observation content")}, "query"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, rp replier, a searchArgs) (reply, error) {
		if n := utf8.RuneCountInString(a.Query); n > graph.MaxQueryLength {
			return reply{}, fmt.Errorf("Invalid arguments for tool search_nodes: query is %d characters long; the limit is %d", n, graph.MaxQueryLength)
		}
		return s.view(rp, func(g *graph.Graph) graph.Selection { return g.Search(a.Query) })
	})

	addTool(s, &mcp.Tool{
		Name:         "open_nodes",
		Title:        "Open Nodes",
		Description:  "Open specific nodes in the knowledge graph by their names",
		InputSchema:  object(map[string]*jsonschema.Schema{"names": array(str(""), "An array of entity names to retrieve")}, "names"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, rp replier, a openArgs) (reply, error) {
		return s.view(rp, func(g *graph.Graph) graph.Selection { return g.Open(a.Names) })
	})
}

// update runs a mutation under the file lock and tells subscribers when it
// changed the graph.
func (s *Server) update(ctx context.Context, fn func(*graph.Graph) error) error {
	changed, err := s.store.Update(ctx, fn)
	var nf *graph.NotFoundError
	if err != nil && !errors.As(err, &nf) {
		s.logf("write failed: %v", err)
	}
	if changed {
		s.graphChanged(ctx)
	}
	return err
}

// mutate runs apply as a write (see update) and returns its result.
func mutate[R any](ctx context.Context, s *Server, apply func(*graph.Graph) (R, error)) (R, error) {
	var res R
	err := s.update(ctx, func(g *graph.Graph) (err error) {
		res, err = apply(g)
		return err
	})
	return res, err
}

// delete runs one of the delete tools; their text item is the message.
func (s *Server) delete(ctx context.Context, rp replier, fn func(*graph.Graph) graph.DeleteResult) (reply, error) {
	res, err := mutate(ctx, s, func(g *graph.Graph) (graph.DeleteResult, error) { return fn(g), nil })
	if err != nil {
		return reply{}, err
	}
	return rp.message(writeDeleted(res), res.Message), nil
}

// view runs a read tool. The result is encoded while the graph is held, so
// nothing is copied first.
func (s *Server) view(rp replier, selection func(*graph.Graph) graph.Selection) (reply, error) {
	var r reply
	err := s.store.View(func(g *graph.Graph) { r = rp.json(writeSelection(selection(g))) })
	return r, err
}
