package cli

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
)

var cmdStats = &command{
	name:    "stats",
	summary: "count entities, observations and relations, by type",
	run:     runStats,
}

// Stats is what stats prints.
type Stats struct {
	File              string      `json:"file,omitempty"`   // a memory file
	Bytes             *int64      `json:"bytes,omitempty"`  // the file's size
	Memory            string      `json:"memory,omitempty"` // a memory in a database
	Entities          int         `json:"entities"`
	Observations      int         `json:"observations"`
	Relations         int         `json:"relations"`
	DanglingRelations int         `json:"danglingRelations"`
	EntityTypes       []TypeCount `json:"entityTypes"`
	RelationTypes     []TypeCount `json:"relationTypes"`
	// Vectors counts search by meaning's vectors, when it is on.
	Vectors *VectorCount `json:"vectors,omitempty"`
}

// VectorCount is how many of a memory's texts (one per observation, one
// for an entity with none) have a vector by the model configured.
type VectorCount struct {
	Model string `json:"model"`
	Ready int    `json:"ready"`
	Texts int    `json:"texts"`
}

// TypeCount is how many entities or relations have one type.
type TypeCount struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

func runStats(c *context_, args []string) error {
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("stats takes no arguments")
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	var st Stats
	if f, ok := s.Store.(interface{ Path() string }); ok {
		st.File = f.Path()
		var n int64
		if fi, err := os.Stat(st.File); err == nil {
			n = fi.Size()
		}
		st.Bytes = &n
	} else {
		st.Memory = s.where
	}
	err = s.View(func(g *graph.Graph) {
		entityTypes := make(map[string]int)
		for _, e := range g.Entities() {
			st.Observations += len(e.Observations)
			entityTypes[e.EntityType]++
		}
		relationTypes := make(map[string]int)
		for _, r := range g.Relations() {
			relationTypes[r.RelationType]++
			if g.Entity(r.From) == nil || g.Entity(r.To) == nil {
				st.DanglingRelations++
			}
		}
		st.Entities, st.Relations = g.Len()
		st.EntityTypes, st.RelationTypes = byCount(entityTypes), byCount(relationTypes)
	})
	if err != nil {
		return err
	}
	if e := c.config.Embeddings; e.On() {
		have, want, err := meaning.Count(s.vectors(), e.Model, s.View)
		if err != nil {
			return err
		}
		st.Vectors = &VectorCount{Model: e.Model, Ready: have, Texts: want}
	}
	if c.json {
		return c.printJSON(st)
	}
	if st.File != "" {
		c.printf("Memory file     %s (%s)\n", st.File, size(*st.Bytes))
	} else {
		c.printf("Memory          %s\n", st.Memory)
	}
	c.printf("Entities        %d\n", st.Entities)
	c.printf("Observations    %d\n", st.Observations)
	c.printf("Relations       %d\n", st.Relations)
	if st.DanglingRelations > 0 {
		c.printf("                %s to missing entities (see: mcp-server-memory check)\n", plural(st.DanglingRelations, "relation points", "relations point"))
	}
	c.printf("Entity types    %s\n", topTypes(st.EntityTypes, 10))
	c.printf("Relation types  %s\n", topTypes(st.RelationTypes, 10))
	if v := st.Vectors; v != nil {
		c.printf("Vectors         %d of %d texts, by model %q\n", v.Ready, v.Texts, v.Model)
	}
	return nil
}

// byCount orders types by count, most first, then by name.
func byCount(m map[string]int) []TypeCount {
	out := make([]TypeCount, 0, len(m))
	for t, n := range m {
		out = append(out, TypeCount{t, n})
	}
	slices.SortFunc(out, func(a, b TypeCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Type, b.Type))
	})
	return out
}

func topTypes(types []TypeCount, n int) string {
	if len(types) == 0 {
		return "none"
	}
	parts := make([]string, 0, n+1)
	for i, t := range types {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(types)-n))
			break
		}
		name := oneLine(t.Type)
		if name == "" {
			name = `""`
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, t.Count))
	}
	return strings.Join(parts, ", ")
}

func size(n int64) string {
	switch {
	case n < 1000:
		return plural(int(n), "byte", "bytes")
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
	}
}

var cmdSearch = &command{
	name:    "search",
	args:    "QUERY",
	summary: "find entities as search_nodes finds them, best first",
	help: `The query matches as the server's search_nodes matches and ranks: the whole
query, or every word of it, in an entity's name, type or observations, with
case and width folded (so ПРИВЕТ finds привет, ＰＹＴＨＯＮ finds python).

  --limit N     show at most N entities (default 20; 0: all). --json
                prints every match with its relations, as search_nodes.
`,
	run: runSearch,
}

