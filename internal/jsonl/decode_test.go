package jsonl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// ent and rel build expected graph contents tersely.
func ent(name, typ string, obs ...string) graph.Entity {
	return graph.Entity{Name: name, EntityType: typ, Observations: obs}
}

func entX(extra string, name, typ string, obs ...string) graph.Entity {
	e := ent(name, typ, obs...)
	e.Extra = []byte(extra)
	return e
}

func rel(from, to, typ string) graph.Relation {
	return graph.Relation{From: from, To: to, RelationType: typ}
}

func TestDecode(t *testing.T) {
	const (
		alice = `{"type":"entity","name":"Alice","entityType":"person","observations":["likes tea"]}`
		acme  = `{"type":"entity","name":"Acme","entityType":"company","observations":[]}`
		works = `{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}`
	)
	canonical := alice + "\n" + acme + "\n" + works + "\n"
	tests := []struct {
		name       string
		in         string
		entities   []graph.Entity
		relations  []graph.Relation
		unreadable []string
		problems   []wantProblem // reason is a prefix of the reported reason
		// out is encode(Decode(in)); empty means "the canonical file".
		out string
	}{
		{
			name: "empty file",
			in:   "",
			out:  "\x00", // no lines at all
		},
		{
			name:      "canonical file round-trips byte for byte",
			in:        canonical,
			entities:  []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations: []graph.Relation{rel("Alice", "Acme", "works_at")},
		},
		{
			name:      "final line without newline",
			in:        strings.TrimSuffix(canonical, "\n"),
			entities:  []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations: []graph.Relation{rel("Alice", "Acme", "works_at")},
		},
		{
			name:      "CRLF line ends",
			in:        alice + "\r\n" + acme + "\r\n" + works + "\r\n",
			entities:  []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations: []graph.Relation{rel("Alice", "Acme", "works_at")},
		},
		{
			name:      "byte order mark",
			in:        "\uFEFF" + canonical,
			entities:  []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations: []graph.Relation{rel("Alice", "Acme", "works_at")},
		},
		{
			name:       "blank and white-space lines are skipped but counted",
			in:         "\n  \t\n" + alice + "\n\r\n\u3000\u00a0\n" + acme + "\n\n" + works + "\nnope\n\n",
			entities:   []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations:  []graph.Relation{rel("Alice", "Acme", "works_at")},
			unreadable: []string{"nope"},
			problems:   []wantProblem{{9, "not JSON: "}},
			out:        canonical + "nope\n",
		},
		{
			name:     "space around the object",
			in:       "  " + alice + " \t\n",
			entities: []graph.Entity{ent("Alice", "person", "likes tea")},
			out:      alice + "\n",
		},
		{
			name: "malformed JSON",
			in: alice + "\n" +
				`{"type":"entity","name":"Bob","entityType":"person","observations":["cut off` + "\n" +
				"not json at all\n" +
				`{"type":"entity",}` + "\n" +
				alice + " trailing\n" +
				alice + alice + "\n" +
				`{"type":"entity","name":"X","entityType":"t","observations":["bad \q escape"]}` + "\n" +
				`{"type":"entity","name":"X","entityType":"t","observations":["raw tab	inside"]}` + "\n" +
				`{"type":"entity","name":"X","entityType":"t","observations":[],"n":01}` + "\n" +
				`{'type':'entity'}`,
			entities: []graph.Entity{ent("Alice", "person", "likes tea")},
			unreadable: []string{
				`{"type":"entity","name":"Bob","entityType":"person","observations":["cut off`,
				"not json at all",
				`{"type":"entity",}`,
				alice + " trailing",
				alice + alice,
				`{"type":"entity","name":"X","entityType":"t","observations":["bad \q escape"]}`,
				`{"type":"entity","name":"X","entityType":"t","observations":["raw tab	inside"]}`,
				`{"type":"entity","name":"X","entityType":"t","observations":[],"n":01}`,
				`{'type':'entity'}`,
			},
			problems: []wantProblem{
				{2, "not JSON: unexpected end of JSON input"},
				{3, "not JSON: "}, {4, "not JSON: "}, {5, "not JSON: "}, {6, "not JSON: "},
				{7, "not JSON: "}, {8, "not JSON: "}, {9, "not JSON: "}, {10, "not JSON: "},
			},
		},
		{
			name:       "JSON that is not an object",
			in:         "[1,2]\n\"entity\"\n42\nnull\ntrue\n",
			unreadable: []string{"[1,2]", `"entity"`, "42", "null", "true"},
			problems: []wantProblem{
				{1, "not a JSON object but an array"},
				{2, "not a JSON object but a string"},
				{3, "not a JSON object but a number"},
				{4, "not a JSON object but null"},
				{5, "not a JSON object but a boolean"},
			},
		},
		{
			name: "unknown or missing type",
			in: `{"type":"note","text":"x"}` + "\n" +
				`{"name":"A","entityType":"t","observations":[]}` + "\n" +
				`{"type":1,"name":"A","entityType":"t","observations":[]}` + "\n" +
				`{}` + "\n" +
				`{"type":"Entity","name":"A","entityType":"t","observations":[]}`,
			unreadable: []string{
				`{"type":"note","text":"x"}`,
				`{"name":"A","entityType":"t","observations":[]}`,
				`{"type":1,"name":"A","entityType":"t","observations":[]}`,
				`{}`,
				`{"type":"Entity","name":"A","entityType":"t","observations":[]}`,
			},
			problems: []wantProblem{
				{1, `unknown type "note"`},
				{2, `lacks "type"`},
				{3, `"type" is a number, want a string`},
				{4, `lacks "type"`},
				{5, `unknown type "Entity"`},
			},
		},
		{
			name: "missing members",
			in: `{"type":"entity","name":"A","observations":[]}` + "\n" +
				`{"type":"entity","entityType":"t","observations":[]}` + "\n" +
				`{"type":"entity","name":"A","entityType":"t"}` + "\n" +
				`{"type":"relation","from":"A","relationType":"r"}` + "\n" +
				`{"type":"relation","to":"A","relationType":"r"}` + "\n" +
				`{"type":"relation","from":"A","to":"B"}`,
			unreadable: []string{
				`{"type":"entity","name":"A","observations":[]}`,
				`{"type":"entity","entityType":"t","observations":[]}`,
				`{"type":"entity","name":"A","entityType":"t"}`,
				`{"type":"relation","from":"A","relationType":"r"}`,
				`{"type":"relation","to":"A","relationType":"r"}`,
				`{"type":"relation","from":"A","to":"B"}`,
			},
			problems: []wantProblem{
				{1, `entity lacks "entityType"`},
				{2, `entity lacks "name"`},
				{3, `entity lacks "observations"`},
				{4, `relation lacks "to"`},
				{5, `relation lacks "from"`},
				{6, `relation lacks "relationType"`},
			},
		},
		{
			name: "members of the wrong JSON type",
			in: `{"type":"entity","name":7,"entityType":"t","observations":[]}` + "\n" +
				`{"type":"entity","name":"A","entityType":null,"observations":[]}` + "\n" +
				`{"type":"entity","name":"A","entityType":"t","observations":"one"}` + "\n" +
				`{"type":"entity","name":"A","entityType":"t","observations":["a", 1]}` + "\n" +
				`{"type":"entity","name":"A","entityType":"t","observations":[["nested"]]}` + "\n" +
				`{"type":"entity","name":"A","entityType":"t","observations":{"0":"a"}}` + "\n" +
				`{"type":"relation","from":"A","to":["B"],"relationType":"r"}` + "\n" +
				`{"type":"relation","from":"A","to":"B","relationType":false}`,
			unreadable: []string{
				`{"type":"entity","name":7,"entityType":"t","observations":[]}`,
				`{"type":"entity","name":"A","entityType":null,"observations":[]}`,
				`{"type":"entity","name":"A","entityType":"t","observations":"one"}`,
				`{"type":"entity","name":"A","entityType":"t","observations":["a", 1]}`,
				`{"type":"entity","name":"A","entityType":"t","observations":[["nested"]]}`,
				`{"type":"entity","name":"A","entityType":"t","observations":{"0":"a"}}`,
				`{"type":"relation","from":"A","to":["B"],"relationType":"r"}`,
				`{"type":"relation","from":"A","to":"B","relationType":false}`,
			},
			problems: []wantProblem{
				{1, `entity "name" is a number, want a string`},
				{2, `entity "entityType" is null, want a string`},
				{3, `entity "observations" is a string, want an array of strings`},
				{4, `entity "observations" has a number at index 1, want only strings`},
				{5, `entity "observations" has an array at index 0, want only strings`},
				{6, `entity "observations" is an object, want an array of strings`},
				{7, `relation "to" is an array, want a string`},
				{8, `relation "relationType" is a boolean, want a string`},
			},
		},
		{
			name: "extra members are kept, in order, compact, after the known ones",
			in: `{"createdAt":"2024-05-01", "type":"entity","name":"A","tags":[ "x" , 1, {"deep": [true, null]} ],` +
				`"entityType":"t","observations":["o"],"meta":{ "k" : -1.5e+3 },"from":"not a relation member"}` + "\n" +
				`{"weight":0.5,"type":"relation","from":"A","to":"A","relationType":"self","name":"kept too","observations":7}`,
			entities: []graph.Entity{entX(`,"createdAt":"2024-05-01","tags":["x",1,{"deep":[true,null]}],"meta":{"k":-1.5e+3},"from":"not a relation member"`, "A", "t", "o")},
			relations: []graph.Relation{{From: "A", To: "A", RelationType: "self",
				Extra: []byte(`,"weight":0.5,"name":"kept too","observations":7`)}},
			out: `{"type":"entity","name":"A","entityType":"t","observations":["o"],"createdAt":"2024-05-01","tags":["x",1,{"deep":[true,null]}],"meta":{"k":-1.5e+3},"from":"not a relation member"}` + "\n" +
				`{"type":"relation","from":"A","to":"A","relationType":"self","weight":0.5,"name":"kept too","observations":7}` + "\n",
		},
		{
			name: "repeated keys: the last value wins, at the first place",
			in: `{"type":"relation","name":"A","x":1,"name":"B","entityType":"t","observations":["o"],"y":2,"type":"entity","x":{"z":3}}` + "\n" +
				`{"type":"relation","from":"A","to":"B","relationType":"r","from":"C"}`,
			entities:  []graph.Entity{entX(`,"x":{"z":3},"y":2`, "B", "t", "o")},
			relations: []graph.Relation{rel("C", "B", "r")},
			out: `{"type":"entity","name":"B","entityType":"t","observations":["o"],"x":{"z":3},"y":2}` + "\n" +
				`{"type":"relation","from":"C","to":"B","relationType":"r"}` + "\n",
		},
		{
			name:     "escapes in keys and values",
			in:       `{"type":"entit\u0079","n\u0061me":"\u0041\u00e9\ud83e\udde0\/\"\\\b\f\n\r\t\u0000","entityType":"\u65e5\u672c","observations":["\ud800 lone","low \udc00","\ud800\u0041"],"\u0078":"\u00e9"}`,
			entities: []graph.Entity{entX(`,"x":"\u00e9"`, "Aé🧠/\"\\\b\f\n\r\t\x00", "日本", "\uFFFD lone", "low \uFFFD", "\uFFFDA")},
			out:      `{"type":"entity","name":"Aé🧠/\"\\\b\f\n\r\t\u0000","entityType":"日本","observations":["� lone","low �","�A"],"x":"\u00e9"}` + "\n",
		},
		{
			name:     "invalid UTF-8 becomes U+FFFD",
			in:       "{\"type\":\"entity\",\"name\":\"a\xffb\",\"entityType\":\"\xe6\x97\",\"observations\":[\"\xed\xa0\x80\"]}",
			entities: []graph.Entity{ent("a\uFFFDb", "\uFFFD\uFFFD", "\uFFFD\uFFFD\uFFFD")},
			out:      `{"type":"entity","name":"a�b","entityType":"��","observations":["���"]}` + "\n",
		},
		{
			name: "duplicate entities merge: first type, observations united in order",
			in: `{"type":"entity","name":"A","entityType":"person","observations":["x","y"]}` + "\n" +
				acme + "\n" +
				`{"type":"entity","name":"A","entityType":"robot","observations":["y","z","x","w"],"extra":1}` + "\n" +
				`{"type":"entity","name":"A","entityType":"person","observations":["v"]}`,
			entities: []graph.Entity{ent("A", "person", "x", "y", "z", "w", "v"), ent("Acme", "company")},
			problems: []wantProblem{
				{3, `merged duplicate entity "A" into the first one, dropping its entityType "robot", dropping its other members`},
				{4, `merged duplicate entity "A" into the first one`},
			},
			out: `{"type":"entity","name":"A","entityType":"person","observations":["x","y","z","w","v"]}` + "\n" + acme + "\n",
		},
		{
			name: "repeated observations in one line: the first of each kept, and reported",
			in: `{"type":"entity","name":"A","entityType":"t","observations":["x","y","x","x","z"]}` + "\n" +
				`{"type":"entity","name":"B","entityType":"t","observations":["o","o"]}`,
			entities: []graph.Entity{ent("A", "t", "x", "y", "z"), ent("B", "t", "o")},
			problems: []wantProblem{
				{1, `dropped 2 repeated observations of entity "A", keeping the first of each`},
				{2, `dropped 1 repeated observation of entity "B", keeping the first of each`},
			},
			out: `{"type":"entity","name":"A","entityType":"t","observations":["x","y","z"]}` + "\n" +
				`{"type":"entity","name":"B","entityType":"t","observations":["o"]}` + "\n",
		},
		{
			name: "duplicate relations are dropped",
			in: alice + "\n" + acme + "\n" + works + "\n" +
				`{"type":"relation","from":"Alice","to":"Acme","relationType":"founded"}` + "\n" +
				`{"relationType":"works_at","to":"Acme","from":"Alice","type":"relation"}`,
			entities:  []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations: []graph.Relation{rel("Alice", "Acme", "works_at"), rel("Alice", "Acme", "founded")},
			problems:  []wantProblem{{5, `dropped duplicate relation "Alice" -["works_at"]-> "Acme"`}},
			out:       canonical + `{"type":"relation","from":"Alice","to":"Acme","relationType":"founded"}` + "\n",
		},
		{
			name:      "relation to a missing entity is kept",
			in:        alice + "\n" + `{"type":"relation","from":"Alice","to":"Nobody","relationType":"knows"}` + "\n",
			entities:  []graph.Entity{ent("Alice", "person", "likes tea")},
			relations: []graph.Relation{rel("Alice", "Nobody", "knows")},
		},
		{
			name: "unreadable lines come back verbatim after the relations, in file order",
			in: "garbage one\r\n" + works + "\n" + `{"type":"todo", "text": "call Bob"}` + "\n" +
				alice + "\n" + "\t[1, 2]  \r\r\n" + acme,
			entities:   []graph.Entity{ent("Alice", "person", "likes tea"), ent("Acme", "company")},
			relations:  []graph.Relation{rel("Alice", "Acme", "works_at")},
			unreadable: []string{"garbage one", `{"type":"todo", "text": "call Bob"}`, "\t[1, 2]  "},
			problems: []wantProblem{
				{1, "not JSON: "},
				{3, `unknown type "todo"`},
				{5, "not a JSON object but an array"},
			},
			out: canonical + "garbage one\n" + `{"type":"todo", "text": "call Bob"}` + "\n" + "\t[1, 2]  \n",
		},
		{
			name: "nesting as deep as encoding/json allows, and deeper",
			in: `{"type":"relation","from":"A","to":"B","relationType":"r","deep":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}\n" +
				`{"type":"relation","from":"A","to":"C","relationType":"r","deep":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}",
			relations: []graph.Relation{{From: "A", To: "B", RelationType: "r",
				Extra: []byte(`,"deep":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999))}},
			unreadable: []string{`{"type":"relation","from":"A","to":"C","relationType":"r","deep":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}"},
			problems:   []wantProblem{{2, "not JSON: "}},
			out: `{"type":"relation","from":"A","to":"B","relationType":"r","deep":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}\n" +
				`{"type":"relation","from":"A","to":"C","relationType":"r","deep":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Decode([]byte(tt.in))
			want := graph.Snapshot{Entities: tt.entities, Relations: tt.relations}
			if got := snapshot(f.Graph); !equalSnapshots(got, want) {
				t.Errorf("graph =\n%s\nwant\n%s", showSnapshot(got), showSnapshot(want))
			}
			var unreadable []string
			for _, l := range f.Unreadable {
				unreadable = append(unreadable, string(l))
			}
			if !slices.Equal(unreadable, tt.unreadable) {
				t.Errorf("Unreadable = %q, want %q", unreadable, tt.unreadable)
			}
			if !slices.EqualFunc(f.Problems, tt.problems, func(got Problem, want wantProblem) bool {
				return got.Line == want.line && strings.HasPrefix(got.Reason, want.reason) && got.Kind == want.kind()
			}) {
				t.Errorf("Problems = %+v, want (reasons as prefixes) %+v", f.Problems, tt.problems)
			}

			out := tt.out
			switch out {
			case "":
				out = canonicalOf(tt.in)
			case "\x00":
				out = ""
			}
			if got := encode(nil, f.Graph, f.Unreadable); string(got) != out {
				t.Errorf("encode(Decode(in)) =\n%s\nwant\n%s", got, out)
			}
		})
	}
}

// canonicalOf is in with every line ended by "\n" and CRs and a BOM
// dropped: what Write writes back for a file already in canonical form.
func canonicalOf(in string) string {
	in = strings.TrimPrefix(in, "\uFEFF")
	in = strings.ReplaceAll(in, "\r\n", "\n")
	if in != "" && !strings.HasSuffix(in, "\n") {
		in += "\n"
	}
	return in
}

func showSnapshot(s graph.Snapshot) string {
	var b strings.Builder
	for _, e := range s.Entities {
		fmt.Fprintf(&b, "  entity %q %q %q extra %q times %v %v %v\n", e.Name, e.EntityType, e.Observations, e.Extra, e.Created, e.Updated, e.ObservedAt)
	}
	for _, r := range s.Relations {
		fmt.Fprintf(&b, "  relation %q -[%q]-> %q extra %q created %v\n", r.From, r.RelationType, r.To, r.Extra, r.Created)
	}
	return b.String()
}

func TestProblemString(t *testing.T) {
	p := Problem{Line: 7, Reason: `entity lacks "entityType"`}
	if got, want := p.String(), `line 7: entity lacks "entityType"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestDecodeKeepsNothingOfItsInput checks that Decode leaves data as it
// is and keeps none of it: the caller may write over it, and the graph
// and the unreadable lines stay what they were.
func TestDecodeKeepsNothingOfItsInput(t *testing.T) {
	const in = `{"type":"entity","name":"A","entityType":"t","observations":["o"]}` + "\r\n" +
		`{"type":"entity","name":"B", "entityType":"t","observations":["o"],"x":1}` + "\n" +
		`{"type":"relation","from":"A","to":"B","relationType":"r"}` + "\n" +
		`{"type":"relation","from":"A","to":"nobody","relationType":"r"}` + "\nbroken\r\n"
	data := []byte(in)
	f := Decode(data)
	out := encode(nil, f.Graph, f.Unreadable)
	if string(data) != in {
		t.Fatalf("Decode and Write changed their input to %q", data)
	}
	want := `{"type":"entity","name":"A","entityType":"t","observations":["o"]}` + "\n" +
		`{"type":"entity","name":"B","entityType":"t","observations":["o"],"x":1}` + "\n" +
		`{"type":"relation","from":"A","to":"B","relationType":"r"}` + "\n" +
		`{"type":"relation","from":"A","to":"nobody","relationType":"r"}` + "\nbroken\n"
	if string(out) != want {
		t.Errorf("Encode = %q, want %q", out, want)
	}
	checkHoldsNoneOf(t, data, f)
	for i := range data {
		data[i] = '#'
	}
	if got := string(encode(nil, f.Graph, f.Unreadable)); got != want {
		t.Errorf("Encode after the input was written over = %q, want %q", got, want)
	}
}

// checkHoldsNoneOf checks that no string of f's graph and no unreadable
// line is a piece of data.
func checkHoldsNoneOf(t *testing.T, data []byte, f *File) {
	t.Helper()
	for _, e := range f.Graph.Entities() {
		for _, s := range append([]string{e.Name, e.EntityType}, e.Observations...) {
			if stringInto(data, s) {
				t.Fatalf("entity %q holds %q, a piece of the input", e.Name, s)
			}
		}
		if e.EncodedLine() != nil {
			t.Fatalf("entity %q has a cached line after Decode", e.Name)
		}
	}
	for _, r := range f.Graph.Relations() {
		for _, s := range []string{r.From, r.To, r.RelationType} {
			if stringInto(data, s) {
				t.Fatalf("relation %q -> %q holds %q, a piece of the input", r.From, r.To, s)
			}
		}
	}
	for _, line := range f.Unreadable {
		if sliceInto(data, line) {
			t.Fatalf("unreadable line %q is a piece of the input", line)
		}
	}
}

// TestDecodeRoundTrips checks that files already in the form Encode
// writes are written back byte for byte, with nothing of them kept.
func TestDecodeRoundTrips(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join(goldenDir, goldenReference))
	if err != nil {
		t.Fatal(err)
	}
	escapes := `{"type":"entity","name":"q\"b\\s\b\f\n\r\t\u0000\u0001\u000b\u001f end","entityType":"` +
		"DEL\x7f \u2028 <&> / 日本 🧠" + `","observations":["","a","b"]}` + "\n" +
		`{"type":"entity","name":"","entityType":"","observations":[]}` + "\n" +
		`{"type":"relation","from":"","to":"\u001e","relationType":"\"x\""}` + "\n" +
		`{"type":"relation","from":"a","to":"b","relationType":"r"}` + "\n"
	duplicate := `{"type":"relation","from":"a","to":"b","relationType":"r"}` + "\n" // dropped
	generated, big := benchFile(200, 7), benchFile(3000, 7)
	for _, tt := range []struct {
		name      string
		data      []byte
		pipelined bool
		want      string // what Encode writes
	}{
		{"reference file", golden, false, string(golden) + "\n"},
		{"escapes as JSON.stringify writes them", []byte(escapes + duplicate), false, escapes},
		{"CRLF and byte order marks", []byte("\uFEFF" + strings.ReplaceAll(escapes+duplicate, "\n", "\r\n\uFEFF")), false, escapes},
		{"generated", generated, false, string(generated)},
		{"pipelined", big, true, string(big)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.pipelined && len(tt.data) < pipelineMin {
				t.Fatalf("test file of %d bytes is too small to be pipelined", len(tt.data))
			}
			f := decode(tt.data, tt.pipelined)
			if len(f.Unreadable) != 0 {
				t.Fatalf("unreadable lines: %q", f.Unreadable)
			}
			checkHoldsNoneOf(t, tt.data, f)
			if got := string(encode(nil, f.Graph, nil)); got != tt.want {
				t.Errorf("Encode =\n%s\nwant\n%s", got, tt.want)
			}
			// Encode cached nothing.
			checkHoldsNoneOf(t, tt.data, f)
		})
	}
}

// TestDecodeSharesTypesAndEnds checks what makes a loaded graph cost
// about its text: one copy of each type however many lines repeat it,
// and relation ends that are their entities' names.
func TestDecodeSharesTypesAndEnds(t *testing.T) {
	for _, pipelined := range []bool{false, true} {
		data := benchFile(3000, 11)
		f := decode(data, pipelined)
		types := map[string]map[*byte]bool{}
		for _, e := range f.Graph.Entities() {
			if types[e.EntityType] == nil {
				types[e.EntityType] = map[*byte]bool{}
			}
			types[e.EntityType][unsafe.StringData(e.EntityType)] = true
		}
		for _, r := range f.Graph.Relations() {
			for _, end := range []string{r.From, r.To} {
				if e := f.Graph.Entity(end); e != nil && unsafe.StringData(e.Name) != unsafe.StringData(end) {
					t.Fatalf("relation end %q is a copy of its entity's name", end)
				}
			}
		}
		for typ, copies := range types {
			// One per parser at most.
			if len(copies) > parsers() {
				t.Errorf("pipelined %v: type %q held %d times", pipelined, typ, len(copies))
			}
		}
	}
}

// TestDecodeWritesLinesCanonically checks that a line Encode would write
// differently is written as Encode writes it.
func TestDecodeWritesLinesCanonically(t *testing.T) {
	const (
		entityA = `{"type":"entity","name":"A","entityType":"t","observations":["o"]}`
		relAB   = `{"type":"relation","from":"A","to":"B","relationType":"r"}`
	)
	tests := []struct {
		name, in string
		out      string // the line Encode writes
	}{
		{"space after a comma", `{"type":"entity", "name":"A","entityType":"t","observations":["o"]}`, entityA},
		{"space before a colon", `{"type":"entity","name" :"A","entityType":"t","observations":["o"]}`, entityA},
		{"space in the array", `{"type":"entity","name":"A","entityType":"t","observations":[ "o"]}`, entityA},
		{"space before the object", ` ` + entityA, entityA},
		{"space after the object", entityA + "\t", entityA},
		{"keys in another order", `{"name":"A","type":"entity","entityType":"t","observations":["o"]}`, entityA},
		{"observations first", `{"type":"entity","observations":["o"],"name":"A","entityType":"t"}`, entityA},
		{`escaped slash \/`, `{"type":"entity","name":"A\/","entityType":"t","observations":["o"]}`,
			`{"type":"entity","name":"A/","entityType":"t","observations":["o"]}`},
		{`needless escape \u0041`, `{"type":"entity","name":"\u0041","entityType":"t","observations":["o"]}`, entityA},
		{`uppercase hex \u001F`, `{"type":"entity","name":"A","entityType":"t","observations":["\u001F"]}`,
			`{"type":"entity","name":"A","entityType":"t","observations":["\u001f"]}`},
		{`long form of a short escape \u000a`, `{"type":"entity","name":"A","entityType":"t","observations":["\u000a"]}`,
			`{"type":"entity","name":"A","entityType":"t","observations":["\n"]}`},
		{`escaped DEL \u007f`, `{"type":"entity","name":"A","entityType":"t","observations":["\u007f"]}`,
			"{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[\"\x7f\"]}"},
		{`escaped non-ASCII \u00e9`, `{"type":"entity","name":"\u00e9","entityType":"t","observations":[]}`,
			`{"type":"entity","name":"é","entityType":"t","observations":[]}`},
		{"escaped type", `{"type":"entit\u0079","name":"A","entityType":"t","observations":["o"]}`, entityA},
		{"escaped key", `{"type":"entity","n\u0061me":"A","entityType":"t","observations":["o"]}`, entityA},
		{"extra member", `{"type":"entity","name":"A","entityType":"t","observations":["o"],"x":1}`,
			`{"type":"entity","name":"A","entityType":"t","observations":["o"],"x":1}`},
		{"duplicate key", `{"type":"entity","name":"Z","name":"A","entityType":"t","observations":["o"]}`, entityA},
		{"duplicate key, same value", `{"type":"entity","name":"A","entityType":"t","observations":["o"],"name":"A"}`, entityA},
		{"duplicate type", `{"type":"entity","type":"entity","name":"A","entityType":"t","observations":["o"]}`, entityA},
		{"repeated observation", `{"type":"entity","name":"A","entityType":"t","observations":["o","o"]}`, entityA},
		{"invalid UTF-8", "{\"type\":\"entity\",\"name\":\"A\xff\",\"entityType\":\"t\",\"observations\":[\"o\"]}",
			`{"type":"entity","name":"A�","entityType":"t","observations":["o"]}`},
		{"invalid UTF-8 beside an escape", "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[\"\\n\xc3\"]}",
			`{"type":"entity","name":"A","entityType":"t","observations":["\n�"]}`},
		{"relation with space", `{"type":"relation","from":"A","to":"B","relationType":"r" }`, relAB},
		{"relation keys in another order", `{"type":"relation","to":"B","from":"A","relationType":"r"}`, relAB},
		{`relation with \/`, `{"type":"relation","from":"A","to":"B","relationType":"\/r"}`,
			`{"type":"relation","from":"A","to":"B","relationType":"/r"}`},
		{"relation with an extra member", `{"type":"relation","from":"A","to":"B","relationType":"r","w":1}`,
			`{"type":"relation","from":"A","to":"B","relationType":"r","w":1}`},
		{"relation with a duplicate key", `{"type":"relation","from":"A","to":"B","relationType":"r","to":"B"}`, relAB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Decode([]byte(tt.in + "\n"))
			if len(f.Unreadable) != 0 {
				t.Fatalf("unreadable: %q %v", f.Unreadable, f.Problems)
			}
			if got := string(encode(nil, f.Graph, nil)); got != tt.out+"\n" {
				t.Errorf("Encode = %q, want %q", got, tt.out+"\n")
			}
		})
	}

	t.Run("merged duplicate entity", func(t *testing.T) {
		in := entityA + "\n" + relAB + "\n" + `{"type":"entity","name":"A","entityType":"t","observations":["p"]}` + "\n"
		f := Decode([]byte(in))
		want := `{"type":"entity","name":"A","entityType":"t","observations":["o","p"]}` + "\n" + relAB + "\n"
		if got := string(encode(nil, f.Graph, nil)); got != want {
			t.Errorf("Encode = %q, want %q", got, want)
		}
	})
}

// TestDecodeStrings checks strings with and without escapes, invalid
// UTF-8 and an extra member, and that none of them is a piece of the input.
func TestDecodeStrings(t *testing.T) {
	data := []byte("{\"type\":\"entity\",\"name\":\"plain\",\"entityType\":\"日本\"," +
		"\"observations\":[\"tab\\there\",\"\",\"bad \xff\",\"\\u00e9\",\"ok\"],\"x\":\"\\/\"}\n" +
		"{\"type\":\"relation\",\"from\":\"plain\",\"to\":\"\\\"q\\\"\",\"relationType\":\"r\"}\n")
	f := Decode(data)
	e, r := f.Graph.Entity("plain"), f.Graph.Relations()[0]
	for _, tt := range []struct{ got, want string }{
		{e.Name, "plain"},
		{e.EntityType, "日本"},
		{e.Observations[0], "tab\there"},
		{e.Observations[1], ""},
		{e.Observations[2], "bad \uFFFD"},
		{e.Observations[3], "é"},
		{e.Observations[4], "ok"},
		{r.From, "plain"},
		{r.To, `"q"`},
		{r.RelationType, "r"},
	} {
		if tt.got != tt.want {
			t.Errorf("decoded %q, want %q", tt.got, tt.want)
		}
	}
	if string(e.Extra) != `,"x":"\/"` {
		t.Errorf("Extra = %q", e.Extra)
	}
	checkHoldsNoneOf(t, data, f)
}

// sliceInto and stringInto report whether b or s is a non-empty piece of data.
func sliceInto(data, b []byte) bool {
	return len(b) > 0 && pointsInto(data, unsafe.Pointer(unsafe.SliceData(b)), len(b))
}

func stringInto(data []byte, s string) bool {
	return len(s) > 0 && pointsInto(data, unsafe.Pointer(unsafe.StringData(s)), len(s))
}

func pointsInto(data []byte, p unsafe.Pointer, n int) bool {
	start, q := uintptr(unsafe.Pointer(unsafe.SliceData(data))), uintptr(p)
	return start <= q && q+uintptr(n) <= start+uintptr(len(data))
}

// TestEncodeUsesCachedLines checks that Encode writes a cached line as it
// is (a store that keeps its lines, such as PostgreSQL's, sets them),
// encodes the others and caches nothing itself.
func TestEncodeUsesCachedLines(t *testing.T) {
	f := Decode([]byte(`{"type":"entity","name":"A","entityType":"t","observations":["o"]}` + "\n" +
		`{"type":"relation","from":"A","to":"A","relationType":"r"}` + "\n"))
	g := f.Graph
	buf := encode(nil, g, nil)
	want := string(buf)
	a := g.Entity("A")
	if a.EncodedLine() != nil {
		t.Fatalf("Encode cached the line %q", a.EncodedLine())
	}
	for i := range buf {
		buf[i] = '#'
	}
	if got := string(encode(buf[:0], g, nil)); got != want {
		t.Errorf("second Encode into the reused buffer = %q, want %q", got, want)
	}

	a.SetEncodedLine([]byte(`{"cached":true}`))
	if got, want := string(encode(nil, g, nil)), `{"cached":true}`+"\n"+`{"type":"relation","from":"A","to":"A","relationType":"r"}`+"\n"; got != want {
		t.Errorf("Encode with a cached line = %q, want %q", got, want)
	}

	// A change clears the cache, and Encode writes the entity afresh.
	g.LoadEntity(ent("A", "t", "p"))
	if a.EncodedLine() != nil {
		t.Fatal("the entity's cache survived a change")
	}
	wantLine := `{"type":"entity","name":"A","entityType":"t","observations":["o","p"]}`
	if got := encode(nil, g, nil); !bytes.HasPrefix(got, []byte(wantLine+"\n")) {
		t.Errorf("Encode after a change = %q, want it to start with %q", got, wantLine)
	}
}

// TestDecodePipelined checks that a big file, which Decode parses in a
// pipeline, decodes as it does line by line.
func TestDecodePipelined(t *testing.T) {
	data := messyFile(3000, 2)
	if len(data) < pipelineMin {
		t.Fatalf("test file of %d bytes is too small to be pipelined", len(data))
	}
	if want := decode(data, false); len(want.Problems) == 0 || len(want.Unreadable) == 0 {
		t.Fatal("test file has no problems")
	}
	checkSameFile(t, data, decode(data, true))
}

// wantProblem is a Problem a test expects: its line and the start of its
// reason, from which its kind follows.
type wantProblem struct {
	line   int
	reason string
}

func (w wantProblem) kind() ProblemKind {
	switch {
	case strings.HasPrefix(w.reason, "merged duplicate entity"):
		return MergedEntity
	case strings.HasPrefix(w.reason, "dropped duplicate relation"):
		return DroppedRelation
	case strings.HasPrefix(w.reason, "dropped ") && strings.Contains(w.reason, " repeated observation"):
		return RepeatedObservations
	}
	return Unreadable
}
