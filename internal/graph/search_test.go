package graph

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"already lower", "already lower"},
		{"Python", "python"},
		{"ＰＹＴＨＯＮ", "python"},
		{"МОСКВА", "москва"},
		{"Москва", "москва"},
		{"Straße", "strasse"},
		{"STRASSE", "strasse"},
		{"ΚΟΣΜΟΣ", "κοσμοσ"},
		{"κοσμος", "κοσμοσ"},
		{"ｶﾀｶﾅ", "カタカナ"},
		{"東京に住んでいる", "東京に住んでいる"},
		{"ﬁle", "file"},
		{"Ⅻ", "xii"},
		{"①", "1"},
		{"Mu\u0308nchen", "münchen"}, // decomposed ü is composed
		{"İstanbul", "i\u0307stanbul"},
		{"full\u3000width space", "full width space"},
	}
	for _, tt := range tests {
		if got := Fold(tt.in); got != tt.want {
			t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Strings a user would call the same text must fold to one form.
func TestFoldMeets(t *testing.T) {
	tests := []struct {
		name string
		same []string
	}{
		{"Latin case and full-width", []string{"ＰＹＴＨＯＮ", "python", "Python", "PYTHON", "ｐｙｔｈｏｎ"}},
		{"Cyrillic case", []string{"МОСКВА", "Москва", "москва"}},
		{"Greek final and medial sigma", []string{"ΚΟΣΜΟΣ", "κοσμος", "κοσμοσ", "Κοσμος"}},
		{"German sharp s", []string{"Straße", "STRASSE", "strasse", "STRAẞE"}},
		{"half-width and full-width katakana", []string{"ｶﾀｶﾅ", "カタカナ"}},
		{"composed and decomposed", []string{"München", "Mu\u0308nchen", "MÜNCHEN", "MU\u0308NCHEN"}},
		{"Cherokee capital and small letters", []string{"\u13a0\u13a1", "\uab70\uab71", "\u13a0\uab71"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Fold(tt.same[0])
			for _, s := range tt.same[1:] {
				if got := Fold(s); got != want {
					t.Errorf("Fold(%q) = %q (%U), but Fold(%q) = %q (%U)", s, got, []rune(got), tt.same[0], want, []rune(want))
				}
			}
			for _, s := range tt.same {
				if f := Fold(s); Fold(f) != f {
					t.Errorf("Fold is not idempotent on %q: %q then %q", s, f, Fold(f))
				}
			}
		})
	}
}

// searchGraph is a small graph for search tests: people, places and what
// they know.
func searchGraph(t *testing.T) *Graph {
	return newGraph(t,
		[]Entity{
			ent("Alice", "person", "works at Acme", "likes green tea"),
			ent("Bob", "Person", "lives in Paris"),
			ent("Acme", "company", "makes anvils"),
			ent("Paris", "city", "capital of France"),
			ent("tea-house", "place", "serves Tea"),
		},
		[]Relation{
			rel("Alice", "works_at", "Acme"),
			rel("Bob", "lives_in", "Paris"),
			rel("Alice", "knows", "Bob"),
			rel("tea-house", "in", "Paris"),
		})
}

func TestSearchNodesReferenceRule(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"alice", []string{"Alice"}},
		{"ALICE", []string{"Alice"}},
		{"person", []string{"Alice", "Bob"}},    // type, either case
		{"PARIS", []string{"Paris", "Bob"}},     // name before observation
		{"acme", []string{"Acme", "Alice"}},     // name before observation
		{"tea", []string{"tea-house", "Alice"}}, // every entity holding the text
		{"es in pa", []string{"Bob"}},           // any substring, across word boundaries
		{"anvil", []string{"Acme"}},
		{"o", []string{"Bob", "tea-house", "Alice", "Acme", "Paris"}}, // names, types, then observations
		{"nobody", nil},
		{"alice bob", nil}, // Bob is in no field of Alice
		{"works_at", nil},  // relation types are not searched
	}
	g := searchGraph(t)
	for _, tt := range tests {
		if got := names(searchNodes(g, tt.query).Entities); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("SearchNodes(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchNodesUnicode(t *testing.T) {
	tests := []struct {
		name   string
		entity Entity
		query  string
		found  bool
	}{
		{"full-width query, ASCII name", ent("Python", "language"), "ＰＹＴＨＯＮ", true},
		{"ASCII query, full-width name", ent("ＰＹＴＨＯＮ", "language"), "python", true},
		{"capitalised query, upper-case type", ent("snake", "PYTHON"), "Python", true},
		{"lower-case query, full-width observation", ent("me", "person", "writes ＰＹＴＨＯＮ daily"), "python", true},
		{"Cyrillic upper-case query", ent("Москва", "город"), "МОСКВА", true},
		{"Cyrillic lower-case query, mixed-case observation", ent("Ivan", "person", "живёт в Москве"), "москве", true},
		{"Cyrillic query, Latin transliteration", ent("Москва", "город"), "Moskva", false},
		{"Japanese query in an observation", ent("Taro", "person", "東京に住んでいる"), "東京", true},
		{"Japanese query not present", ent("Taro", "person", "東京に住んでいる"), "大阪", false},
		{"half-width katakana query", ent("カタカナ", "script"), "ｶﾀｶﾅ", true},
		{"full-width katakana query, half-width text", ent("words", "script", "ｶﾀｶﾅで書く"), "カタカナ", true},
		{"Greek query with medial sigma, text with final sigma", ent("κοσμος", "word"), "ΚΟΣΜΟΣ", true},
		{"Greek final sigma query", ent("ΚΟΣΜΟΣ", "word"), "κοσμος", true},
		{"German: STRASSE finds Straße", ent("Hauptstraße", "street"), "STRASSE", true},
		{"German: straße finds STRASSE", ent("HAUPTSTRASSE", "street"), "straße", true},
		{"composed query, decomposed text", ent("Mu\u0308nchen", "city"), "münchen", true},
		{"decomposed query, composed text", ent("München", "city"), "MU\u0308NCHEN", true},
		{"accents are not ignored", ent("café", "place"), "cafè", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGraph(t, []Entity{tt.entity}, nil)
			got := searchNodes(g, tt.query).Entities
			if found := len(got) == 1; found != tt.found {
				t.Errorf("SearchNodes(%q) over %s = %q, want found = %v", tt.query, describe(Snapshot{Entities: []Entity{tt.entity}}), names(got), tt.found)
			}
		})
	}
}

// The reference server lower-cases the query and each field and looks for a
// substring; docs/design.md §2 says every entity it finds must be found here
// too. Each case is a query and a stored text the reference matches.
func TestSearchNodesReturnsEveryReferenceMatch(t *testing.T) {
	tests := []struct {
		name, query, text string
	}{
		{"ASCII, different case", "ACME", "works at acme"},
		{"Cyrillic, different case", "ПРИВЕТ", "привет мир"},
		{"Greek", "ΑΘΗΝΑ", "αθηνα"},
		{"dotted capital I", "İstanbul", "i\u0307stanbul"},
		{"Japanese", "東京", "東京に住んでいる"},
		{"emoji", "🚀", "loves 🚀 launches"},
		// JavaScript: "café".toLowerCase().includes("cafe") when the text
		// is decomposed (NFD, as macOS often produces); NFKC composes the
		// text before the comparison and the prefix no longer occurs.
		{"query ends before a combining mark (decomposed text)", "cafe", "cafe\u0301 au lait"},
		// JavaScript lower-cases both to U+AB70; golang.org/x/text/cases.Fold
		// maps U+13A0 to U+AB70 but U+AB70 to U+13A0, so they never meet.
		{"Cherokee capital query, small-letter text", "\u13a0", "\uab70"},
		{"Cherokee small-letter query, capital text", "\uab70", "\u13a0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(jsLower(tt.text), jsLower(tt.query)) {
				t.Fatalf("bad case: the reference rule does not match %q in %q", tt.query, tt.text)
			}
			for _, e := range []Entity{ent(tt.text, "t"), ent("x", tt.text), ent("x", "t", "other", tt.text)} {
				g := newGraph(t, []Entity{e}, nil)
				if got := searchNodes(g, tt.query).Entities; len(got) != 1 {
					t.Errorf("SearchNodes(%q) over %s found nothing; the reference finds it (%U in %U)",
						tt.query, describe(Snapshot{Entities: []Entity{e}}), []rune(tt.query), []rune(tt.text))
				}
			}
		})
	}
}

