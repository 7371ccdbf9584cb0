package answer

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// With Times, both forms of the answer say when each fact was written, the
// same in each, null for an unknown observation time; without, nothing.
func TestTimesShown(t *testing.T) {
	g := graph.New()
	g.LoadEntity(graph.Entity{Name: "Ada", EntityType: "person", Observations: []string{"wrote the first program", "undated note", "met"}, Created: 10, Updated: 30, ObservedAt: []graph.Time{10, 0, 30}})
	g.LoadEntity(graph.Entity{Name: "Charles", EntityType: "person", Observations: []string{"designed engines"}})
	g.LoadRelation(graph.Relation{From: "Ada", To: "Charles", RelationType: "knew", Created: 20})
	for _, times := range []bool{false, true} {
		a := &Answer{Tool: "open_nodes", Request: "x", Times: times, Relations: g.Relations()}
		for _, e := range g.Entities() {
			a.Entities = append(a.Entities, View{Entity: e})
		}
		p, err := a.Page(60000, "")
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(p.Texts[0])); err != nil {
			t.Fatalf("text is not JSON: %v\n%s", err, p.Texts[0])
		}
		if !bytes.Equal(compact.Bytes(), p.Structured) {
			t.Errorf("structured content %s differs from the text %s", p.Structured, compact.Bytes())
		}
		want := `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program","undated note","met"]},{"name":"Charles","entityType":"person","observations":["designed engines"]}],"relations":[{"from":"Ada","to":"Charles","relationType":"knew"}]}`
		if times {
			want = `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program","undated note","met"],"createdAt":"1970-01-01T00:00:10Z","updatedAt":"1970-01-01T00:00:30Z","observationTimes":["1970-01-01T00:00:10Z",null,"1970-01-01T00:00:30Z"]},{"name":"Charles","entityType":"person","observations":["designed engines"]}],"relations":[{"from":"Ada","to":"Charles","relationType":"knew","createdAt":"1970-01-01T00:00:20Z"}]}`
		}
		if string(p.Structured) != want {
			t.Errorf("times %t:\n%s\nwant\n%s", times, p.Structured, want)
		}
	}
}
