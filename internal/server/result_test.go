package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// tokens is a JSON value as the sequence of its tokens, keys in the order
// written: two encodings of one value give the same tokens whatever their
// white space and escaping.
func tokens(t *testing.T, data []byte) []any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("not JSON: %v\n%s", err, data)
		}
		out = append(out, tok)
	}
}

// Every tool's text item is its structured content (the delete tools':
// the message), as a client reads them off the wire: the same value, keys
// in the same order, whether the answer is whole or cut to the limit.
func TestTextItemIsTheStructuredContent(t *testing.T) {
	var ents, rels, obs, dels, names, ghosts []string
	for i := range 300 {
		ghosts = append(ghosts, fmt.Sprintf(`"ghost-%03d"`, i))
	}
	for i := range 60 {
		name := fmt.Sprintf("entity <%02d> & \u2028", i)
		q, _ := json.Marshal(name)
		names = append(names, string(q))
		ents = append(ents, fmt.Sprintf(`{"name":%s,"entityType":"thing","observations":["a \"quoted\" observation of %d","東京 %d"]}`, q, i, i))
		obs = append(obs, fmt.Sprintf(`{"entityName":%s,"contents":["added to %d"]}`, q, i))
		dels = append(dels, fmt.Sprintf(`{"entityName":%s,"observations":["added to %d"]}`, q, i))
		if i > 0 {
			rels = append(rels, fmt.Sprintf(`{"from":%s,"to":%s,"relationType":"follows"}`, names[i-1], q))
		}
	}
	join := func(list []string) string { return "[" + strings.Join(list, ",") + "]" }
	steps := []struct{ tool, args, shows string }{
		{"create_entities", `{"entities":` + join(ents) + `}`, "omitted"},
		{"create_relations", `{"relations":` + join(rels) + `}`, "omitted"},
		{"add_observations", `{"observations":` + join(obs) + `}`, "omitted"},
		{"read_graph", `{}`, "nextCursor"},
		{"read_graph", `{"outline":true}`, "nextCursor"},
		{"search_nodes", `{"query":"observation"}`, "nextCursor"},
		{"open_nodes", `{"names":` + join(names) + `,"depth":1}`, "nextCursor"},
		{"delete_observations", `{"deletions":` + join(dels) + `}`, ""},
		{"delete_relations", `{"relations":` + join(rels) + `}`, ""},
		{"delete_entities", `{"entityNames":` + join(append(names, ghosts...)) + `}`, ""},
	}
	for _, limit := range []int{0, 2000} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			s, _ := newTestServer(t)
			s.opts.AnswerLimit = limit
			c := startStdio(t, s)
			c.send(initialize)
			c.expectResult("1")
			c.send(initialized)
			for i, step := range steps {
				id := fmt.Sprint(i + 2)
				c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + step.tool + `","arguments":` + step.args + `}}`)
				var res struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				}
				if err := json.Unmarshal(c.expectResult(id).Result, &res); err != nil || res.IsError || len(res.Content) == 0 {
					t.Fatalf("%s: %v %+v", step.tool, err, res)
				}
				structured := tokens(t, res.StructuredContent)
				if strings.HasPrefix(step.tool, "delete_") {
					var d struct{ Message string }
					json.Unmarshal(res.StructuredContent, &d)
					if res.Content[0].Text != d.Message {
						t.Errorf("%s: text item %q, message %q", step.tool, res.Content[0].Text, d.Message)
					}
				} else if text := tokens(t, []byte(res.Content[0].Text)); !reflect.DeepEqual(text, structured) {
					t.Errorf("%s: the text item is not the structured content:\ntext       %s\nstructured %s", step.tool, res.Content[0].Text, res.StructuredContent)
				}
				// With the limit, every answer here is cut: the table
				// checks the cut answers, not only whole ones.
				if cut := bytes.Contains(res.StructuredContent, []byte(`"`+step.shows+`"`)); step.shows != "" && cut != (limit > 0) {
					t.Errorf("%s with limit %d: %q in the answer: %v\n%s", step.tool, limit, step.shows, cut, res.StructuredContent)
				}
			}
		})
	}
}
