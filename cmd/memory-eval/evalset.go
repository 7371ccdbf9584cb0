package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// An evaluation set is a directory holding memories/NAME.jsonl (memory
// files in the reference format) and questions.jsonl (one question a line).
const (
	memoriesDir   = "memories"
	questionsFile = "questions.jsonl"
	// generatedQuestions matches the files of generated questions.
	generatedQuestions = "questions-*.jsonl"
)

// question is one line of questions.jsonl: a question as a person would ask
// it, and the entity and observation (exact string) that answer it.
type question struct {
	ID          string `json:"id"`
	Memory      string `json:"memory"`   // NAME of memories/NAME.jsonl
	Language    string `json:"language"` // en, ja, ru
	Kind        string `json:"kind"`     // see questionKinds
	Question    string `json:"question"`
	Entity      string `json:"entity"`
	Observation string `json:"observation"`
}

// questionKinds says what each kind of question tests.
var questionKinds = map[string]string{
	"paraphrase": "the user's own words for a fact stored in other words",
	"rare":       "shares only one or two rare words with the answer",
	"relation":   "about how two entities are related",
	"neighbour":  "the answer sits on an entity related to the one named",
	"span":       "the question's words are in one message, the answer in another a message or two away",
	"reply":      "answered by the reply to the message the question names",
	"temporal":   "asks when something happened; the date is on the answering entity",
	"noword":     "shares no content word with the answer",
	"crowd":      "its one common word matches many similar entities; the answer shares none of its other words",
}

// memory is one memory file of the set, read enough to check answers.
type memory struct {
	Name         string
	Path         string
	Entities     int
	Observations int
	Relations    int
	observations map[string][]string // entity name -> observations
	types        map[string]string   // entity name -> entityType
	relations    [][3]string         // from, to, relationType in file order
}

// evalSet is a loaded evaluation set.
type evalSet struct {
	Dir       string
	Memories  []*memory // sorted by name
	Questions []question
}

