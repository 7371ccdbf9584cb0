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

// indentedResult is a tool result whose structured content is written by
// write and whose first text item is the same JSON, indented (the
// reference's JSON.stringify(result, null, 2)); more text items follow.
func indentedResult(write func(*jsonWriter), more ...string) *mcp.CallToolResult {
	return toolResult(write, append([]string{string(encodeJSON(true, write))}, more...)...)
}

// messageResult is a tool result whose one text item is text rather than
// the JSON (the delete tools).
func messageResult(write func(*jsonWriter), text string) *mcp.CallToolResult {
	return toolResult(write, text)
}

func toolResult(write func(*jsonWriter), texts ...string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{StructuredContent: json.RawMessage(encodeJSON(false, write))}
	for _, text := range texts {
		res.Content = append(res.Content, &mcp.TextContent{Text: text})
	}
	return res
}

// addTool registers a tool whose arguments are checked against its input
// schema and then decoded into In. Bad arguments and failures of run come
// back as tool errors (isError), never as protocol errors.
func addTool[In any](s *Server, t *mcp.Tool, run func(context.Context, In) (*mcp.CallToolResult, error)) {
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
		res, err := run(ctx, args)
		if err != nil {
			return toolError(err), nil
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
	}, func(ctx context.Context, a entitiesArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.CreateEntitiesResult, error) {
			return g.CreateEntities(a.Entities), nil
		})
		if err != nil {
			return nil, err
		}
		if notice := res.Notice(); notice != "" {
			return indentedResult(writeCreatedEntities(res), notice), nil
		}
		return indentedResult(writeCreatedEntities(res)), nil
	})

	addTool(s, &mcp.Tool{
		Name:         "create_relations",
		Title:        "Create Relations",
		Description:  "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": relations}, "relations"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{"relations": array(closed(relationSchema()), "")}, "relations")),
		Annotations:  mutating,
	}, func(ctx context.Context, a relationsArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.CreateRelationsResult, error) {
			return g.CreateRelations(a.Relations)
		})
		if err != nil {
			return nil, err
		}
		return indentedResult(writeCreatedRelations(res)), nil
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
	}, func(ctx context.Context, a addObservationsArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, func(g *graph.Graph) (graph.AddObservationsResult, error) {
			return g.AddObservations(a.Observations)
		})
		if err != nil {
			return nil, err
		}
		return indentedResult(writeAddedObservations(res)), nil
	})

	addTool(s, &mcp.Tool{
		Name:         "delete_entities",
		Title:        "Delete Entities",
		Description:  "Delete multiple entities and their associated relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"entityNames": array(str(""), "An array of entity names to delete")}, "entityNames"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"notFound": array(str(""), "Names that matched no entity")}),
		Annotations:  destructive,
	}, func(ctx context.Context, a deleteEntitiesArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, func(g *graph.Graph) graph.DeleteResult { return g.DeleteEntities(a.EntityNames) })
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
	}, func(ctx context.Context, a deleteObservationsArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, func(g *graph.Graph) graph.DeleteResult { return g.DeleteObservations(a.Deletions) })
	})

	addTool(s, &mcp.Tool{
		Name:         "delete_relations",
		Title:        "Delete Relations",
		Description:  "Delete multiple relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": array(relationSchema(), "An array of relations to delete")}, "relations"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"deletedCount": {Type: "integer"}}, "deletedCount"),
		Annotations:  destructive,
	}, func(ctx context.Context, a relationsArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, func(g *graph.Graph) graph.DeleteResult { return g.DeleteRelations(a.Relations) })
	})

	addTool(s, &mcp.Tool{
		Name:         "read_graph",
		Title:        "Read Graph",
		Description:  "Read the entire knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{}),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, _ struct{}) (*mcp.CallToolResult, error) {
		return s.view(func(g *graph.Graph) graph.Selection { return g.All() })
	})

	addTool(s, &mcp.Tool{
		Name:         "search_nodes",
		Title:        "Search Nodes",
		Description:  "Search for nodes in the knowledge graph based on a query",
		InputSchema:  object(map[string]*jsonschema.Schema{"query": str("The search query to match against entity names, types, and observation content")}, "query"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, a searchArgs) (*mcp.CallToolResult, error) {
		if n := utf8.RuneCountInString(a.Query); n > graph.MaxQueryLength {
			return nil, fmt.Errorf("Invalid arguments for tool search_nodes: query is %d characters long; the limit is %d", n, graph.MaxQueryLength)
		}
		return s.view(func(g *graph.Graph) graph.Selection { return g.Search(a.Query) })
	})

	addTool(s, &mcp.Tool{
		Name:         "open_nodes",
		Title:        "Open Nodes",
		Description:  "Open specific nodes in the knowledge graph by their names",
		InputSchema:  object(map[string]*jsonschema.Schema{"names": array(str(""), "An array of entity names to retrieve")}, "names"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, a openArgs) (*mcp.CallToolResult, error) {
		return s.view(func(g *graph.Graph) graph.Selection { return g.Open(a.Names) })
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
func (s *Server) delete(ctx context.Context, fn func(*graph.Graph) graph.DeleteResult) (*mcp.CallToolResult, error) {
	res, err := mutate(ctx, s, func(g *graph.Graph) (graph.DeleteResult, error) { return fn(g), nil })
	if err != nil {
		return nil, err
	}
	return messageResult(writeDeleted(res), res.Message), nil
}

// view runs a read tool. The result is encoded while the graph is held, so
// nothing is copied first.
func (s *Server) view(selection func(*graph.Graph) graph.Selection) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	err := s.store.View(func(g *graph.Graph) { res = indentedResult(writeSelection(selection(g))) })
	return res, err
}
