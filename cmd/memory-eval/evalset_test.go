package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// The committed evaluation set (testdata/eval) is checked here: that it
// loads, that it is as big and as varied as the project promises (SPEC §8),
// and that no question gives its answer away.

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
	want := map[string]struct {
		language     string
		minQuestions int
		minEntities  int
		maxEntities  int
	}{
		"assistant":    {"en", 100, 60, 150},
		"conversation": {"en", 100, 200, 400},
		"japanese":     {"ja", 60, 30, 150},
		"russian":      {"ru", 60, 100, 400},
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
		if m.Relations == 0 {
			t.Errorf("%s: no relations", name)
		}
		for _, k := range []string{"paraphrase", "rare", "relation", "neighbour"} {
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
	set := loadCommittedSet(t)
	texts := map[string]string{}
	for _, q := range set.Questions {
		if strings.Contains(strings.ToLower(q.Question), strings.ToLower(q.Observation)) {
			t.Errorf("%s: question %q contains its answer %q", q.ID, q.Question, q.Observation)
		}
		key := q.Memory + "\x00" + strings.ToLower(q.Question)
		if other, dup := texts[key]; dup {
			t.Errorf("%s: same question as %s: %q", q.ID, other, q.Question)
		}
		texts[key] = q.ID
		var holders []string
		m := set.memory(q.Memory)
		for name, obs := range m.observations {
			if slices.Contains(obs, q.Observation) {
				holders = append(holders, name)
			}
		}
		if len(holders) != 1 {
			t.Errorf("%s: answer %q is on %d entities %v, want exactly one", q.ID, q.Observation, len(holders), holders)
		}
	}
}

// TestCommittedConversations: the conversation memories store one entity
// per message, with its speaker and time as observations and a link from
// the message to its speaker.
func TestCommittedConversations(t *testing.T) {
	set := loadCommittedSet(t)
	shapes := map[string]struct{ messageType, speaker, sent, sentBy string }{
		"conversation": {"message", "speaker: ", "sent: ", "sent_by"},
		"russian":      {"сообщение", "автор: ", "дата: ", "написал"},
	}
	for name, shape := range shapes {
		m := set.memory(name)
		speakerOf := map[string]string{}
		for _, r := range m.relations {
			if r[2] == shape.sentBy {
				speakerOf[r[0]] = r[1]
			}
		}
		messages, speakers := 0, map[string]int{}
		for entity, typ := range m.types {
			if typ != shape.messageType {
				continue
			}
			messages++
			obs := m.observations[entity]
			if len(obs) != 3 || !strings.HasPrefix(obs[0], shape.speaker) || !strings.HasPrefix(obs[1], shape.sent) {
				t.Errorf("%s: message %s has observations %q, want speaker, time and text", name, entity, obs)
				continue
			}
			speaker := strings.TrimPrefix(obs[0], shape.speaker)
			if speakerOf[entity] != speaker {
				t.Errorf("%s: message %s by %s has a %s link to %q", name, entity, speaker, shape.sentBy, speakerOf[entity])
			}
			speakers[speaker]++
		}
		if messages < 100 || len(speakers) < 2 {
			t.Errorf("%s: %d messages by %v, want at least 100 by two or more people", name, messages, speakers)
		}
		for _, q := range set.Questions {
			if q.Memory == name && m.types[q.Entity] == shape.messageType && q.Observation != m.observations[q.Entity][2] {
				t.Errorf("%s: answer %q is not the message text", q.ID, q.Observation)
			}
		}
	}
}
