package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
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

// toolResult is the one way every tool's answer becomes an MCP result: the
// answer package laid it out and encoded it once, and the go-sdk copies the
// encoded structured content (a json.RawMessage, checked and compacted by
// encoding/json) into the message rather than encoding values again.
func toolResult(r answer.Result) *mcp.CallToolResult {
	res := &mcp.CallToolResult{StructuredContent: json.RawMessage(r.Structured), Content: make([]mcp.Content, len(r.Texts))}
	for i, text := range r.Texts {
		res.Content[i] = &mcp.TextContent{Text: text}
	}
	return res
}

// addTool registers a read tool; see addCall.
func addTool[In any](s *Server, t *mcp.Tool, run func(context.Context, In) (*mcp.CallToolResult, error)) {
	addCall(s, t, false, func(ctx context.Context, _ graph.Write, a In) (*mcp.CallToolResult, error) { return run(ctx, a) })
}

// addWriteTool registers a write tool; see addCall. run gets the write
// its call makes, naming the tool and the client, which it hands to
// mutate (Server.update completes it with the change).
func addWriteTool[In any](s *Server, t *mcp.Tool, run func(context.Context, graph.Write, In) (*mcp.CallToolResult, error)) {
	addCall(s, t, true, run)
}

// addCall registers a tool, a write or a read (its annotations must say
// the same), whose arguments are checked against its input schema and
// then decoded into In. Bad arguments and failures of run come back as
// tool errors (isError), never as protocol errors.
func addCall[In any](s *Server, t *mcp.Tool, write bool, run func(context.Context, graph.Write, In) (*mcp.CallToolResult, error)) {
	in := t.InputSchema.(*jsonschema.Schema)
	if _, err := in.Resolve(nil); err != nil {
		panic(fmt.Sprintf("tool %s: bad input schema: %v", t.Name, err))
	}
	if t.Annotations == nil || t.Annotations.ReadOnlyHint == write {
		panic(fmt.Sprintf("tool %s: its annotations say otherwise than how it is registered (write: %v)", t.Name, write))
	}
	checkSchemaKeywords(t.Name, in)
	s.writes[t.Name] = write
	t.Meta = s.toolMeta()
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = s.withAnswerLimit(ctx, req)
		if write && !mayWrite(req) {
			return toolError(fmt.Errorf("this token may only read memory %s", s.memoryName())), nil
		}
		var args In
		if err := decodeArguments(req.Params.Arguments, in, &args); err != nil {
			return toolError(fmt.Errorf("Invalid arguments for tool %s: %w", t.Name, err)), nil
		}
		var w graph.Write // a read makes none
		if write {
			w = graph.Write{Tool: t.Name, Client: clientName(req)}
		}
		res, err := run(ctx, w, args)
		if err != nil {
			return toolError(s.clientError(req, err)), nil
		}
		return res, nil
	})
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
type readArgs struct {
	Outline bool   `json:"outline"`
	Cursor  string `json:"cursor"`
	timeArgs
}
type searchArgs struct {
	Query  string `json:"query"`
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor"`
	timeArgs
}
type openArgs struct {
	Names  []string `json:"names"`
	Depth  int      `json:"depth"`
	Cursor string   `json:"cursor"`
	timeArgs
}

// The read tools' optional arguments (docs/design.md §8). A client that sends
// only what the reference accepts gets the reference's answer, cut into parts
// only when it is bigger than the answer limit.
var (
	cursorArg  = str("nextCursor of the previous part of this answer, to get the next part")
	outlineArg = &jsonschema.Schema{Type: "boolean", Description: "Only names, types, observation counts and relations: an overview of a big memory"}
	limitArg   = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(100.0),
		Description: "When fewer entities contain the whole query, the closest matches fill the answer up to this many (default 10)"}
	depthArg = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(float64(graph.MaxDepth)),
		Description: "1: also the entities directly related to the named ones; 2: and theirs (default 0)"}
)

// addTools registers the nine tools, the reference's six writes and three
// reads, each with its schemas and its run.
func (s *Server) addTools() {
	s.addCreateEntities()
	s.addCreateRelations()
	s.addAddObservations()
	s.addDeleteEntities()
	s.addDeleteObservations()
	s.addDeleteRelations()
	s.addReadGraph()
	s.addSearchNodes()
	s.addOpenNodes()
}