func (s *evalSet) memory(name string) *memory {
	for _, m := range s.Memories {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// loadSet reads an evaluation set and checks that it hangs together: every
// memory file is well formed, every question names a memory, an entity and
// an observation that exist. It does not judge the questions' quality; the
// set's own test does (evalset_test.go).
func loadSet(dir string) (*evalSet, error) {
	files, err := filepath.Glob(filepath.Join(dir, memoriesDir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no memory files in %s", filepath.Join(dir, memoriesDir))
	}
	set := &evalSet{Dir: dir}
	for _, f := range files {
		m, err := loadMemory(f)
		if err != nil {
			return nil, err
		}
		set.Memories = append(set.Memories, m)
	}
	slices.SortFunc(set.Memories, func(a, b *memory) int { return strings.Compare(a.Name, b.Name) })

	// questions.jsonl is written by hand; questions-*.jsonl by generators
	// (cmd/memory-eval/evalgen).
	qpaths, err := filepath.Glob(filepath.Join(dir, generatedQuestions))
	if err != nil {
		return nil, err
	}
	qpaths = append([]string{filepath.Join(dir, questionsFile)}, qpaths...)
	seen := map[string]bool{}
	for _, qpath := range qpaths {
		if err := set.loadQuestions(qpath, seen); err != nil {
			return nil, err
		}
	}
	if len(set.Questions) == 0 {
		return nil, fmt.Errorf("%s holds no questions", qpaths[0])
	}
	return set, nil
}

// loadQuestions reads one questions file into s.
func (s *evalSet) loadQuestions(qpath string, seen map[string]bool) error {
	data, err := os.ReadFile(qpath)
	if err != nil {
		return err
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var q question
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return fmt.Errorf("%s:%d: %v", qpath, i+1, err)
		}
		if err := s.checkQuestion(q, seen); err != nil {
			return fmt.Errorf("%s:%d: %v", qpath, i+1, err)
		}
		seen[q.ID] = true
		s.Questions = append(s.Questions, q)
	}
	return nil
}

func (s *evalSet) checkQuestion(q question, seen map[string]bool) error {
	switch {
	case q.ID == "":
		return fmt.Errorf("question without id")
	case seen[q.ID]:
		return fmt.Errorf("id %q used twice", q.ID)
	case strings.TrimSpace(q.Question) == "":
		return fmt.Errorf("%s: empty question", q.ID)
	case q.Language == "":
		return fmt.Errorf("%s: no language", q.ID)
	}
	if _, ok := questionKinds[q.Kind]; !ok {
		return fmt.Errorf("%s: unknown kind %q", q.ID, q.Kind)
	}
	m := s.memory(q.Memory)
	if m == nil {
		return fmt.Errorf("%s: no memory %q", q.ID, q.Memory)
	}
	obs, ok := m.observations[q.Entity]
	if !ok {
		return fmt.Errorf("%s: memory %s has no entity %q", q.ID, q.Memory, q.Entity)
	}
	if !slices.Contains(obs, q.Observation) {
		return fmt.Errorf("%s: entity %q in %s has no observation %q", q.ID, q.Entity, q.Memory, q.Observation)
	}
	return nil
}

// memoryLine is one line of a reference memory file.
type memoryLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

// loadMemory reads a memory file strictly: the set is ours, so a line the
// server would only tolerate is a mistake in the set.
func loadMemory(path string) (*memory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &memory{
		Name:         strings.TrimSuffix(filepath.Base(path), ".jsonl"),
		Path:         path,
		observations: map[string][]string{},
		types:        map[string]string{},
	}
	relations := map[[3]string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l memoryLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch l.Type {
		case "entity":
			err = m.addEntity(l)
		case "relation":
			err = m.addRelation(l, relations)
		default:
			err = fmt.Errorf("unknown type %q", l.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %v", path, err)
	}
	if m.Entities == 0 {
		return nil, fmt.Errorf("%s holds no entities", path)
	}
	return m, nil
}

// addEntity adds an entity line: complete, new, before every relation,
// with no observation twice.
func (m *memory) addEntity(l memoryLine) error {
	if l.Name == "" || l.EntityType == "" || len(l.Observations) == 0 {
		return errors.New("entity needs name, entityType and observations")
	}
	if _, dup := m.observations[l.Name]; dup {
		return fmt.Errorf("entity %q defined twice", l.Name)
	}
	if m.Relations > 0 {
		return errors.New("entity after relations (the reference writes entities first)")
	}
	for i, o := range l.Observations {
		if slices.Contains(l.Observations[:i], o) {
			return fmt.Errorf("entity %q repeats observation %q", l.Name, o)
		}
	}
	m.observations[l.Name] = l.Observations
	m.types[l.Name] = l.EntityType
	m.Entities++
	m.Observations += len(l.Observations)
	return nil
}

// addRelation adds a relation line between known entities, not seen
// before.
func (m *memory) addRelation(l memoryLine, seen map[[3]string]bool) error {
	if l.RelationType == "" {
		return errors.New("relation without relationType")
	}
	for _, end := range []string{l.From, l.To} {
		if _, ok := m.observations[end]; !ok {
			return fmt.Errorf("relation names unknown entity %q", end)
		}
	}
	key := [3]string{l.From, l.To, l.RelationType}
	if seen[key] {
		return fmt.Errorf("relation %v repeated", key)
	}
	seen[key] = true
	m.relations = append(m.relations, key)
	m.Relations++
	return nil
}

// selectQuestions keeps the questions of the named memories (all when
// memories is empty) whose id, kind or text contains filter (case-insensitive).
func selectQuestions(qs []question, memories []string, filter string) []question {
	filter = strings.ToLower(filter)
	var out []question
	for _, q := range qs {
		if len(memories) > 0 && !slices.Contains(memories, q.Memory) {
			continue
		}
		if filter != "" && !strings.Contains(strings.ToLower(q.ID+"\x00"+q.Kind+"\x00"+q.Question), filter) {
			continue
		}
		out = append(out, q)
	}
	return out
}

func (s *evalSet) memoryNames() []string {
	names := make([]string, len(s.Memories))
	for i, m := range s.Memories {
		names[i] = m.Name
	}
	return names
}
