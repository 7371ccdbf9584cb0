package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

type hit struct {
	Name         string `json:"name"`
	EntityType   string `json:"entityType"`
	Observations int    `json:"observations"`
	// Snippet is the observation that matched the query best, else the
	// first; Matched says which.
	Snippet string `json:"snippet"`
	Matched bool   `json:"matched"`
	// Exact: the entity contains the whole query, rather than being one of
	// the closest matches by the words it shares with it.
	Exact bool `json:"exact"`
}

type searchResult struct {
	Query string `json:"query"`
	Hits  []hit  `json:"hits"`
	// Total is how many entities the list holds (every entity for an empty
	// query); Hits are those from Offset on, at most searchLimit.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	// Exact is how many of the Total, the first ones, contain the whole
	// query; the others are only the closest matches by shared words.
	Exact int `json:"exact"`
}

// search answers the page's search box: one page of the list from offset
// on.
func (h *Handler) search(w http.ResponseWriter, query, offset string) {
	if n := len([]rune(query)); n > graph.MaxQueryLength {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the query is %d characters long; the limit is %d", n, graph.MaxQueryLength))
		return
	}
	from := 0
	if offset != "" {
		n, err := strconv.Atoi(offset)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("the offset %q is not a whole number of entities from 0 up", offset))
			return
		}
		from = n
	}
	// Indexes still being built are waited for outside the store's lock,
	// so the memory's writes and lookups are not (graph.ViewIndexed).
	indexed := func(ctx context.Context, fn func(*graph.Graph) error) error {
		return graph.ViewIndexed(ctx, h.store, fn)
	}
	h.viewWith(w, indexed, func(g *graph.Graph) (any, int) { return searchAnswer(g, query, from), http.StatusOK })
}

// searchAnswer ranks as search_nodes does (the same function): the
// entities containing the whole query, then the closest matches up to
// searchLimit in all, and returns the searchLimit of them from offset on.
// An empty query lists every entity in the memory's order.
func searchAnswer(g *graph.Graph, query string, offset int) searchResult {
	res := searchResult{Query: query, Hits: []hit{}, Offset: offset}
	if strings.TrimSpace(query) == "" {
		ents := g.Entities()
		res.Total, res.Exact = len(ents), len(ents)
		for _, e := range ents[min(offset, len(ents)):min(offset+searchLimit, len(ents))] {
			h := hit{Name: e.Name, EntityType: e.EntityType, Observations: len(e.Observations), Exact: true}
			if len(e.Observations) > 0 {
				h.Snippet = e.Observations[0]
			}
			res.Hits = append(res.Hits, h)
		}
		return res
	}
	found := g.SearchRanked(query, searchLimit)
	res.Total, res.Exact = len(found.Hits), found.Exact
	for _, fh := range found.Hits[min(offset, len(found.Hits)):min(offset+searchLimit, len(found.Hits))] {
		e := fh.Entity
		h := hit{Name: e.Name, EntityType: e.EntityType, Observations: len(e.Observations), Exact: fh.Exact}
		// What matched best, as search_nodes shows it first.
		if m := fh.Matched(); len(m) > 0 {
			h.Snippet, h.Matched = e.Observations[m[0]], true
		} else if len(e.Observations) > 0 {
			h.Snippet = e.Observations[0]
		}
		res.Hits = append(res.Hits, h)
	}
	return res
}

// learned answers the home view: when the memory learned its facts
// ("learned", a graph.Timeline) and, when it keeps a history, the writes
// it recorded per day ("writes") over the last graph.RecentDays days, and,
// for a request that may edit, those of them that deleted entities
// ("deleted"), which the page can restore.
func (h *Handler) learned(w http.ResponseWriter, mayEdit bool) {
	now := graph.TimeOf(time.Now())
	// Requests at once share a read of the history (coalescer): a big
	// record costs its read once, not once per page open.
	home, err := h.homeReads.do(fmt.Sprint(mayEdit), func() (homeHistory, error) { return readHome(historyOf(h.store), now, mayEdit) })
	if err != nil {
		h.historyFailed(w, err)
		return
	}
	var deleted *historyAnswer
	if home.deleted != nil {
		// seeBack sets each request's own entries.
		d := historyAnswer{Records: slices.Clone(home.deleted.Records), More: home.deleted.More}
		deleted = &d
	}
	h.view(w, func(g *graph.Graph) (any, int) {
		if deleted != nil {
			deleted.seeBack(g)
		}
		return map[string]any{"learned": g.Timeline(now, graph.RecentDays), "writes": home.writes, "deleted": deleted}, http.StatusOK
	})
}

