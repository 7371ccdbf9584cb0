package testgraph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestGenerateIsDeterministicForASeed(t *testing.T) {
	var a, b, c bytes.Buffer
	g1, _ := Generate(500, 7)
	g2, _ := Generate(500, 7)
	g3, _ := Generate(500, 8)
	for _, x := range []struct {
		g   *Graph
		buf *bytes.Buffer
	}{{g1, &a}, {g2, &b}, {g3, &c}} {
		if err := x.g.WriteJSONL(x.buf); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two graphs generated with seed 7 differ")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Error("seeds 7 and 8 generated the same graph")
	}
}

// TestGeneratedFileIsAValidReferenceGraph reads the file back as the
// reference server would and checks the shape the benchmark promises.
func TestGeneratedFileIsAValidReferenceGraph(t *testing.T) {
	const n = 1000
	g, q := Generate(n, 1)
	var buf bytes.Buffer
	if err := g.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Error("file does not end with a newline")
	}
	if bytes.Contains(data, []byte(`\u00`)) {
		t.Error("file has \\u escapes; the reference writes UTF-8 and no HTML escaping")
	}

	names := map[string]bool{}
	triples := map[[3]string]bool{}
	var entities, relations int
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		var rec struct {
			Type         string    `json:"type"`
			Name         string    `json:"name"`
			EntityType   string    `json:"entityType"`
			Observations *[]string `json:"observations"`
			From         string    `json:"from"`
			To           string    `json:"to"`
			RelationType string    `json:"relationType"`
		}
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", line, err, text)
		}
		switch rec.Type {
		case "entity":
			if relations > 0 {
				t.Fatalf("line %d: entity after relations", line)
			}
			if !strings.HasPrefix(text, `{"type":"entity","name":`) {
				t.Fatalf("line %d: keys not in the reference order: %s", line, text)
			}
			entities++
			if names[rec.Name] {
				t.Errorf("line %d: duplicate entity name %q", line, rec.Name)
			}
			names[rec.Name] = true
			if rec.Observations == nil || len(*rec.Observations) != ObservationsPerEntity {
				t.Errorf("line %d: want %d observations: %s", line, ObservationsPerEntity, text)
			} else {
				seen := map[string]bool{}
				for _, o := range *rec.Observations {
					if seen[o] {
						t.Errorf("line %d: repeated observation %q", line, o)
					}
					seen[o] = true
				}
			}
		case "relation":
			if !strings.HasPrefix(text, `{"type":"relation","from":`) {
				t.Fatalf("line %d: keys not in the reference order: %s", line, text)
			}
			relations++
			key := [3]string{rec.From, rec.To, rec.RelationType}
			if triples[key] {
				t.Errorf("line %d: duplicate relation %v", line, key)
			}
			triples[key] = true
			if !names[rec.From] || !names[rec.To] {
				t.Errorf("line %d: dangling relation %v", line, key)
			}
		default:
			t.Fatalf("line %d: unknown type %q", line, rec.Type)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if entities != n || relations != 2*n {
		t.Errorf("got %d entities and %d relations, want %d and %d", entities, relations, n, 2*n)
	}

	// The search terms hit as the table's labels promise.
	if got := g.CountMatches(q.Rare); got != 1 {
		t.Errorf("rare term %q is in %d entities, want 1", q.Rare, got)
	}
	for _, term := range []string{q.Common, q.TwoWords, q.Japanese} {
		if got := g.CountMatches(term); got < n/20 {
			t.Errorf("term %q is in only %d of %d entities", term, got, n)
		}
	}
	if !bytes.Contains(data, []byte("東京")) || !bytes.Contains(data, []byte("Живёт")) {
		t.Error("no Japanese or Russian text in the graph")
	}
}
