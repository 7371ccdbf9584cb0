package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The committed evaluation set (testdata/eval) is checked here: that it
// loads, that it is as big and as varied as the project promises
// (docs/design.md §8), and that no question gives its answer away.

const committedSet = "../../testdata/eval"

func loadCommittedSet(t *testing.T) *evalSet {
	t.Helper()
	set, err := loadSet(committedSet)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestCommittedSetSize(t *testing.T) {
	set := loadCommittedSet(t)
	if n := len(set.Questions); n < 300 {
		t.Errorf("%d questions, want at least 300", n)
	}
	handKinds := []string{"paraphrase", "rare", "relation", "neighbour"}
	chatKinds := []string{"span", "reply", "temporal", "noword"}
	want := map[string]struct {
		language     string
		minQuestions int
		minEntities  int
		maxEntities  int
		kinds        []string // at least 4 questions of each
	}{
		"assistant":    {"en", 100, 60, 150, handKinds},
		"conversation": {"en", 100, 200, 400, handKinds},
		"japanese":     {"ja", 60, 30, 150, handKinds},
		"russian":      {"ru", 60, 100, 400, handKinds},
		// The generated memories (cmd/memory-eval/evalgen): two long chat
		// logs and the people in them.
		"chat-a": {"en", 100, 600, 1200, chatKinds},
		"chat-b": {"en", 100, 600, 1200, chatKinds},
		"people": {"en", 100, 4, 4, chatKinds},
		// 30 similar fillers and six people with a hobby each: a
		// question's common word ("person") matches them all.
		"crowd": {"en", 8, 36, 36, []string{"crowd"}},
	}
	if got := set.memoryNames(); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("memories %v, want %v", got, slices.Sorted(maps.Keys(want)))
	}
	for name, w := range want {
		m := set.memory(name)
		var n int
		kinds := map[string]int{}
		for _, q := range set.Questions {
			if q.Memory != name {
				continue
			}
			n++
			kinds[q.Kind]++
			if q.Language != w.language {
				t.Errorf("%s: language %q, want %q for memory %s", q.ID, q.Language, w.language, name)
			}
		}
		t.Logf("%-12s %-2s %3d questions %v; %d entities, %d observations, %d relations",
			name, w.language, n, kinds, m.Entities, m.Observations, m.Relations)
		if n < w.minQuestions {
			t.Errorf("%s: %d questions, want at least %d", name, n, w.minQuestions)
		}
		if m.Entities < w.minEntities || m.Entities > w.maxEntities {
			t.Errorf("%s: %d entities, want %d to %d", name, m.Entities, w.minEntities, w.maxEntities)
		}
		if m.Relations == 0 && !strings.HasPrefix(name, "chat-") {
			t.Errorf("%s: no relations", name)
		}
		for _, k := range w.kinds {
			if kinds[k] < 4 {
				t.Errorf("%s: %d questions of kind %s, want at least 4", name, kinds[k], k)
			}
		}
	}
}

// TestCommittedSetGivesNothingAway: a question never contains its answer
// observation, and each answer observation sits on one entity only, so
// finding it in an answer's text means the right entity was returned.
func TestCommittedSetGivesNothingAway(t *testing.T) {
	for _, p := range giveaways(loadCommittedSet(t)) {
		t.Error(p)
	}
}

func giveaways(set *evalSet) []string {
	var problems []string
	texts := map[string]string{}
	for _, q := range set.Questions {
		if strings.Contains(strings.ToLower(q.Question), strings.ToLower(q.Observation)) {
			problems = append(problems, fmt.Sprintf("%s: question %q contains its answer %q", q.ID, q.Question, q.Observation))
		}
		key := q.Memory + "\x00" + strings.ToLower(q.Question)
		if other, dup := texts[key]; dup {
			problems = append(problems, fmt.Sprintf("%s: same question as %s: %q", q.ID, other, q.Question))
		}
		texts[key] = q.ID
		var holders []string
		for name, obs := range set.memory(q.Memory).observations {
			if slices.Contains(obs, q.Observation) {
				holders = append(holders, name)
			}
		}
		if len(holders) != 1 {
			slices.Sort(holders)
			problems = append(problems, fmt.Sprintf("%s: answer %q is on %d entities %v, want exactly one", q.ID, q.Observation, len(holders), holders))
		}
	}
	return problems
}

// conversationShape says how a conversation memory stores its messages.
type conversationShape struct{ messageType, speaker, sent, sentBy string }

var committedConversations = map[string]conversationShape{
	"conversation": {"message", "speaker: ", "sent: ", "sent_by"},
	"russian":      {"сообщение", "автор: ", "дата: ", "написал"},
	// Stored as a client would bulk-store a chat: no link to the speaker.
	"chat-a": {"message", "speaker: ", "date: ", ""},
	"chat-b": {"message", "from: ", "sent: ", ""},
}

// TestCommittedConversations: the conversation memories store one entity
// per message, with its speaker and time as observations and a link from
// the message to its speaker.
func TestCommittedConversations(t *testing.T) {
	set := loadCommittedSet(t)
	for name, shape := range committedConversations {
		messages, speakers, problems := conversationProblems(set, name, shape)
		for _, p := range problems {
			t.Error(p)
		}
		if messages < 100 || speakers < 2 {
			t.Errorf("%s: %d messages by %d people, want at least 100 by two or more", name, messages, speakers)
		}
	}
}

