package jsonl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that it calls a line "not
// JSON" exactly when encoding/json does, that every line it caches is a
// piece of the input and what Write would write, and that what Write
// writes for a decoded file decodes to the same graph and unreadable lines
// and encodes to the same bytes again: a save loses nothing more on the
// second round.
func FuzzDecode(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join(goldenDir, goldenReference))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(benchFile(3, 1))
	for _, seed := range []string{
		"",
		"\n\r\n \t\n",
		"\uFEFF" + `{"type":"entity","name":"A","entityType":"t","observations":["o"]}` + "\r\n",
		`{"type":"entity","name":"A","entityType":"t","observations":["o"],"x":{"y":[1,2.5e3,null]}}` + "\n" +
			`{"type":"entity","name":"A","entityType":"u","observations":["p","o"],"z":1}`,
		`{"type":"relation","from":"A","to":"B","relationType":"r","w":-0.5}` + "\n" +
			`{"relationType":"r","to":"B","from":"A","type":"relation"}`,
		`{"type":"entit\u0079","n\u0061me":"\ud83e\udde0\ud800","entityType":"\u0000","observations":["\"\\\/\b\f\n\r\t"]}`,
		"{\"type\":\"entity\",\"name\":\"\xff\",\"entityType\":\"\xed\xa0\x80\",\"observations\":[]}",
		`{"type":"entity","name":"A","name":"B","entityType":"t","observations":[],"k":1,"k":2}`,
		"not json\n[1]\n\"s\"\n{}\n{\"type\":7}\n{\"type\":\"x\"}\n{\"type\":\"entity\"}\n{\"type\":\"entity\",\"name\":1}",
		`{"type":"entity","name":"A","entityType":"t","observations":["a",1]}`,
		`{"type":"entity","name":"\u001F\u001f\/","entityType":"\u0041","observations":["o","o"]}`,
		`{"type":"relation","from":"A","to":"B","relationType":"\u000a\n"}` + "\n" +
			`{"type":"relation","from":"A","to":"B","relationType":"r","to":"B"}`,
		`{"type":"entity","name":"A","entityType":"t","observations":["a"]} x`,
		`{"type":"relation","from":"A","to":"B","relationType":"r","deep":[[[[{"a":[{}]}]]]]}`,
		`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z","observationTimes":["2026-11-30T09:15:00Z",1,null,1],"observationsHash":"` + hashOf("a", "b") + `"}` + "\n" +
			`{"type":"relation","from":"A","to":"A","relationType":"r","createdAt":"2026-11-30T09:15:00Z"}`,
		`{"type":"entity","name":"A","entityType":"t","observations":["a"],"createdAt":"2024-05-01","updatedAt":null,"observationTimes":["x"],"observationsHash":"00000000"}`,
		`{"type":"entity","name":"A","entityType":"t","observations":["a","c"],"createdAt":"2026-11-30T10:15:00+01:00","observationTimes":["2026-11-30T09:15:00.5Z",1,"2026-11-30T09:15:00Z",01],"observationsHash":"` + hashOf("a", "b") + `"}`,
		`{"type":"relation","from":"A","to":"B","relationType":"r","createdAt":null,"updatedAt":"2026-11-30T09:15:00Z"}`,
		`{"type":"entity","name":"A","entityType":"t","observations":["a","b"],"createdAt":"2026-11-30T09:15:00Z","observationsHash":"` + hashOf("a", "b") + `"}` + "\n" +
			`{"type":"entity","name":"A","entityType":"t","observations":["b","c"],"observationTimes":[null,2],"observationsHash":"` + hashOf("b", "c") + `"}`,
		"\uFEFF\uFEFFgarbage\r\r\n\uFEFF{\"type\":\"relation\",\"from\":\"A\",\"to\":\"B\",\"relationType\":\"r\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		file := Decode(data)
		if !bytes.Equal(data, in) {
			t.Fatalf("Decode changed its input %q to %q", in, data)
		}

		// Nothing the File holds is a piece of the input.
		checkHoldsNoneOf(t, data, file)

		// The verdict "not JSON" agrees with encoding/json, line by line.
		notJSON := make(map[int]bool)
		for _, p := range file.Problems {
			if strings.HasPrefix(p.Reason, "not JSON") {
				notJSON[p.Line] = true
			}
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if isBlank(line) {
				continue
			}
			if line = trimLine(line); json.Valid(line) == notJSON[i+1] {
				t.Fatalf("line %d %q: json.Valid is %v but Decode's problems are %q", i+1, line, json.Valid(line), file.Problems)
			}
		}

		out := encode(nil, file.Graph, file.Unreadable)
		again := Decode(out)
		if got, want := snapshot(again.Graph), snapshot(file.Graph); !equalSnapshots(got, want) {
			t.Fatalf("graph changed on a second round\nfirst:\n%s\nsecond:\n%s", showSnapshot(want), showSnapshot(got))
		}
		if !slices.EqualFunc(again.Unreadable, file.Unreadable, bytes.Equal) {
			t.Fatalf("unreadable lines changed on a second round: %q, then %q", file.Unreadable, again.Unreadable)
		}
		if len(again.Problems) != len(again.Unreadable) {
			t.Fatalf("second round reports merges or duplicates: %q", again.Problems)
		}
		if out2 := encode(nil, again.Graph, again.Unreadable); !bytes.Equal(out2, out) {
			t.Fatalf("second Write differs\nfirst:  %q\nsecond: %q", out, out2)
		}
	})
}