// homeHistory is what the home view reads of the history: the writes per
// day, and those that deleted entities (for a request that may edit).
type homeHistory struct {
	writes  *graph.PerDay
	deleted *historyAnswer
}

func readHome(r history.Reader, now graph.Time, mayEdit bool) (homeHistory, error) {
	if r == nil {
		return homeHistory{}, nil
	}
	pd, err := history.RecentWrites(r, now, graph.RecentDays)
	if err != nil {
		return homeHistory{}, err
	}
	home := homeHistory{writes: &pd}
	if mayEdit {
		// One past the limit: the read stops there. A record too big to
		// read whole comes by its header.
		recs, err := r.History(history.Filter{Since: pd.From.UTC(), DeletesEntity: true, Limit: deletedLimit + 1, MaxBytes: shownRecordBytes})
		if err != nil {
			return homeHistory{}, err
		}
		d := listHistory(recs, "", deletedLimit)
		d.markLater()
		home.deleted = &d
	}
	return home, nil
}

// historyOf returns the history of the memory in store, or nil when it
// keeps none.
func historyOf(store graph.Store) history.Reader {
	r, _ := store.(history.Reader)
	return r
}

type link struct {
	Name         string `json:"name"`
	RelationType string `json:"relationType"`
	Exists       bool   `json:"exists"`
	CreatedAt    string `json:"createdAt,omitempty"` // when the relation was learned
}

// entityPage is an entity as its page shows it. The times say when each
// fact was learned (RFC 3339, UTC): absent, or null for an observation,
// when unknown.
type entityPage struct {
	Name             string    `json:"name"`
	EntityType       string    `json:"entityType"`
	Observations     []string  `json:"observations"`
	CreatedAt        string    `json:"createdAt,omitempty"`
	UpdatedAt        string    `json:"updatedAt,omitempty"`
	ObservationTimes []*string `json:"observationTimes"` // one per observation
	Out              []link    `json:"out"`
	In               []link    `json:"in"`
}

func entityAnswer(g *graph.Graph, name string) (any, int) {
	e := g.Entity(name)
	if e == nil {
		return map[string]string{"error": fmt.Sprintf("There is no entity named %q (any more).", name)}, http.StatusNotFound
	}
	p := entityPage{Name: e.Name, EntityType: e.EntityType, Observations: append([]string{}, e.Observations...),
		CreatedAt: e.Created.RFC3339(), UpdatedAt: e.Updated.RFC3339(), ObservationTimes: make([]*string, len(e.Observations)),
		Out: []link{}, In: []link{}}
	for i := range e.Observations {
		if t := e.ObservationTime(i); t.Known() {
			p.ObservationTimes[i] = new(t.String())
		}
	}
	out, in := g.RelationsOf(name)
	for _, r := range out {
		p.Out = append(p.Out, link{r.To, r.RelationType, g.Entity(r.To) != nil, r.Created.RFC3339()})
	}
	for _, r := range in {
		p.In = append(p.In, link{r.From, r.RelationType, g.Entity(r.From) != nil, r.Created.RFC3339()})
	}
	return p, http.StatusOK
}

type node struct {
	Name       string `json:"name"`
	EntityType string `json:"entityType"`
}

type edge struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

type picture struct {
	Nodes     []node `json:"nodes"`
	Edges     []edge `json:"edges"`
	Truncated bool   `json:"truncated"`
	Limit     int    `json:"limit"`
	Total     int    `json:"total"` // entities in the memory
}

