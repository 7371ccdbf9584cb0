package cli

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
	"github.com/kgmemory/mcp-server-memory/internal/meaning"
)

var cmdStats = &command{
	name:    "stats",
	summary: "count entities, observations and relations, by type, and when they were learned",
	help: `Also when the memory learned its facts (entities, observations, relations),
as far as its times say (lines written by tools that keep no times have none):
the oldest and newest fact, and the facts learned on each of the last 30 days
(UTC), as one line with a mark per day, today's last. A memory file keeps a
history of its writes (<file>.history): a second line counts the writes it
recorded per day, deletions and undos included. --json gives them as "learned": {"oldest",
"newest", "known", "unknown", "perDay": [{"day", "count"}]} and "writes":
{"perDay": [...]}.
`,
	run: runStats,
}

// Stats is what stats prints.
type Stats struct {
	File  string `json:"file,omitempty"`  // a memory file
	Bytes *int64 `json:"bytes,omitempty"` // the file's size
	// Journal is the memory file's journal, when it holds writes the
	// file does not yet (a server runs, or one was killed).
	Journal           *JournalCount `json:"journal,omitempty"`
	Memory            string        `json:"memory,omitempty"` // a memory in a database
	Entities          int           `json:"entities"`
	Observations      int           `json:"observations"`
	Relations         int           `json:"relations"`
	DanglingRelations int           `json:"danglingRelations"`
	EntityTypes       []TypeCount   `json:"entityTypes"`
	RelationTypes     []TypeCount   `json:"relationTypes"`
	// Vectors counts search by meaning's vectors, when it is on.
	Vectors *VectorCount `json:"vectors,omitempty"`
	// Learned is what the memory's times say of when it learned its
	// facts (entities, observations, relations): the oldest and newest,
	// and how many were learned on each of the last graph.RecentDays days
	// (UTC). It counts what the memory holds now: a fact learned and
	// deleted since is not in it.
	Learned graph.Timeline `json:"learned"`
	// Writes counts the writes the memory's history recorded on each of
	// the last graph.RecentDays days (UTC), when the memory keeps a
	// history (unless MEMORY_HISTORY_DAYS is 0).
	Writes *WriteCount `json:"writes,omitempty"`
}

// JournalCount is what the journal beside a memory file holds that the
// file does not yet.
type JournalCount struct {
	Path   string `json:"path"`
	Writes int    `json:"writes"`
	Bytes  int64  `json:"bytes"`
}

// WriteCount is how many writes the history recorded per day.
type WriteCount struct {
	PerDay graph.PerDay `json:"perDay"`
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
	st := statsWhere(s)
	now := graph.TimeOf(time.Now())
	err = s.View(func(g *graph.Graph) {
		countGraph(g, &st, now)
	})
	if err != nil {
		return err
	}
	if err := c.countBeside(s, &st, now); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(st)
	}
	c.printStats(st, now)
	return nil
}

// statsWhere names where the memory is kept: its file and the file's
// size, or the store.
func statsWhere(s *memory) Stats {
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
	return st
}

// countGraph counts g's entities, observations and relations, by type,
// and what was learned lately.
func countGraph(g *graph.Graph, st *Stats, now graph.Time) {
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
	st.Learned = g.Timeline(now, graph.RecentDays)
}

// countBeside counts what is kept beside the graph: the journal's writes,
// the history's writes per day, the vectors.
func (c *context_) countBeside(s *memory, st *Stats, now graph.Time) error {
	if s.file != nil {
		if writes, n := s.file.Journal(); writes > 0 {
			st.Journal = &JournalCount{Path: s.file.Path() + ".journal", Writes: writes, Bytes: n}
		}
	}
	if h, ok := s.Store.(history.Reader); ok && !c.config.History.Off() {
		pd, err := history.RecentWrites(h, now, graph.RecentDays)
		if err != nil {
			return err
		}
		st.Writes = &WriteCount{pd}
	}
	if e := c.config.Embeddings; e.On() {
		have, want, err := meaning.Count(s.vectors(), e.Model, s.View)
		if err != nil {
			return err
		}
		st.Vectors = &VectorCount{Model: e.Model, Ready: have, Texts: want}
	}
	return nil
}

