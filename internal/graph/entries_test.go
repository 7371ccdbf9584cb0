package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// An event with a year in its name is no entry of a log: "Tokyo" finds the
// Acme offsite, not the Lisbon one beside it (issue: the digit alone made
// both entries, and each held the other's words).
func TestEventsWithYearsAreNoLog(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Lisbon offsite 2025", "event", "Three days in Lisbon for the whole team", "Planned by Carol"),
		ent("Acme offsite 2026", "event", "Two days in Tokyo in May", "Budget approved in March"),
		ent("Board meeting 2026", "event", "Quarterly review of the roadmap"),
	}, nil)
	for _, q := range []string{"Tokyo", "who went to tokyo?"} {
		var names []string
		for _, h := range g.SearchRanked(q, 0).Hits {
			names = append(names, h.Entity.Name)
		}
		if len(names) != 1 || names[0] != "Acme offsite 2026" {
			t.Errorf("%q: %q, want only the Acme offsite", q, names)
		}
	}
}

// A log is a run of short alike entities of one type: three messages make
// one, and each holds the words of its neighbours; two do not.
func TestLogFoundByWhatItIs(t *testing.T) {
	msgs := []Entity{
		ent("msg-0041", "message", "speaker: Ann", "Anyone up for the climbing wall on Friday?"),
		ent("msg-0042", "message", "speaker: Bo", "Count me in, I'll bring chalk"),
		ent("msg-0043", "message", "speaker: Ann", "Great, see you at six"),
	}
	g := newGraph(t, msgs, nil)
	hits := g.SearchRanked("climbing wall", 0).Hits
	if len(hits) < 2 || hits[0].Entity.Name != "msg-0041" || hits[1].Entity.Name != "msg-0042" {
		t.Errorf("three messages: hits %v, want msg-0041 then msg-0042 (its reply, by its neighbour's words)", entityNames(hits))
	}
	for _, tc := range []struct {
		name string
		ents []Entity
	}{
		{"two messages", msgs[:2]},
		{"other names", []Entity{msgs[0], ent("note 7", "message", "Count me in, I'll bring chalk"), msgs[2]}},
		{"other types", []Entity{msgs[0], ent("msg-0042", "note", "Count me in, I'll bring chalk"), msgs[2]}},
	} {
		g := newGraph(t, tc.ents, nil)
		if hits := g.SearchRanked("climbing wall", 0).Hits; len(hits) != 1 {
			t.Errorf("%s: hits %v, want msg-0041 alone", tc.name, entityNames(hits))
		}
	}
}

func entityNames(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Entity.Name)
	}
	return out
}

func TestAlikeNames(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"msg-0042", "msg-0043", true},
		{"msg-9", "msg-10", true},
		{"2026-03-01 run", "2026-03-02 run", true},
		{"D3:14", "D12:1", true},
		{"сообщение-042", "сообщение-043", true},
		{"Acme offsite 2026", "Lisbon offsite 2025", false},
		{"Nadia", "Nadia", false}, // no digit
		{"msg-1", "msg-1a", false},
		{"msg-1", "note-1", false},
	} {
		if got := alikeNames(tc.a, tc.b); got != tc.want {
			t.Errorf("alikeNames(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// The entry after a strongly matching one takes a share of its score: the
// reply to the message a question names comes before the message before
// it, though both hold its words at the same half weight; and a word every
// entry holds passes nothing on.
func TestEntryAfterAStrongMatchFollows(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("msg-0040", "message", "speaker: Bo", "Long day at the office"),
		ent("msg-0041", "message", "speaker: Ann", "Where should we take the kayak on Saturday?"),
		ent("msg-0042", "message", "speaker: Bo", "The lake past the old mill, it is calm there"),
		ent("msg-0043", "message", "speaker: Ann", "Lovely, see you then"),
	}, nil)
	hits := g.SearchRanked("Where did they take the kayak?", 0).Hits
	if len(hits) < 3 || hits[0].Entity.Name != "msg-0041" || hits[1].Entity.Name != "msg-0042" {
		t.Errorf("hits %v, want msg-0041 then its reply msg-0042", entityNames(hits))
	}
	var crowd []Entity
	for i := range 12 {
		crowd = append(crowd, ent(fmt.Sprintf("Person %02d", i+1), "person", fmt.Sprintf("a person registered on day %d at the desk", i+1)))
	}
	g = newGraph(t, crowd, nil)
	hits = g.SearchRanked("Which person is into music?", 12).Hits
	if len(hits) != 12 || hits[0].Score > 1.1*hits[11].Score {
		t.Errorf("crowd: %d hits, scores %v to %v; want 12 alike", len(hits), hits[0].Score, hits[len(hits)-1].Score)
	}
}

// An entry's document holds its neighbours' text but not their field
// lines: in a chat of two, every message would otherwise hold both
// speakers' names, and a question naming one could not tell them apart.
func TestEntryHoldsNeighboursTextNotTheirFields(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("msg-0041", "message", "speaker: Ann", "date: 3 March 2026", "Anyone up for the climbing wall on Friday?"),
		ent("msg-0042", "message", "speaker: Bo", "date: 3 March 2026", "Count me in, I'll bring chalk"),
		ent("msg-0043", "message", "speaker: Ann", "date: 4 March 2026", "Great, see you at six: bring shoes"),
	}, nil)
	var sequence []string
	g.forEachField(g.Entity("msg-0042"), &fieldScratch{}, func(text string, weight uint32, _ bool) {
		if weight == weightSequence && text != "message" {
			sequence = append(sequence, strings.Clone(text)) // text is valid until the call returns
		}
	})
	want := []string{"anyone up for the climbing wall on friday?", "great, see you at six: bring shoes"}
	if fmt.Sprint(sequence) != fmt.Sprint(want) {
		t.Errorf("msg-0042 holds of its neighbours %q, want %q", sequence, want)
	}

	// A message written after its speaker's name is text, not a field,
	// even next to another of the same speaker.
	g = newGraph(t, []Entity{
		ent("D1:1", "message", "Ann: I went to the climbing wall with my sister yesterday"),
		ent("D1:2", "message", "Ann: She wants to go every week now, which is a lot"),
		ent("D1:3", "message", "Bo: That sounds like a brilliant way to spend a Sunday"),
	}, nil)
	if hits := entityNames(g.SearchRanked("every week", 0).Hits); !slices.Contains(hits, "D1:1") {
		t.Errorf("speaker-prefixed messages: hits %v, want D1:1 among them (by its neighbour's text)", hits)
	}
}