// addCreateEntities registers create_entities.
func (s *Server) addCreateEntities() {
	entities := array(entitySchema(), "")
	addWriteTool(s, &mcp.Tool{
		Name:        "create_entities",
		Title:       "Create Entities",
		Description: "Create multiple new entities in the knowledge graph",
		InputSchema: object(map[string]*jsonschema.Schema{"entities": entities}, "entities"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{
			"entities": array(closed(entitySchema()), ""),
			"skipped":  array(str(""), "Names of entities not created: they already existed, or the call repeated them (each was created from its first entry)"),
			"omitted":  omittedSchema(),
		}, "entities")),
		Annotations: mutating,
	}, func(ctx context.Context, w graph.Write, a entitiesArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, w, func(g *graph.Graph) (graph.CreateEntitiesResult, error) {
			return g.CreateEntities(a.Entities), nil
		})
		if err != nil {
			return nil, err
		}
		return toolResult(answer.CreatedEntities(res, s.limit(ctx))), nil
	})
}

// addCreateRelations registers create_relations.
func (s *Server) addCreateRelations() {
	relations := array(relationSchema(), "")
	addWriteTool(s, &mcp.Tool{
		Name:         "create_relations",
		Title:        "Create Relations",
		Description:  "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": relations}, "relations"),
		OutputSchema: closed(object(map[string]*jsonschema.Schema{"relations": array(closed(relationSchema()), ""), "omitted": omittedSchema()}, "relations")),
		Annotations:  mutating,
	}, func(ctx context.Context, w graph.Write, a relationsArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, w, func(g *graph.Graph) (graph.CreateRelationsResult, error) {
			return g.CreateRelations(a.Relations)
		})
		if err != nil {
			return nil, err
		}
		return toolResult(answer.CreatedRelations(res, s.limit(ctx))), nil
	})
}

// addAddObservations registers add_observations.
func (s *Server) addAddObservations() {
	addWriteTool(s, &mcp.Tool{
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
		}, "entityName", "addedObservations")), ""), "omitted": omittedSchema()}, "results")),
		Annotations: mutating,
	}, func(ctx context.Context, w graph.Write, a addObservationsArgs) (*mcp.CallToolResult, error) {
		res, err := mutate(ctx, s, w, func(g *graph.Graph) (graph.AddObservationsResult, error) {
			return g.AddObservations(a.Observations)
		})
		if err != nil {
			return nil, err
		}
		return toolResult(answer.AddedObservations(res, s.limit(ctx))), nil
	})
}

// addDeleteEntities registers delete_entities.
func (s *Server) addDeleteEntities() {
	addWriteTool(s, &mcp.Tool{
		Name:         "delete_entities",
		Title:        "Delete Entities",
		Description:  "Delete multiple entities and their associated relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"entityNames": array(str(""), "An array of entity names to delete")}, "entityNames"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"notFound": array(str(""), "Names that matched no entity")}),
		Annotations:  destructive,
	}, func(ctx context.Context, w graph.Write, a deleteEntitiesArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, w, func(g *graph.Graph) graph.DeleteResult { return g.DeleteEntities(a.EntityNames) })
	})
}

// addDeleteObservations registers delete_observations.
func (s *Server) addDeleteObservations() {
	addWriteTool(s, &mcp.Tool{
		Name:        "delete_observations",
		Title:       "Delete Observations",
		Description: "Delete specific observations from entities in the knowledge graph",
		InputSchema: object(map[string]*jsonschema.Schema{"deletions": array(object(map[string]*jsonschema.Schema{
			"entityName":   str("The name of the entity containing the observations"),
			"observations": array(str(""), "An array of observations to delete"),
		}, "entityName", "observations"), "")}, "deletions"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"deletedCount": {Type: "integer"}}, "deletedCount"),
		Annotations:  destructive,
	}, func(ctx context.Context, w graph.Write, a deleteObservationsArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, w, func(g *graph.Graph) graph.DeleteResult { return g.DeleteObservations(a.Deletions) })
	})
}

// addDeleteRelations registers delete_relations.
func (s *Server) addDeleteRelations() {
	addWriteTool(s, &mcp.Tool{
		Name:         "delete_relations",
		Title:        "Delete Relations",
		Description:  "Delete multiple relations from the knowledge graph",
		InputSchema:  object(map[string]*jsonschema.Schema{"relations": array(relationSchema(), "An array of relations to delete")}, "relations"),
		OutputSchema: deleteOutputSchema(map[string]*jsonschema.Schema{"deletedCount": {Type: "integer"}}, "deletedCount"),
		Annotations:  destructive,
	}, func(ctx context.Context, w graph.Write, a relationsArgs) (*mcp.CallToolResult, error) {
		return s.delete(ctx, w, func(g *graph.Graph) graph.DeleteResult { return g.DeleteRelations(a.Relations) })
	})
}