// pictureAnswer selects the neighbourhood of name (depth 1 or 2, at most
// neighbourhoodLimit entities), or with no name the whole graph when it is
// small.
func pictureAnswer(g *graph.Graph, name string, depth int) (any, int) {
	total, _ := g.Len()
	var sel graph.Selection
	p := picture{Nodes: []node{}, Edges: []edge{}, Total: total}
	if name == "" {
		if total > wholeGraphLimit {
			return map[string]string{"error": fmt.Sprintf("The memory holds %d entities; a picture of all of them would be unreadable. Open an entity to see its neighbourhood.", total)}, http.StatusUnprocessableEntity
		}
		sel = g.All()
		p.Limit = wholeGraphLimit
	} else {
		if g.Entity(name) == nil {
			return map[string]string{"error": fmt.Sprintf("There is no entity named %q (any more).", name)}, http.StatusNotFound
		}
		depth = min(max(depth, 1), 2)
		sel, p.Truncated = g.Neighbourhood(name, depth, neighbourhoodLimit)
		p.Limit = neighbourhoodLimit
	}
	for _, e := range sel.Entities {
		p.Nodes = append(p.Nodes, node{e.Name, e.EntityType})
	}
	for _, r := range sel.Relations {
		if g.Entity(r.From) != nil && g.Entity(r.To) != nil {
			p.Edges = append(p.Edges, edge{r.From, r.To, r.RelationType})
		}
	}
	return p, http.StatusOK
}

// editRequest is one edit the page asks for. Op says which; the other
// fields are its arguments.
type editRequest struct {
	Op           string `json:"op"`
	Record       string `json:"record"` // restore: the recorded write's id
	Entity       string `json:"entity"`
	EntityType   string `json:"entityType"`
	Observation  string `json:"observation"`
	Old          string `json:"old"`
	NewName      string `json:"newName"`
	To           string `json:"to"`
	From         string `json:"from"`
	RelationType string `json:"relationType"`
}