func TestFieldLabel(t *testing.T) {
	for _, tc := range []struct {
		text, label string
		ok          bool
	}{
		{"speaker: ann", "speaker", true},
		{"sent at: 2026-03-01 10:00", "sent at", true},
		{"great, see you at six: bring shoes", "", false},
		{"10:30: standup", "", false},
		{"note:no space", "", false},
		{"a label that is far too long to be a field: x", "", false},
		{"date: 13 january 2026, 10:44 am", "date", true},
		{"caroline: i went to the lgbtq support group yesterday, it was so powerful", "", false},
	} {
		if label, ok := fieldLabel(tc.text); label != tc.label || ok != tc.ok {
			t.Errorf("fieldLabel(%q) = %q, %v, want %q, %v", tc.text, label, ok, tc.label, tc.ok)
		}
	}
}

// After a follow-up question ("Oh, how is she doing?") the answer is the
// entry after it: it comes right after the news and its question, before
// the other mention of a sister and what followed it.
func TestAnswerToAFollowUpQuestionFollows(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("msg-0040", "message", "speaker: Bo", "Long day at the office"),
		ent("msg-0041", "message", "speaker: Ann", "My sister rang last night"),
		ent("msg-0042", "message", "speaker: Bo", "Oh, how is she doing?"),
		ent("msg-0043", "message", "speaker: Ann", "Pregnant! Due in August and it's twins"),
		ent("msg-0044", "message", "speaker: Bo", "Tell her congratulations from me"),
		ent("msg-0045", "message", "speaker: Ann", "Quiet week here"),
		ent("msg-0046", "message", "speaker: Bo", "My sister sent me forty photos of her garden"),
		ent("msg-0047", "message", "speaker: Ann", "Haha classic"),
		ent("msg-0048", "message", "speaker: Bo", "Off to bed"),
	}, nil)
	hits := g.SearchRanked("What news did Ann's sister have?", 0).Hits
	if got := entityNames(hits); len(got) < 4 || got[0] != "msg-0041" || !slices.Contains(got[1:3], "msg-0043") {
		t.Errorf("hits %v, want msg-0041, then its question msg-0042 and the answer msg-0043", got)
	}
}

// A reaction too short to answer anything ("Oh no") takes no share of the
// strong match before it.
func TestBriefReactionTakesNoShare(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("msg-0040", "message", "speaker: Bo", "My bike got stolen from outside the station"),
		ent("msg-0041", "message", "speaker: Ann", "Oh no"),
		ent("msg-0042", "message", "speaker: Bo", "Long day at the office"),
		ent("msg-0043", "message", "speaker: Ann", "Any news about the stolen bike?"),
		ent("msg-0044", "message", "speaker: Bo", "The police found it on Gumtree, picking it up this afternoon"),
	}, nil)
	var score = map[string]float64{}
	for _, h := range g.SearchRanked("Where was Bo's bike stolen?", 0).Hits {
		score[h.Entity.Name] = h.Score
	}
	// Its own score is its neighbours' words at half weight; a share
	// would add half of msg-0040's.
	if score["msg-0041"] >= followShare*score["msg-0040"] {
		t.Errorf("scores %v: want the reaction msg-0041 below half of msg-0040 (no share)", score)
	}
}