func conversationProblems(set *evalSet, name string, shape conversationShape) (messages, speakers int, problems []string) {
	m := set.memory(name)
	speakerOf := map[string]string{}
	for _, r := range m.relations {
		if r[2] == shape.sentBy {
			speakerOf[r[0]] = r[1]
		}
	}
	seen := map[string]bool{}
	for entity, typ := range m.types {
		if typ != shape.messageType {
			continue
		}
		messages++
		obs := m.observations[entity]
		if len(obs) != 3 || !strings.HasPrefix(obs[0], shape.speaker) || !strings.HasPrefix(obs[1], shape.sent) {
			problems = append(problems, fmt.Sprintf("%s: message %s has observations %q, want speaker, time and text", name, entity, obs))
			continue
		}
		speaker := strings.TrimPrefix(obs[0], shape.speaker)
		if shape.sentBy != "" && speakerOf[entity] != speaker {
			problems = append(problems, fmt.Sprintf("%s: message %s by %s has a %s link to %q", name, entity, speaker, shape.sentBy, speakerOf[entity]))
		}
		seen[speaker] = true
	}
	for _, q := range set.Questions {
		if q.Memory == name && m.types[q.Entity] == shape.messageType && q.Observation != m.observations[q.Entity][2] {
			problems = append(problems, fmt.Sprintf("%s: answer %q is not the message text", q.ID, q.Observation))
		}
	}
	slices.Sort(problems)
	return messages, len(seen), problems
}

// TestSetChecksCatchMistakes shows that the checks above fail on the
// mistakes they are there for.
func TestSetChecksCatchMistakes(t *testing.T) {
	dir := t.TempDir()
	memory := `{"type":"entity","name":"Ann","entityType":"person","observations":["Member of the chat"]}
{"type":"entity","name":"msg-0001","entityType":"message","observations":["speaker: Ann","sent: 2026-01-01 10:00","Bought a red bike"]}
{"type":"entity","name":"msg-0002","entityType":"message","observations":["speaker: Ann","sent: 2026-01-01 10:05","Bought a red bike","extra"]}
{"type":"entity","name":"msg-0003","entityType":"message","observations":["speaker: Ann","sent: 2026-01-01 10:09","Going skiing"]}
{"type":"relation","from":"msg-0001","to":"Ann","relationType":"sent_by"}
{"type":"relation","from":"msg-0002","to":"Ann","relationType":"sent_by"}
`
	questions := `{"id":"c-1","memory":"chat","language":"en","kind":"rare","question":"Who bought a red bike?","entity":"msg-0001","observation":"Bought a red bike"}
{"id":"c-2","memory":"chat","language":"en","kind":"rare","question":"who bought a RED BIKE?","entity":"msg-0003","observation":"Going skiing"}
{"id":"c-3","memory":"chat","language":"en","kind":"rare","question":"Who is in the chat?","entity":"msg-0003","observation":"sent: 2026-01-01 10:09"}
`
	if err := os.MkdirAll(filepath.Join(dir, memoriesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, memoriesDir, "chat.jsonl"), []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, questionsFile), []byte(questions), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := loadSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantGiveaways := []string{
		`c-1: question "Who bought a red bike?" contains its answer "Bought a red bike"`,
		`c-1: answer "Bought a red bike" is on 2 entities [msg-0001 msg-0002], want exactly one`,
		`c-2: same question as c-1: "who bought a RED BIKE?"`,
	}
	if got := giveaways(set); !slices.Equal(got, wantGiveaways) {
		t.Errorf("giveaways:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantGiveaways, "\n"))
	}
	messages, speakers, got := conversationProblems(set, "chat", committedConversations["conversation"])
	wantProblems := []string{
		`c-3: answer "sent: 2026-01-01 10:09" is not the message text`,
		`chat: message msg-0002 has observations ["speaker: Ann" "sent: 2026-01-01 10:05" "Bought a red bike" "extra"], want speaker, time and text`,
		`chat: message msg-0003 by Ann has a sent_by link to ""`,
	}
	if messages != 3 || speakers != 1 || !slices.Equal(got, wantProblems) {
		t.Errorf("conversationProblems: %d messages, %d speakers,\n%s\nwant 3, 1,\n%s", messages, speakers, strings.Join(got, "\n"), strings.Join(wantProblems, "\n"))
	}
}

// TestGeneratedSetIsCurrent: the committed generated memories and
// questions are what the generator writes, so editing its pools without
// running it (or editing its output by hand) fails.
func TestGeneratedSetIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, memoriesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./evalgen", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./evalgen: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range append(files, more...) {
		rel, _ := filepath.Rel(dir, f)
		got, _ := os.ReadFile(f)
		committed, err := os.ReadFile(filepath.Join(committedSet, rel))
		if err != nil || !bytes.Equal(got, committed) {
			t.Errorf("testdata/eval/%s is not what evalgen writes; run go run ./cmd/memory-eval/evalgen -out testdata/eval", rel)
		}
	}
}