// edit applies one edit as one write under the memory's lock: it validates
// first, and a failure changes nothing.
func (h *Handler) edit(w http.ResponseWriter, r *http.Request) {
	var req editRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "The edit could not be read: "+err.Error())
		return
	}
	var message string
	var apply func(*graph.Graph) error
	var err error
	if req.Op == "restore" {
		apply, err = h.restoreFunc(req.Record, &message)
	} else {
		apply, err = editFunc(req, &message)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	write := graph.Write{Tool: "page", Apply: apply}
	if h.opts.Client != nil {
		write.Client = h.opts.Client(r)
	}
	changed, err := h.store.Update(r.Context(), write)
	if err != nil {
		status, prefix := http.StatusConflict, "Nothing was changed: "
		var nf *graph.NotFoundError
		var ex *graph.ExistsError
		var rf *graph.RefusedError
		switch {
		case errors.As(err, &nf), errors.As(err, &ex), errors.As(err, &rf):
		case lockTimedOut(err):
			status = http.StatusServiceUnavailable
		default:
			// The store's error says what became of the change: a
			// database commit cut off may have landed.
			status, prefix = http.StatusInternalServerError, "The change failed: "
			h.opts.Logf("edit %s failed: %v", req.Op, err)
		}
		writeError(w, status, prefix+h.hide.Error(err))
		return
	}
	if changed {
		h.hub.broadcast()
	} else if req.Op == "restore" {
		message = "Nothing was restored: the memory already holds what the change removed."
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": message, "changed": changed})
}

// lockTimedOut reports whether err says another writer held the memory's
// lock past the lock timeout. Both stores' lock-timeout errors
// (filestore.ErrLockTimeout, pgstore.ErrLockTimeout) say so with a Timeout
// method, as net.Error does, so the page tells "busy, try again" from a
// failure without knowing which store it has.
func lockTimedOut(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// editFunc checks req and returns the write that applies it, which leaves
// what it did, for the page to show, in *message.
func editFunc(req editRequest, message *string) (func(*graph.Graph) error, error) {
	op, ok := editOps[req.Op]
	if !ok {
		return nil, fmt.Errorf("unknown edit %q", req.Op)
	}
	if op.required != nil {
		if err := need(op.required(req)...); err != nil {
			return nil, err
		}
	}
	return func(g *graph.Graph) error {
		m, err := op.apply(g, req)
		*message = m
		return err
	}, nil
}

// editOp is one kind of edit the page makes.
type editOp struct {
	// required returns the fields that must not be blank, as pairs of
	// what the page calls the field and its value; nil: none.
	required func(req editRequest) []string
	// apply makes the edit and says what it did.
	apply func(g *graph.Graph, req editRequest) (message string, err error)
}

// editOps are the page's edits, by the name the page sends.
var editOps = map[string]editOp{
	"createEntity": {
		required: func(req editRequest) []string { return []string{"the name", req.Entity, "the type", req.EntityType} },
		apply:    createEntity,
	},
	"addObservation": {
		required: func(req editRequest) []string { return []string{"the observation", req.Observation} },
		apply:    addObservation,
	},
	"changeObservation": {
		required: func(req editRequest) []string { return []string{"the observation", req.Observation} },
		apply:    changeObservation,
	},
	"deleteObservation": {apply: deleteObservation},
	"rename": {
		required: func(req editRequest) []string { return []string{"the new name", req.NewName} },
		apply:    renameEntity,
	},
	"deleteEntity": {apply: deleteEntity},
	"addRelation": {
		required: func(req editRequest) []string {
			return []string{"from", req.From, "to", req.To, "the relation type", req.RelationType}
		},
		apply: addRelation,
	},
	"deleteRelation": {apply: deleteRelation},
}

// need fails for the first of fields (pairs of a field's name and value)
// whose value is blank.
func need(fields ...string) error {
	for i := 0; i < len(fields); i += 2 {
		if strings.TrimSpace(fields[i+1]) == "" {
			return fmt.Errorf("%s is empty", fields[i])
		}
	}
	return nil
}

func createEntity(g *graph.Graph, req editRequest) (string, error) {
	if g.Entity(req.Entity) != nil {
		return "", &graph.ExistsError{Name: req.Entity}
	}
	g.CreateEntities([]graph.Entity{{Name: req.Entity, EntityType: req.EntityType, Observations: []string{}}})
	return fmt.Sprintf("Created %s.", req.Entity), nil
}

func addObservation(g *graph.Graph, req editRequest) (string, error) {
	res, err := g.AddObservations([]graph.ObservationAddition{{EntityName: req.Entity, Contents: []string{req.Observation}}})
	if err != nil {
		return "", err
	}
	if len(res.Results[0].AddedObservations) == 0 {
		return "The entity already has this observation.", nil
	}
	return "Observation added.", nil
}

func changeObservation(g *graph.Graph, req editRequest) (string, error) {
	return "Observation changed.", g.ReplaceObservation(req.Entity, req.Old, req.Observation)
}

func deleteObservation(g *graph.Graph, req editRequest) (string, error) {
	if g.Entity(req.Entity) == nil {
		return "", &graph.NotFoundError{Name: req.Entity}
	}
	res := g.DeleteObservations([]graph.ObservationDeletion{{EntityName: req.Entity, Observations: []string{req.Observation}}})
	if *res.DeletedCount == 0 {
		return "The observation was already gone.", nil
	}
	return "Observation deleted.", nil
}

func renameEntity(g *graph.Graph, req editRequest) (string, error) {
	res, err := g.Rename(req.Entity, req.NewName)
	return fmt.Sprintf("Renamed to %s; %s followed.", res.To, plural(res.Relations, "relation", "relations")), err
}

func deleteEntity(g *graph.Graph, req editRequest) (string, error) {
	if g.Entity(req.Entity) == nil {
		return "", &graph.NotFoundError{Name: req.Entity}
	}
	g.DeleteEntities([]string{req.Entity})
	return fmt.Sprintf("Deleted %s and its relations.", req.Entity), nil
}

func addRelation(g *graph.Graph, req editRequest) (string, error) {
	res, err := g.CreateRelations([]graph.Relation{{From: req.From, To: req.To, RelationType: req.RelationType}})
	if err != nil {
		return "", err
	}
	if len(res.Relations) == 0 {
		return "The relation already exists.", nil
	}
	return "Relation added.", nil
}

func deleteRelation(g *graph.Graph, req editRequest) (string, error) {
	res := g.DeleteRelations([]graph.Relation{{From: req.From, To: req.To, RelationType: req.RelationType}})
	if *res.DeletedCount == 0 {
		return "The relation was already gone.", nil
	}
	return "Relation deleted.", nil
}

// plural says n thing or n things.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