// printStats prints st for a person.
func (c *context_) printStats(st Stats, now graph.Time) {
	if st.File != "" {
		c.printf("Memory file     %s (%s)\n", st.File, fileSize(st))
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
	printLearned(c, st.Learned, now)
	if st.Learned.Known > 0 {
		printPerDay(c, "Facts learned   ", st.Learned.PerDay)
	}
	if st.Writes != nil {
		printPerDay(c, "Writes          ", st.Writes.PerDay)
	}
}

// fileSize is the memory file's size, and what its journal adds when it
// holds writes the file does not yet.
func fileSize(st Stats) string {
	what := size(*st.Bytes)
	if *st.Bytes == 0 && st.Journal != nil {
		what = "not written yet"
	}
	if j := st.Journal; j != nil {
		what += fmt.Sprintf("; %s not yet in it, in its journal (%s)", plural(j.Writes, "write", "writes"), size(j.Bytes))
	}
	return what
}

// printLearned says what the memory's times say of when it learned its
// facts: the oldest and newest.
func printLearned(c *context_, tl graph.Timeline, now graph.Time) {
	if tl.Known == 0 {
		if tl.Unknown > 0 {
			c.printf("Learned         unknown: no fact here says when it was learned (written by tools that keep no times)\n")
		}
		return
	}
	exact := when{exact: true}
	c.printf("Oldest fact     %s, %s\n", exact.say(tl.Oldest), tl.Oldest.Ago(now))
	c.printf("Newest fact     %s, %s\n", exact.say(tl.Newest), tl.Newest.Ago(now))
	if tl.Unknown > 0 {
		c.printf("Without a time  %s (written by tools that keep no times)\n", plural(tl.Unknown, "fact", "facts"))
	}
}

// printPerDay prints counts per day after label: the total, and a line
// with one mark per day.
func printPerDay(c *context_, label string, pd graph.PerDay) {
	days := pd.Days()
	total, most := 0, 0
	for _, n := range pd.Counts {
		total += n
		most = max(most, n)
	}
	c.printf("%s%d in the last %d days (UTC, %s to today)", label, total, len(days), days[0].Day)
	if total > 0 {
		c.printf(", at most %d a day:\n%s%s\n", most, strings.Repeat(" ", len(label)), sparkline(pd.Counts))
	} else {
		c.printf("\n")
	}
}

// sparkline draws counts as one line of block characters, the highest
// count a full block; "·" is none.
func sparkline(counts []int) string {
	const blocks = "▁▂▃▄▅▆▇█"
	most := slices.Max(counts)
	var b strings.Builder
	for _, n := range counts {
		if n == 0 {
			b.WriteString("·")
			continue
		}
		level := (n*8 + most - 1) / most // 1…8
		b.WriteString(string([]rune(blocks)[level-1]))
	}
	return b.String()
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
		snap, exact = searched(g, query)
	}); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(snap)
	}
	c.printFound(snap, exact, query, *limit)
	return nil
}

// searched is what search_nodes finds for query, and how many of the
// leading entities contain it whole.
func searched(g *graph.Graph, query string) (snap graph.Snapshot, exact int) {
	found := g.SearchRanked(query, graph.DefaultSearchLimit)
	for _, h := range found.Hits {
		snap.Entities = append(snap.Entities, graph.Entity{Name: h.Entity.Name, EntityType: h.Entity.EntityType, Observations: h.Observations()})
	}
	for _, r := range found.Relations {
		snap.Relations = append(snap.Relations, graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType})
	}
	return snap, found.Exact
}

// printFound prints up to limit (0: all) of the entities found for a
// person, three observations each, those containing the query first.
func (c *context_) printFound(snap graph.Snapshot, exact int, query string, limit int) {
	if len(snap.Entities) == 0 {
		c.printf("No entity matches %q.\n", query)
		return
	}
	switch {
	case exact == 0:
		c.printf("No entity contains %q; the closest by the words they share with it:\n\n", query)
	default:
		c.printf("%s %s %q:\n\n", plural(exact, "entity", "entities"), map[bool]string{true: "matches", false: "match"}[exact == 1], query)
	}
	shown := snap.Entities
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
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
}

// oneLine shows s on one terminal line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\r", " ⏎ ").Replace(s)
}

var cmdShow = &command{
	name:    "show",
	args:    "NAME…",
	summary: "print entities with their observations and relations both ways",
	help: `Names are exact (case-sensitive). A name that matches no entity is an error (exit 1)
after the others are shown.

Each entity and observation says when it was learned ("learned 3 days ago"),
where the memory knows it (lines written by other tools carry no times).

  --times   the exact times (UTC) instead, of the relations too, and when
            each entity last changed. --json always holds them: createdAt,
            updatedAt, observationTimes (null: unknown), as the tools'
            showTimes gives them.
`,
	run: runShow,
}

// shown is what show --json prints.
type shown struct {
	Entities  []shownEntity   `json:"entities"`
	Relations []shownRelation `json:"relations"`
	NotFound  []string        `json:"notFound"`
}

// shownEntity is an entity with when it was learned, where known, as the
// tools' showTimes says it (docs/design.md §8).
type shownEntity struct {
	graph.Entity
	CreatedAt        string    `json:"createdAt,omitempty"`
	UpdatedAt        string    `json:"updatedAt,omitempty"` // when it differs
	ObservationTimes []*string `json:"observationTimes,omitempty"`
}

type shownRelation struct {
	graph.Relation
	CreatedAt string `json:"createdAt,omitempty"`
}