// jsLower approximates JavaScript's String.prototype.toLowerCase, which the
// reference uses: Go's strings.ToLower maps İ to plain i, JavaScript to i
// and a combining dot. (Final sigma is not needed by the cases here.)
func jsLower(s string) string { return strings.ToLower(strings.ReplaceAll(s, "İ", "i\u0307")) }

func TestSearchNodesAllWords(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Alice", "person", "works at Acme"),
		ent("Bob", "person", "lives in Paris"),
		ent("Carol", "robot", "works at Acme", "lives in Paris"),
		ent("Acme", "company"),
	}, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"alice acme", []string{"Alice"}},            // name and observation
		{"ACME alice", []string{"Alice"}},            // word order does not matter
		{"person paris", []string{"Bob"}},            // type and observation; Alice has only one word
		{"acme paris", []string{"Carol"}},            // two observations
		{"  alice\tacme  ", []string{"Alice"}},       // any white space between words
		{"acme company", []string{"Acme"}},           // name and type
		{"robot person", nil},                        // no entity holds both
		{"alice bob", nil},                           // each word in a different entity
		{"acme", []string{"Acme", "Alice", "Carol"}}, // one word: the whole-query rule only
		{"works acme", []string{"Alice", "Carol"}},   // both words in one observation, not adjacent
		{"at acme", []string{"Alice", "Carol"}},      // whole-query observation matches
		{"ａｌｉｃｅ　ＡＣＭＥ", []string{"Alice"}},            // full-width words and ideographic space
	}
	for _, tt := range tests {
		if got := names(searchNodes(g, tt.query).Entities); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("SearchNodes(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchNodesRanking(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Notes", "memo", "a rust lang book"),      // observation
		ent("Words", "lang", "rust"),                  // all words
		ent("Kind", "Rust Lang community"),            // type
		ent("Rust Lang", "x"),                         // name
		ent("Other", "x", "nothing"),                  // none
		ent("RUST LANG foundation", "x", "rust lang"), // name (and observation)
		ent("Obs2", "x", "I like RUST LANG"),          // observation
		ent("Split", "rust", "lang"),                  // all words
		ent("rust", "y"),                              // one word only: none
		ent("Both", "rust lang", "rust lang"),         // type (and observation)
	}, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"rust lang", []string{"Rust Lang", "RUST LANG foundation", "Kind", "Both", "Notes", "Obs2", "Words", "Split"}},
		{"rust", []string{"Rust Lang", "RUST LANG foundation", "rust", "Kind", "Split", "Both", "Notes", "Words", "Obs2"}},
		{"lang", []string{"Rust Lang", "RUST LANG foundation", "Words", "Kind", "Both", "Notes", "Obs2", "Split"}},
	}
	for _, tt := range tests {
		if got := names(searchNodes(g, tt.query).Entities); !slices.Equal(got, tt.want) {
			t.Errorf("SearchNodes(%q) =\n %q\nwant\n %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchNodesRelations(t *testing.T) {
	g := searchGraph(t)
	tests := []struct {
		query string
		want  string
	}{
		{"bob", "Bob/Person[lives in Paris] | Bob-lives_in->Paris Alice-knows->Bob"},
		{"anvils", "Acme/company[makes anvils] | Alice-works_at->Acme"},
		{"france", "Paris/city[capital of France] | Bob-lives_in->Paris tea-house-in->Paris"},
		{"person", "Alice/person[works at Acme,likes green tea] Bob/Person[lives in Paris] | Alice-works_at->Acme Bob-lives_in->Paris Alice-knows->Bob"},
		{"nobody", ""},
	}
	for _, tt := range tests {
		if got := describe(searchNodes(g, tt.query)); got != tt.want {
			t.Errorf("SearchNodes(%q) =\n %q\nwant\n %q", tt.query, got, tt.want)
		}
	}
	assertJSON(t, "SearchNodes with no match", searchNodes(g, "nobody"), `{"entities":[],"relations":[]}`)
}

// The reference matches the empty string everywhere: an empty query returns
// the whole graph, in graph order.
func TestSearchNodesEmptyQuery(t *testing.T) {
	g := searchGraph(t)
	g.DeleteEntities([]string{"Acme"})
	g.CreateEntities([]Entity{ent("Acme", "company")})
	if got, want := describe(searchNodes(g, "")), describe(g.ReadGraph()); got != want {
		t.Errorf("SearchNodes(\"\") =\n %q\nwant the whole graph\n %q", got, want)
	}
}

// Search folds each entity once and keeps the result; every change must be
// seen by the next search.
func TestSearchNodesSeesChanges(t *testing.T) {
	g := newGraph(t, []Entity{ent("Alice", "person", "likes tea")}, nil)
	search := func(q string) []string { return names(searchNodes(g, q).Entities) }
	if got := search("tea"); !slices.Equal(got, []string{"Alice"}) {
		t.Fatalf("search tea = %q", got)
	}
	if got := search("coffee"); len(got) != 0 {
		t.Fatalf("search coffee = %q", got)
	}
	g.AddObservations([]ObservationAddition{{"Alice", []string{"likes ＣＯＦＦＥＥ"}}})
	if got := search("coffee"); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("after add_observations, search coffee = %q, want [Alice]", got)
	}
	g.DeleteObservations([]ObservationDeletion{{"Alice", []string{"likes tea"}}})
	if got := search("tea"); len(got) != 0 {
		t.Errorf("after delete_observations, search tea = %q, want nothing", got)
	}
	g.DeleteEntities([]string{"Alice"})
	if got := search("alice"); len(got) != 0 {
		t.Errorf("after delete_entities, search alice = %q, want nothing", got)
	}
	g.CreateEntities([]Entity{ent("Alice", "robot")})
	if got := search("robot"); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("after re-creating, search robot = %q, want [Alice]", got)
	}
	if got := search("coffee"); len(got) != 0 {
		t.Errorf("after re-creating, search coffee = %q, want nothing", got)
	}
	// Storage caches encoded lines in the same per-entity state.
	g.Entity("Alice").SetEncodedLine([]byte("line"))
	g.AddObservations([]ObservationAddition{{"Alice", []string{"oil"}}})
	if g.Entity("Alice").EncodedLine() != nil {
		t.Errorf("encoded line survived a change")
	}
	if got := search("oil"); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("after add_observations, search oil = %q, want [Alice]", got)
	}
	g.LoadEntity(ent("Alice", "ignored", "merged fact"))
	if got := search("merged"); !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("after a merge, search merged = %q, want [Alice]", got)
	}
}

