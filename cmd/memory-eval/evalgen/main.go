package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
	"time"
)

// chat is one conversation's shape: who talks, how a message is named and
// how its speaker and time are written.
type chat struct {
	memory     string
	prefix     string // of message names; the id prefix of its questions
	people     [2]string
	speaker    string // observation prefix
	timeLabel  string
	timeFormat func(time.Time) string
	start      time.Time
	seed       uint64
}

var chats2 = []chat{
	{
		memory: "chat-a", prefix: "conv-a", people: [2]string{"Priya", "Daniel"},
		speaker: "speaker: ", timeLabel: "date: ",
		timeFormat: func(t time.Time) string { return t.Format("2 January 2006, 3:04 pm") },
		start:      time.Date(2026, 1, 9, 0, 0, 0, 0, time.UTC), seed: 1,
	},
	{
		memory: "chat-b", prefix: "conv-b", people: [2]string{"Marta", "Kofi"},
		speaker: "from: ", timeLabel: "sent: ",
		timeFormat: func(t time.Time) string { return t.Format("2006-01-02 15:04") },
		start:      time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), seed: 2,
	},
}

type message struct {
	name, speaker, text string
	at                  time.Time
}

type question struct {
	ID          string `json:"id"`
	Memory      string `json:"memory"`
	Language    string `json:"language"`
	Kind        string `json:"kind"`
	Question    string `json:"question"`
	Entity      string `json:"entity"`
	Observation string `json:"observation"`
}

// minMessages is how long each chat is at least.
const minMessages = 1000

func main() {
	out := flag.String("out", "testdata/eval", "the evaluation set's directory")
	flag.Parse()
	var questions []question
	facts := map[string][]string{}
	var people []string
	var personQuestions []question
	for _, c := range chats2 {
		msgs, qs, pqs, f := c.generate()
		questions = append(questions, qs...)
		personQuestions = append(personQuestions, pqs...)
		for _, p := range c.people {
			people = append(people, p)
			facts[p] = f[p]
		}
		g := graph.New()
		for _, m := range msgs {
			g.CreateEntities([]graph.Entity{{Name: m.name, EntityType: "message", Observations: []string{c.speaker + m.speaker, c.timeLabel + c.timeFormat(m.at), m.text}}})
		}
		writeMemory(filepath.Join(*out, "memories", c.memory+".jsonl"), g)
	}
	g := graph.New()
	for _, p := range people {
		g.CreateEntities([]graph.Entity{{Name: p, EntityType: "person", Observations: facts[p]}})
	}
	for _, c := range chats2 {
		if _, err := g.CreateRelations([]graph.Relation{{From: c.people[0], To: c.people[1], RelationType: "friends_with"}}); err != nil {
			log.Fatal(err)
		}
	}
	writeMemory(filepath.Join(*out, "memories", "people.jsonl"), g)
	var buf bytes.Buffer
	for i := range personQuestions {
		personQuestions[i].ID = fmt.Sprintf("pp-%03d", i+1)
	}
	buf.Reset()
	for _, q := range append(questions, personQuestions...) {
		writeJSON(&buf, q)
	}
	write(filepath.Join(*out, "questions-generated.jsonl"), buf.Bytes())
}

func writeJSON(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		log.Fatal(err)
	}
}

// writeMemory writes g as a memory file, in the reference's format, with
// the codec the server itself writes with.
func writeMemory(path string, g *graph.Graph) {
	var buf bytes.Buffer
	if err := jsonl.Write(&buf, g, nil); err != nil {
		log.Fatal(err)
	}
	write(path, buf.Bytes())
}

func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
}

// scheduled is one event with its item and the speaker who has the news.
type scheduled struct {
	ev    *event
	item  []string
	actor int
}

// generate writes c's messages in sessions, the questions about them, the
// same questions asked of the people memory, and each person's facts.
func (c chat) generate() (msgs []message, qs, pqs []question, facts map[string][]string) {
	g := &chatLog{
		c:          c,
		r:          rand.New(rand.NewPCG(c.seed, 42)),
		usedFiller: map[fillerKey]bool{},
		facts:      map[string][]string{},
		eventLine:  map[string]bool{},
		asked:      map[string]bool{},
		day:        c.start,
	}
	g.at = g.day
	g.plan = g.schedule()
	for len(g.plan) > 0 || len(g.msgs) < minMessages {
		g.session()
	}
	g.keepSayings()
	g.addProfiles()
	return g.msgs, g.qs, g.pqs, g.facts
}

type fillerKey struct{ when, doing int }

// chatLog is one chat being written, message by message; every choice is
// drawn from r, in order, so the log is the same on every run.
type chatLog struct {
	c          chat
	r          *rand.Rand
	plan       []scheduled // the events still to come
	msgs       []message
	qs, pqs    []question
	facts      map[string][]string // by person
	usedFiller map[fillerKey]bool
	eventLine  map[string]bool // message names that are part of an event
	asked      map[string]bool // question texts
	day, at    time.Time
}

// schedule is every event's every item, in a shuffled order, each with the
// speaker who has the news.
func (g *chatLog) schedule() []scheduled {
	var plan []scheduled
	for i := range events {
		for j, it := range events[i].items {
			plan = append(plan, scheduled{&events[i], it, (i + j + int(g.c.seed)) % 2})
		}
	}
	g.r.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return plan
}