// addReadGraph registers read_graph.
func (s *Server) addReadGraph() {
	addTool(s, &mcp.Tool{
		Name:         "read_graph",
		Title:        "Read Graph",
		Description:  "Read the entire knowledge graph. A big graph comes in parts: pass nextCursor back as cursor. outline: true gives only names, types, observation counts and relations." + timeSentence,
		InputSchema:  object(withTimeArgs(map[string]*jsonschema.Schema{"outline": outlineArg, "cursor": cursorArg})),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, a readArgs) (*mcp.CallToolResult, error) {
		w, err := a.window("read_graph")
		if err != nil {
			return nil, err
		}
		return s.page(ctx, s.store.View, a.Cursor, func(g *graph.Graph) (*answer.Answer, error) {
			ans := &answer.Answer{
				Tool: "read_graph", Request: fmt.Sprintf("read_graph outline=%t", a.Outline),
				Outline: a.Outline, Entities: views(g.Entities()), Relations: g.Relations(),
				Hint: ", or narrow it: outline: true, search_nodes or open_nodes",
			}
			if a.Outline {
				ans.Hint = ", or narrow it with search_nodes or open_nodes"
			}
			applyTimes(ans, a.timeArgs, w)
			return ans, nil
		})
	})
}

// addSearchNodes registers search_nodes.
func (s *Server) addSearchNodes() {
	addTool(s, &mcp.Tool{
		Name:        "search_nodes",
		Title:       "Search Nodes",
		Description: "Search for nodes in the knowledge graph based on a query. Entities containing the whole query come first, then the closest matches by shared words, up to limit. A word ending in * matches the words that begin with it (auth* finds auth, author, authentication)." + timeSentence,
		InputSchema: object(withTimeArgs(map[string]*jsonschema.Schema{
			"query":  str("The search query to match against entity names, types, and observation content"),
			"limit":  limitArg,
			"cursor": cursorArg,
		}), "query"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, a searchArgs) (*mcp.CallToolResult, error) {
		if n := utf8.RuneCountInString(a.Query); n > graph.MaxQueryLength {
			return nil, fmt.Errorf("Invalid arguments for tool search_nodes: query must be a string of at most %d characters; got %d characters", graph.MaxQueryLength, n)
		}
		w, err := a.window("search_nodes")
		if err != nil {
			return nil, err
		}
		if s.opts.Meaning != nil && w.IsZero() {
			// Meaning ranks the whole memory; a time window searches by
			// words.
			return s.searchWithMeaning(ctx, s.opts.Meaning, a)
		}
		return s.page(ctx, s.searchView, a.Cursor, func(g *graph.Graph) (*answer.Answer, error) {
			ans := searchAnswer(g, a, w)
			applyTimes(ans, a.timeArgs, w)
			return ans, nil
		})
	})
}

// addOpenNodes registers open_nodes.
func (s *Server) addOpenNodes() {
	addTool(s, &mcp.Tool{
		Name:        "open_nodes",
		Title:       "Open Nodes",
		Description: "Open specific nodes in the knowledge graph by their names. depth: 1 also returns the entities directly related to them." + timeSentence,
		InputSchema: object(withTimeArgs(map[string]*jsonschema.Schema{
			"names":  array(str(""), "An array of entity names to retrieve"),
			"depth":  depthArg,
			"cursor": cursorArg,
		}), "names"),
		OutputSchema: graphOutputSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, a openArgs) (*mcp.CallToolResult, error) {
		w, err := a.window("open_nodes")
		if err != nil {
			return nil, err
		}
		return s.page(ctx, s.store.View, a.Cursor, func(g *graph.Graph) (*answer.Answer, error) {
			sel, err := g.Neighbours(a.Names, a.Depth)
			if err != nil {
				return nil, fmt.Errorf("Invalid arguments for tool open_nodes: %w", err)
			}
			ans := &answer.Answer{
				Tool: "open_nodes", Request: fmt.Sprintf("open_nodes depth=%d %q", a.Depth, a.Names),
				Entities: views(sel.Entities), Relations: sel.Relations,
				Hint: ", or open fewer names",
			}
			applyTimes(ans, a.timeArgs, w)
			return ans, nil
		})
	})
}

// views shows entities as they are stored.
func views(ents []*graph.Entity) []answer.View {
	vs := make([]answer.View, len(ents))
	for i, e := range ents {
		vs[i] = answer.View{Entity: e}
	}
	return vs
}

// searchAnswer is search_nodes' whole answer: the entities that contain the
// whole query, then the closest by shared words, each with what matched
// shown first; with a window, among the entities learned in it.
func searchAnswer(g *graph.Graph, a searchArgs, w graph.Window) *answer.Answer {
	limit := searchLimit(a)
	return rankedAnswer(g.SearchRankedIn(a.Query, limit, w), a, limit, w, wordsClosest)
}

// wordsClosest is the note of a search by words that found only partial
// matches.
const wordsClosest = "No entity contains the whole query; these are the closest matches by the words they share with it, best first."

// searchLimit is a search's limit, DefaultSearchLimit when none is set.
func searchLimit(a searchArgs) int {
	if a.Limit <= 0 {
		return graph.DefaultSearchLimit
	}
	return a.Limit
}

// rankedAnswer lays out a search's answer, by words or by words and
// meaning alike: its hits with their evidence chosen across the answer
// (answer.Hits), HitRelations relations per hit with the rest counted
// (answer.SearchRelations), those of window w only when it is set, and
// closest as a note when nothing matched the whole query.
func rankedAnswer(found graph.Ranked, a searchArgs, limit int, w graph.Window, closest string) *answer.Answer {
	var keep func(*graph.Relation) bool
	if !w.IsZero() {
		keep = func(r *graph.Relation) bool { return w.Contains(r.Created) }
	}
	ans := &answer.Answer{
		Tool: "search_nodes", Request: fmt.Sprintf("search_nodes limit=%d %q", limit, a.Query),
		Entities: answer.Hits(found.Hits),
		Hint:     ", or search for something narrower",
	}
	ans.Relations, ans.OmittedRelations = answer.SearchRelations(found, keep)
	if found.Exact == 0 && len(found.Hits) > 0 {
		ans.Notes = []string{closest}
	}
	return ans
}

// viewFunc reads the memory as graph.Store's View does.
type viewFunc func(context.Context, func(*graph.Graph) error) error

// searchView is the View of a search: one on a graph with whole indexes
// (graph.ViewIndexed), so a search that comes while they are still being
// built waits for them outside the store's lock, not writes and lookups.
func (s *Server) searchView(ctx context.Context, fn func(*graph.Graph) error) error {
	return graph.ViewIndexed(ctx, s.store, fn)
}

// page runs a read tool: view holds the graph (the store's View, or
// searchView) while build lays out the whole answer, and the part the
// cursor points to is picked and copied (answer.Answer.Pick) before it is
// let go; the page is encoded after, so a write waits for no read's
// encoding (docs/bounds.md).
func (s *Server) page(ctx context.Context, view viewFunc, cursor string, build func(*graph.Graph) (*answer.Answer, error)) (*mcp.CallToolResult, error) {
	var picked *answer.Picked
	err := view(ctx, func(g *graph.Graph) error {
		ans, err := build(g)
		if err != nil {
			return err
		}
		s.withStanding(g, ans, s.limit(ctx))
		if picked, err = ans.Pick(s.limit(ctx), cursor); err != nil {
			return fmt.Errorf("Invalid arguments for tool %s: %w", ans.Tool, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.encoding != nil {
		s.encoding()
	}
	return toolResult(picked.Encode()), nil
}

// update runs a mutation as one write of the store. Subscribers hear of
// it from the store's Watch (Server.Watch), as of any other write, before
// the answer (notified.go).
func (s *Server) update(ctx context.Context, w graph.Write, fn func(*graph.Graph) error) error {
	w.Apply = fn
	at, grew := s.notified.mark()
	changed, err := s.store.Update(ctx, w)
	var nf *graph.NotFoundError
	if err != nil && !errors.As(err, &nf) {
		s.logf("write failed: %v", err)
	}
	// The answer follows the notification, as the session reads; without
	// a Watch (Options.WatchInterval negative) the write tells of itself.
	if changed && !s.notified.wait(ctx, at, grew) {
		s.memoryChanged(ctx)
	}
	return err
}

// mutate runs apply as the write w (see update) and returns its result.
func mutate[R any](ctx context.Context, s *Server, w graph.Write, apply func(*graph.Graph) (R, error)) (R, error) {
	var res R
	err := s.update(ctx, w, func(g *graph.Graph) (err error) {
		res, err = apply(g)
		return err
	})
	return res, err
}

// delete runs one of the delete tools; their text item is the message.
func (s *Server) delete(ctx context.Context, w graph.Write, fn func(*graph.Graph) graph.DeleteResult) (*mcp.CallToolResult, error) {
	res, err := mutate(ctx, s, w, func(g *graph.Graph) (graph.DeleteResult, error) { return fn(g), nil })
	if err != nil {
		return nil, err
	}
	return toolResult(answer.Deleted(res, s.limit(ctx))), nil
}