func runSearch(c *context_, args []string) error {
	limit := c.flags.Int("limit", 20, "")
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("search takes one QUERY (quote it when it has spaces)")
	}
	query := args[0]
	if n := utf8.RuneCountInString(query); n > graph.MaxQueryLength {
		return usagef("the query is %d characters long; the limit is %d", n, graph.MaxQueryLength)
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	// Ranked as search_nodes ranks, each entity's matching observations
	// first.
	var snap graph.Snapshot
	exact := 0 // the leading entities that contain the whole query
	if err := s.View(func(g *graph.Graph) {
		found := g.SearchRanked(query, graph.DefaultSearchLimit)
		exact = found.Exact
		for _, h := range found.Hits {
			snap.Entities = append(snap.Entities, graph.Entity{Name: h.Entity.Name, EntityType: h.Entity.EntityType, Observations: h.Observations()})
		}
		for _, r := range found.Relations {
			snap.Relations = append(snap.Relations, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType})
		}
	}); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(snap)
	}
	if len(snap.Entities) == 0 {
		c.printf("No entity matches %q.\n", query)
		return nil
	}
	switch {
	case exact == 0:
		c.printf("No entity contains %q; the closest by the words they share with it:\n\n", query)
	default:
		c.printf("%s %s %q:\n\n", plural(exact, "entity", "entities"), map[bool]string{true: "matches", false: "match"}[exact == 1], query)
	}
	shown := snap.Entities
	if *limit > 0 && len(shown) > *limit {
		shown = shown[:*limit]
	}
	for i, e := range shown {
		if i == exact && exact > 0 {
			c.printf("\nThe closest others by the words they share with it:\n\n")
		}
		c.printf("%s (%s)\n", oneLine(e.Name), oneLine(e.EntityType))
		obs := e.Observations
		for i, o := range obs {
			if i == 3 {
				c.printf("    … %d more\n", len(obs)-3)
				break
			}
			c.printf("    %s\n", oneLine(o))
		}
	}
	if len(shown) < len(snap.Entities) {
		c.printf("\n… and %d more (--limit 0 shows all).\n", len(snap.Entities)-len(shown))
	}
	return nil
}

// oneLine shows s on one terminal line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ").Replace(s)
}

var cmdShow = &command{
	name:    "show",
	args:    "NAME…",
	summary: "print entities with their observations and relations both ways",
	help:    "Names are exact (case-sensitive). A name that matches no entity is an error (exit 1)\nafter the others are shown.\n",
	run:     runShow,
}

// shown is what show --json prints.
type shown struct {
	Entities  []graph.Entity   `json:"entities"`
	Relations []graph.Relation `json:"relations"`
	NotFound  []string         `json:"notFound"`
}

func runShow(c *context_, args []string) error {
	names, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usagef("show takes at least one entity NAME")
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	out := shown{Entities: []graph.Entity{}, Relations: []graph.Relation{}, NotFound: []string{}}
	var text strings.Builder
	err = s.View(func(g *graph.Graph) {
		seenRel := make(map[*graph.Relation]bool)
		seen := make(map[string]bool)
		for _, name := range names {
			if seen[name] {
				continue
			}
			seen[name] = true
			e := g.Entity(name)
			if e == nil {
				out.NotFound = append(out.NotFound, name)
				continue
			}
			out.Entities = append(out.Entities, graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: slices.Clone(e.Observations)})
			fmt.Fprintf(&text, "%s (%s)\n", oneLine(e.Name), oneLine(e.EntityType))
			if len(e.Observations) == 0 {
				text.WriteString("  no observations\n")
			}
			for _, o := range e.Observations {
				fmt.Fprintf(&text, "  - %s\n", oneLine(o))
			}
			outRels, inRels := g.RelationsOf(e.Name)
			for _, r := range outRels {
				fmt.Fprintf(&text, "  → %s %s%s\n", oneLine(r.RelationType), oneLine(r.To), missingMark(g, r.To))
			}
			for _, r := range inRels {
				if r.From == r.To {
					continue // a self-relation was shown as outgoing
				}
				fmt.Fprintf(&text, "  ← %s %s%s\n", oneLine(r.RelationType), oneLine(r.From), missingMark(g, r.From))
			}
			text.WriteString("\n")
			for _, list := range [2][]*graph.Relation{outRels, inRels} {
				for _, r := range list {
					if !seenRel[r] {
						seenRel[r] = true
						out.Relations = append(out.Relations, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType})
					}
				}
			}
		}
	})
	if err != nil {
		return err
	}
	if c.json {
		if err := c.printJSON(out); err != nil {
			return err
		}
	} else {
		c.printf("%s", strings.TrimSuffix(text.String(), "\n"))
	}
	if len(out.NotFound) > 0 {
		quoted := make([]string, len(out.NotFound))
		for i, n := range out.NotFound {
			quoted[i] = strconv.Quote(n)
		}
		c.logf("no entity named %s (names are exact; try: mcp-server-memory search)", strings.Join(quoted, ", "))
		return errReported
	}
	return nil
}

func missingMark(g *graph.Graph, name string) string {
	if g.Entity(name) == nil {
		return " (missing entity)"
	}
	return ""
}