// add writes one message a few minutes after the last and returns its name.
func (g *chatLog) add(who int, text string) string {
	g.at = g.at.Add(time.Duration(1+g.r.IntN(6)) * time.Minute)
	m := message{name: fmt.Sprintf("%s-%04d", g.c.prefix, len(g.msgs)+1), speaker: g.c.people[who], text: text, at: g.at}
	g.msgs = append(g.msgs, m)
	return m.name
}

// filler writes two messages of small talk: a canned exchange, or news of
// the day (never the same twice) and a reaction.
func (g *chatLog) filler() {
	r := g.r
	who := r.IntN(2)
	if r.IntN(3) == 0 {
		ch := chats[r.IntN(len(chats))]
		g.add(who, ch[0])
		g.add(1-who, ch[1])
		return
	}
	var k fillerKey
	for {
		k = fillerKey{r.IntN(len(whens)), r.IntN(len(doings))}
		if !g.usedFiller[k] {
			break
		}
	}
	g.usedFiller[k] = true
	g.add(who, whens[k.when]+" "+doings[k.doing]+". "+feelings[r.IntN(len(feelings))])
	g.add(1-who, reactions[r.IntN(len(reactions))])
}

// session is one day's conversation, some days after the last: an opener
// and a greeting, one to three rounds of small talk each followed by the
// next event, more small talk, and a closer.
func (g *chatLog) session() {
	r := g.r
	g.day = g.day.AddDate(0, 0, 2+r.IntN(7))
	g.at = g.day.Add(time.Duration(8*60+r.IntN(13*60)) * time.Minute)
	first := r.IntN(2)
	g.add(first, openers[r.IntN(len(openers))])
	g.add(1-first, greetings[r.IntN(len(greetings))])
	n := 1 + r.IntN(3)
	for range n {
		for range 1 + r.IntN(4) {
			g.filler()
		}
		if len(g.plan) == 0 {
			continue
		}
		s := g.plan[0]
		g.plan = g.plan[1:]
		g.playEvent(s)
	}
	for range r.IntN(3) {
		g.filler()
	}
	last := r.IntN(2)
	g.add(last, closers[r.IntN(len(closers))])
}

// playEvent writes an event's lines, the fact it gives its actor, and its
// questions (each text asked once, or it would have two answers); the
// first is asked of the people memory too.
func (g *chatLog) playEvent(s scheduled) {
	c := g.c
	names := make([]string, len(s.ev.lines))
	texts := make([]string, len(s.ev.lines))
	fill := func(t string) string { return c.fill(t, s) }
	for i, l := range s.ev.lines {
		who := s.actor
		if l.other {
			who = 1 - who
		}
		texts[i] = fill(l.text)
		names[i] = g.add(who, texts[i])
		g.eventLine[names[i]] = true
	}
	date := g.msgs[len(g.msgs)-len(names)].at.Format("2 January 2006")
	actor := c.people[s.actor]
	fact := strings.ReplaceAll(fill(s.ev.fact), "{date}", date)
	if !strings.HasPrefix(fact, actor) {
		fact = actor + " " + strings.ToLower(fact[:1]) + fact[1:]
	}
	g.facts[actor] = append(g.facts[actor], fact)
	for k, q := range s.ev.questions {
		text := fill(q.text)
		if g.asked[text] {
			continue
		}
		g.asked[text] = true
		g.qs = append(g.qs, question{fmt.Sprintf("%s-%03d", c.prefix, len(g.qs)+1), c.memory, "en", q.kind, text, names[q.target], texts[q.target]})
		if k == 0 {
			g.pqs = append(g.pqs, question{"", "people", "en", q.kind, text, actor, fact})
		}
	}
}

// keepSayings adds to each person's facts what they said outside the
// events, as a note-taker keeps it.
func (g *chatLog) keepSayings() {
	kept := map[string]bool{}
	for _, m := range g.msgs {
		if g.eventLine[m.name] || len(strings.Fields(m.text)) < 3 {
			continue
		}
		f := fmt.Sprintf("%s said on %s: %s", m.speaker, m.at.Format("2 January 2006"), m.text)
		if kept[f] {
			continue
		}
		kept[f] = true
		g.facts[m.speaker] = append(g.facts[m.speaker], f)
	}
}

// addProfiles adds each person's profile facts.
func (g *chatLog) addProfiles() {
	for who, p := range g.c.people {
		for i, f := range profile {
			v := f[1+(i+who+int(g.c.seed))%(len(f)-1)]
			g.facts[p] = append(g.facts[p], p+" "+fmt.Sprintf(f[0], v))
		}
	}
}

// fill puts the event's people and item into a template.
func (c chat) fill(t string, s scheduled) string {
	for i, v := range s.item { // first, as a slot may name the people
		t = strings.ReplaceAll(t, fmt.Sprintf("{%d}", i+1), v)
	}
	t = strings.ReplaceAll(t, "{A}", c.people[s.actor])
	t = strings.ReplaceAll(t, "{B}", c.people[1-s.actor])
	if strings.Contains(strings.ReplaceAll(t, "{date}", ""), "{") {
		log.Fatalf("unfilled template %q", t)
	}
	return t
}