func showEntity(e *graph.Entity) shownEntity {
	s := shownEntity{Entity: graph.Entity{Name: e.Name, EntityType: e.EntityType, Observations: slices.Clone(e.Observations)}, CreatedAt: e.Created.RFC3339()}
	if e.Updated != e.Created {
		s.UpdatedAt = e.Updated.RFC3339()
	}
	if e.HasObservationTimes() {
		s.ObservationTimes = make([]*string, len(e.Observations))
		for i := range e.Observations {
			if t := e.ObservationTime(i); t.Known() {
				s.ObservationTimes[i] = new(t.String())
			}
		}
	}
	return s
}

// when says when a fact was learned: "3 days ago", or with --times
// "2026-11-30 09:15:00 UTC"; "" when unknown.
type when struct {
	now   graph.Time
	exact bool
}

func (w when) say(t graph.Time) string {
	switch {
	case !t.Known():
		return ""
	case w.exact:
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	default:
		return t.Ago(w.now)
	}
}

// after is what follows a fact on its line: " · " and what w says of t,
// or "" when t is unknown.
func (w when) after(t graph.Time) string {
	if !t.Known() {
		return ""
	}
	return " · " + w.say(t)
}

func runShow(c *context_, args []string) error {
	exact := c.flags.Bool("times", false, "")
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
	sh := showing{at: when{now: graph.TimeOf(time.Now()), exact: *exact}, seenRel: map[*graph.Relation]bool{},
		out: shown{Entities: []shownEntity{}, Relations: []shownRelation{}, NotFound: []string{}}}
	if err := s.View(func(g *graph.Graph) { sh.entities(g, names) }); err != nil {
		return err
	}
	if c.json {
		if err := c.printJSON(sh.out); err != nil {
			return err
		}
	} else {
		c.printf("%s", strings.TrimSuffix(sh.text.String(), "\n"))
	}
	return reportNotFound(c, sh.out.NotFound)
}

// showing is one show command's output in the making: the text for people
// and the value --json prints.
type showing struct {
	at      when
	out     shown
	text    strings.Builder
	seenRel map[*graph.Relation]bool
}

// entities shows the entities names (each once), and notes the names g
// has no entity for.
func (sh *showing) entities(g *graph.Graph, names []string) {
	seen := make(map[string]bool)
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		e := g.Entity(name)
		if e == nil {
			sh.out.NotFound = append(sh.out.NotFound, name)
			continue
		}
		sh.out.Entities = append(sh.out.Entities, showEntity(e))
		sh.entityText(e)
		outRels, inRels := g.RelationsOf(e.Name)
		sh.relationsText(g, outRels, inRels)
		sh.text.WriteString("\n")
		for _, list := range [2][]*graph.Relation{outRels, inRels} {
			for _, r := range list {
				if !sh.seenRel[r] {
					sh.seenRel[r] = true
					sh.out.Relations = append(sh.out.Relations, shownRelation{graph.Relation{From: r.From, To: r.To, RelationType: r.RelationType}, r.Created.RFC3339()})
				}
			}
		}
	}
}

// entityText writes the entity's line and its observations' lines.
func (sh *showing) entityText(e *graph.Entity) {
	at := sh.at
	learned := ""
	if e.Created.Known() {
		learned = " · learned " + at.say(e.Created)
		if at.exact && e.Updated.Known() && e.Updated != e.Created {
			learned += ", changed " + at.say(e.Updated)
		}
	}
	fmt.Fprintf(&sh.text, "%s (%s)%s\n", oneLine(e.Name), oneLine(e.EntityType), learned)
	if len(e.Observations) == 0 {
		sh.text.WriteString("  no observations\n")
	}
	for i, o := range e.Observations {
		fmt.Fprintf(&sh.text, "  - %s%s\n", oneLine(o), at.after(e.ObservationTime(i)))
	}
}

// relationsText writes an entity's relations both ways, a self-relation
// once (as outgoing); a relation's time only with --times, so that the
// default stays short.
func (sh *showing) relationsText(g *graph.Graph, outRels, inRels []*graph.Relation) {
	relTime := func(r *graph.Relation) string {
		if !sh.at.exact {
			return ""
		}
		return sh.at.after(r.Created)
	}
	for _, r := range outRels {
		fmt.Fprintf(&sh.text, "  → %s %s%s%s\n", oneLine(r.RelationType), oneLine(r.To), missingMark(g, r.To), relTime(r))
	}
	for _, r := range inRels {
		if r.From != r.To {
			fmt.Fprintf(&sh.text, "  ← %s %s%s%s\n", oneLine(r.RelationType), oneLine(r.From), missingMark(g, r.From), relTime(r))
		}
	}
}

// reportNotFound says which names show found no entity for (exit 1), or
// returns nil.
func reportNotFound(c *context_, notFound []string) error {
	if len(notFound) == 0 {
		return nil
	}
	quoted := make([]string, len(notFound))
	for i, n := range notFound {
		quoted[i] = strconv.Quote(n)
	}
	c.logf("no entity named %s (names are exact; try: mcp-server-memory search)", strings.Join(quoted, ", "))
	return errReported
}

func missingMark(g *graph.Graph, name string) string {
	if g.Entity(name) == nil {
		return " (missing entity)"
	}
	return ""
}
