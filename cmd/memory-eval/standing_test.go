package main

import (
	"regexp"
	"strings"
	"testing"
)

const standingSet = "../../testdata/eval-standing"

var wordRE = regexp.MustCompile(`\pL[\pL\pN'-]*`)

// TestStandingSet: the standing-instructions set loads; every question
// depends on a standing fact of its memory, shares no word of four letters
// or more with it, and every standing fact is asked about.
func TestStandingSet(t *testing.T) {
	set, err := loadSet(standingSet)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Questions) < 20 {
		t.Errorf("%d questions, want at least 20", len(set.Questions))
	}
	asked := map[string]bool{}
	for _, q := range set.Questions {
		if q.Kind != "standing" {
			t.Errorf("%s: kind %q", q.ID, q.Kind)
		}
		o := strings.ToLower(q.Observation)
		if !strings.HasPrefix(o, "standing preference: ") && !strings.HasPrefix(o, "standing instruction: ") {
			t.Errorf("%s: %q is not a standing fact", q.ID, q.Observation)
		}
		asked[q.Memory+"\x00"+q.Observation] = true
		body := o[strings.Index(o, ":")+1:]
		for _, w := range wordRE.FindAllString(strings.ToLower(q.Question), -1) {
			if len(w) >= 4 && strings.Contains(" "+strings.Join(wordRE.FindAllString(body, -1), " ")+" ", " "+w+" ") {
				t.Errorf("%s: %q shares %q with %q", q.ID, q.Question, w, q.Observation)
			}
		}
	}
	for _, m := range set.Memories {
		for entity, obs := range m.observations {
			for _, o := range obs {
				l := strings.ToLower(o)
				if (strings.HasPrefix(l, "standing preference:") || strings.HasPrefix(l, "standing instruction:")) && !asked[m.Name+"\x00"+o] {
					t.Errorf("%s: standing fact %q of %s is asked about by no question", m.Name, o, entity)
				}
			}
		}
	}
}

func TestStandingEvidenceAnywhere(t *testing.T) {
	text := strings.Repeat("x", 9000) + "Standing preference: tea"
	if !evidenceWithin(text, "Standing preference: tea", evidenceWindowFor(question{Kind: "standing"}, text)) {
		t.Error("a standing fact after 4000 bytes does not count")
	}
	if evidenceWithin(text, "Standing preference: tea", evidenceWindowFor(question{Kind: "paraphrase"}, text)) {
		t.Error("another kind's evidence after 4000 bytes counts")
	}
}
