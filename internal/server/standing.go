package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Standing preferences and instructions (docs/system-prompt.md): an
// observation, on any entity (the user's, usually), that begins with one of
// standingMarkers. The memory file holds them as ordinary observations, so
// the reference server and every other tool read, search and delete them
// like any other fact. What they add here: search_nodes answers carry them
// in a text item of their own whatever the query's words, and the
// standing resource lists them all, newest first.

// standingMarkers begin a standing fact's observation, compared without
// regard to case after leading spaces.
var standingMarkers = []string{"standing preference:", "standing instruction:"}

const (
	// StandingURI is the resource that lists every standing fact.
	StandingURI = "memory://standing-preferences"
	// maxStandingNote bounds the text item search answers gain: it is
	// read with every answer.
	maxStandingNote = 1024
	// maxStandingResource bounds the resource's text.
	maxStandingResource = 32 << 10
	standingHeading     = "Standing preferences and instructions of the user, newest first; follow them in this answer:"
)

// isStanding reports whether observation o is a standing fact.
func isStanding(o string) bool {
	i := 0
	for i < len(o) && (o[i] == ' ' || o[i] == '\t') {
		i++
	}
	// Most observations are not: their first letter says so.
	if i == len(o) || o[i]|0x20 != 's' {
		return false
	}
	o = o[i:]
	for _, m := range standingMarkers {
		if len(o) >= len(m) && strings.EqualFold(o[:len(m)], m) {
			return true
		}
	}
	return false
}

// standingFact is one standing observation and the entity that holds it.
type standingFact struct {
	entity, text string
	at           graph.Time // when it was written; 0: unknown
	pos          int        // order in the memory: entities, then observations
}

// standingFacts returns the memory's standing facts, newest first: by the
// time each was written, and those of unknown time after, the later in the
// memory first (observations are appended, so later is newer).
func standingFacts(g *graph.Graph) []standingFact {
	var facts []standingFact
	pos := 0
	for _, e := range g.Entities() {
		for i, o := range e.Observations {
			pos++
			if isStanding(o) {
				facts = append(facts, standingFact{entity: e.Name, text: o, at: e.ObservationTime(i), pos: pos})
			}
		}
	}
	slices.SortFunc(facts, func(a, b standingFact) int {
		if c := cmp.Compare(b.at, a.at); c != 0 {
			return c
		}
		return cmp.Compare(b.pos, a.pos)
	})
	return facts
}

// line is fact i of facts as a list shows it: under its entity's name,
// which heads each run of facts of one entity.
func line(facts []standingFact, i int) string {
	l := "- " + facts[i].text + "\n"
	if i == 0 || facts[i-1].entity != facts[i].entity {
		l = facts[i].entity + ":\n" + l
	}
	return l
}

// standingCache keeps the standing facts of the graph as it was last
// looked at: finding them reads every observation, which on a memory of
// 100,000 entities costs more than a twentieth of a search (BenchmarkStanding),
// and search answers need them every time.
type standingCache struct {
	mu          sync.Mutex
	id, version uint64
	found       bool
	list        []standingFact
}

// facts returns g's standing facts, newest first. The caller holds g
// (in a store's View), so its version cannot change meanwhile.
func (c *standingCache) facts(g *graph.Graph) []standingFact {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.found || c.id != g.ID() || c.version != g.Version() {
		c.id, c.version, c.found, c.list = g.ID(), g.Version(), true, standingFacts(g)
	}
	return c.list
}

// standingNote is the text item of a search answer: the newest standing
// facts that fit budget bytes, and how many more there are and where; ""
// when the memory holds none.
func standingNote(facts []standingFact, budget int) string {
	if len(facts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(standingHeading + "\n")
	more := func(n int) string {
		return fmt.Sprintf("(%d more: read the resource %s)", n, StandingURI)
	}
	for i := range facts {
		l := line(facts, i)
		rest := ""
		if i+1 < len(facts) {
			rest = more(len(facts) - i - 1)
		}
		if b.Len()+len(l)+len(rest) > budget {
			if i == 0 {
				// Not even the newest fits whole: say where they are.
				return standingHeading + " " + more(len(facts))
			}
			b.WriteString(more(len(facts) - i))
			return b.String()
		}
		b.WriteString(l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// standingBudget is the note's share of an answer limit: at most
// maxStandingNote bytes, and an eighth of a small limit.
func standingBudget(limit int) int {
	if limit > 0 {
		return min(maxStandingNote, limit/8)
	}
	return maxStandingNote
}

// withStanding adds the standing facts to a search answer.
func (s *Server) withStanding(g *graph.Graph, ans *answer.Answer, limit int) {
	if ans.Tool != "search_nodes" {
		return
	}
	if note := standingNote(s.standing.facts(g), standingBudget(limit)); note != "" {
		ans.Notes = append(slices.Clip(ans.Notes), note)
	}
}

// standingText is the resource's text: every standing fact, newest first,
// within maxStandingResource bytes.
func standingText(facts []standingFact) string {
	if len(facts) == 0 {
		return fmt.Sprintf("No standing preferences or instructions yet. Store one as an observation on the user's entity beginning with %q or %q.", "Standing preference: ", "Standing instruction: ")
	}
	var b strings.Builder
	b.WriteString(standingHeading + "\n")
	for i := range facts {
		l := line(facts, i)
		if b.Len()+len(l) > maxStandingResource-200 {
			fmt.Fprintf(&b, "(%d older ones left out to keep this under %d bytes: search_nodes with the query %q finds them)", len(facts)-i, maxStandingResource, "standing")
			return b.String()
		}
		b.WriteString(l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *Server) addStandingResource() {
	s.mcp.AddResource(&mcp.Resource{
		URI:         StandingURI,
		Name:        "standing-preferences",
		Title:       "Standing preferences and instructions",
		Description: "The user's standing preferences and instructions from memory, newest first: attach them to every chat",
		MIMEType:    "text/plain",
	}, s.readStanding)
}

func (s *Server) readStanding(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var text string
	if err := s.store.View(ctx, func(g *graph.Graph) error { text = standingText(s.standing.facts(g)); return nil }); err != nil {
		return nil, errInternal(s.clientError(req, err))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: StandingURI, MIMEType: "text/plain", Text: text}}}, nil
}
