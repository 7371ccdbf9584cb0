package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSetRejects checks that a mistake in a set is reported with where
// it is, rather than scored as a miss.
func TestLoadSetRejects(t *testing.T) {
	const goodMemory = `{"type":"entity","name":"Ann","entityType":"person","observations":["Sings"]}
{"type":"entity","name":"Choir","entityType":"group","observations":["Meets on Mondays"]}
{"type":"relation","from":"Ann","to":"Choir","relationType":"sings_in"}
`
	const goodQuestion = `{"id":"q1","memory":"m","language":"en","kind":"paraphrase","question":"Who sings?","entity":"Ann","observation":"Sings"}`
	tests := []struct {
		name, memory, questions, want string
	}{
		{"unknown entity", goodMemory, `{"id":"q1","memory":"m","language":"en","kind":"rare","question":"?","entity":"Bob","observation":"Sings"}`, `no entity "Bob"`},
		{"unknown observation", goodMemory, `{"id":"q1","memory":"m","language":"en","kind":"rare","question":"?","entity":"Ann","observation":"Dances"}`, `no observation "Dances"`},
		{"unknown memory", goodMemory, `{"id":"q1","memory":"x","language":"en","kind":"rare","question":"?","entity":"Ann","observation":"Sings"}`, `no memory "x"`},
		{"unknown kind", goodMemory, `{"id":"q1","memory":"m","language":"en","kind":"odd","question":"?","entity":"Ann","observation":"Sings"}`, `unknown kind "odd"`},
		{"unknown field", goodMemory, `{"id":"q1","memory":"m","language":"en","kind":"rare","question":"?","entity":"Ann","observation":"Sings","answer":"x"}`, `unknown field "answer"`},
		{"repeated id", goodMemory, goodQuestion + "\n" + goodQuestion, `id "q1" used twice`},
		{"no questions", goodMemory, "\n", "holds no questions"},
		{"relation to a missing entity", goodMemory + `{"type":"relation","from":"Ann","to":"Nobody","relationType":"knows"}` + "\n", goodQuestion, `unknown entity "Nobody"`},
		{"entity defined twice", goodMemory[:strings.Index(goodMemory, "\n")+1] + goodMemory, goodQuestion, `entity "Ann" defined twice`},
		{"line that is not JSON", goodMemory + "{oops\n", goodQuestion, "m.jsonl:4:"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, memoriesDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, memoriesDir, "m.jsonl"), []byte(tt.memory), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, questionsFile), []byte(tt.questions), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := loadSet(dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: loadSet error %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestSelectQuestions(t *testing.T) {
	qs := []question{
		{ID: "a-1", Memory: "a", Kind: "rare", Question: "Where is the cabin?"},
		{ID: "a-2", Memory: "a", Kind: "relation", Question: "Who is Tom's sister?"},
		{ID: "b-1", Memory: "b", Kind: "rare", Question: "Когда день рождения?"},
	}
	ids := func(qs []question) string {
		var s []string
		for _, q := range qs {
			s = append(s, q.ID)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		memories []string
		filter   string
		want     string
	}{
		{nil, "", "a-1,a-2,b-1"},
		{[]string{"b"}, "", "b-1"},
		{nil, "RARE", "a-1,b-1"},
		{nil, "когда", "b-1"},
		{[]string{"a"}, "sister", "a-2"},
		{[]string{"a"}, "когда", ""},
	}
	for _, tt := range tests {
		if got := ids(selectQuestions(qs, tt.memories, tt.filter)); got != tt.want {
			t.Errorf("selectQuestions(%v, %q) = %s, want %s", tt.memories, tt.filter, got, tt.want)
		}
	}
}