// TestSearchTextFoldsEachText checks the folding of a whole entity into one
// buffer (searchText) against folding each of its texts on its own, on texts
// of every script the fast path knows and some it does not.
func TestSearchTextFoldsEachText(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"", "a", "Work", "ТЕКСТ", "привет", "Ωmega", "東京", "カタカナ", "ÀÉÎ", "ß", "ＰＹ", "cafe\u0301", "İ", "Ꭰꭰ", " ", "x"}
	text := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 2000 {
		e := &Entity{Name: text(), EntityType: text()}
		for range rng.IntN(9) {
			e.Observations = append(e.Observations, text())
		}
		st := e.searchText()
		check := func(got folded, s string) {
			if want := newFolded(s); got != want {
				t.Fatalf("%q folds to %+q, alone to %+q", s, got, want)
			}
		}
		check(st.name, e.Name)
		check(st.entityType, e.EntityType)
		if len(st.observations) != len(e.Observations) {
			t.Fatalf("%d observations folded, want %d", len(st.observations), len(e.Observations))
		}
		for i, o := range e.Observations {
			check(st.observations[i], o)
		}
	}
}

// TestSimpleLower checks simpleLower against unicode.ToLower on every rune
// it takes, and that it takes none whose folding is more than that.
func TestSimpleLower(t *testing.T) {
	for r := rune(0x80); r <= 0xFFFF; r++ {
		l, ok := simpleLower(r)
		if !ok {
			continue
		}
		if want := unicode.ToLower(r); l != want {
			t.Errorf("simpleLower(%U) = %U, want %U", r, l, want)
		}
		if s := string(r); Fold(s) != string(l) {
			t.Errorf("simpleLower(%U) = %U, but Fold gives %+q", r, l, Fold(s))
		}
	}
}
