// Package testgraph generates realistic knowledge graphs for benchmarks and
// tests: N entities with five observations each in mixed English, Japanese
// and Russian, 2N relations, written in the reference server's file format.
// The same size and seed always give the same graph.
package testgraph

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Entity, Relation and Graph mirror the reference memory file's records.
type Entity struct {
	Name         string
	EntityType   string
	Observations []string
}

type Relation struct {
	From, To, RelationType string
}

type Graph struct {
	Entities  []Entity
	Relations []Relation
}

// Queries are the search_nodes terms the workload sends. The generator picks
// them so that their hit counts are known: Rare is planted in exactly one
// entity, the others occur naturally in the generated text.
type Queries struct {
	Rare     string
	Common   string
	TwoWords string
	Japanese string
}

// DefaultQueries are the search terms every generated graph is built around.
// None of them occurs in an entity name, so the hit counts depend on the
// observation text alone.
var DefaultQueries = Queries{
	Rare:     "quetzalcoatlite",
	Common:   "work",
	TwoWords: "machine learning",
	Japanese: "東京",
}

// ObservationsPerEntity is fixed by the benchmark's definition of a graph of
// size N: N entities with five observations each and 2N relations.
const ObservationsPerEntity = 5

// Generate builds a graph of n entities (n >= 2), five distinct observations
// each, and 2n distinct relations between existing entities. The same n and
// seed always give the same graph. Text is a realistic mix of English,
// Japanese and Russian, the languages of the project's users.
func Generate(n int, seed uint64) (*Graph, Queries) {
	if n < 2 {
		panic("Generate: n must be at least 2")
	}
	r := rand.New(rand.NewPCG(seed, 0x6d656d6f72792d62)) // "memory-b"
	g := &Graph{
		Entities:  make([]Entity, n),
		Relations: make([]Relation, 0, 2*n),
	}
	for i := range g.Entities {
		g.Entities[i] = generateEntity(r, i)
	}

	// Plant the rare term in exactly one entity, replacing one observation.
	rare := &g.Entities[r.IntN(n)]
	rare.Observations[r.IntN(ObservationsPerEntity)] =
		"Collects minerals; the pride of the collection is a " + DefaultQueries.Rare + " specimen"

	type triple struct {
		from, to int32
		kind     uint8
	}
	seen := make(map[triple]bool, 2*n)
	for len(g.Relations) < 2*n {
		t := triple{from: int32(r.IntN(n)), to: int32(r.IntN(n)), kind: uint8(r.IntN(len(relationTypes)))}
		if t.from == t.to || seen[t] {
			continue
		}
		seen[t] = true
		g.Relations = append(g.Relations, Relation{
			From:         g.Entities[t.from].Name,
			To:           g.Entities[t.to].Name,
			RelationType: relationTypes[t.kind],
		})
	}
	return g, DefaultQueries
}

// CountMatches counts the entities that the reference search rule matches:
// the whole query occurs, lower-cased, in the name, the type or an
// observation. Every server must return at least these.
func (g *Graph) CountMatches(query string) int {
	q := strings.ToLower(query)
	count := 0
	for _, e := range g.Entities {
		if entityContains(e, q) {
			count++
		}
	}
	return count
}

func entityContains(e Entity, lowerQuery string) bool {
	if strings.Contains(strings.ToLower(e.Name), lowerQuery) ||
		strings.Contains(strings.ToLower(e.EntityType), lowerQuery) {
		return true
	}
	for _, o := range e.Observations {
		if strings.Contains(strings.ToLower(o), lowerQuery) {
			return true
		}
	}
	return false
}

// ObservationCount is the number of observations across all entities.
func (g *Graph) ObservationCount() int {
	n := 0
	for _, e := range g.Entities {
		n += len(e.Observations)
	}
	return n
}

// WriteJSONL writes g in the reference server's file format: one compact JSON
// object per line, entities then relations, keys in the reference's order,
// non-ASCII as UTF-8 and no HTML escaping (JavaScript's JSON.stringify).
func (g *Graph) WriteJSONL(w io.Writer) error {
	type entityLine struct {
		Type         string   `json:"type"`
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	}
	type relationLine struct {
		Type         string `json:"type"`
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, e := range g.Entities {
		obs := e.Observations
		if obs == nil {
			obs = []string{}
		}
		if err := enc.Encode(entityLine{"entity", e.Name, e.EntityType, obs}); err != nil {
			return err
		}
	}
	for _, rel := range g.Relations {
		if err := enc.Encode(relationLine{"relation", rel.From, rel.To, rel.RelationType}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

type language int

const (
	english language = iota
	japanese
	russian
)

// vocabulary is one language's sentence templates and the words that fill
// their {slots}. Entity names come from the name slots.
type vocabulary struct {
	templates []string
	slots     map[string][]string
}

var relationTypes = []string{
	"works_at", "knows", "manages", "collaborates_with", "located_in",
	"participates_in", "reports_to", "mentors", "depends_on", "owns",
}

var entityTypes = []string{"person", "organization", "project", "place"}

func generateEntity(r *rand.Rand, i int) Entity {
	lang := pickLanguage(r)
	typ := entityTypes[pickWeighted(r, []int{55, 15, 15, 15})]
	e := Entity{
		Name:         entityName(r, lang, typ, i),
		EntityType:   typ,
		Observations: make([]string, 0, ObservationsPerEntity),
	}
	for len(e.Observations) < ObservationsPerEntity {
		// Most observations are in the entity's language; users mix.
		obsLang := lang
		if r.IntN(10) >= 7 {
			obsLang = pickLanguage(r)
		}
		v := vocabularies[obsLang]
		o := v.expand(r, v.templates[r.IntN(len(v.templates))])
		if !slices.Contains(e.Observations, o) {
			e.Observations = append(e.Observations, o)
		}
	}
	return e
}

func pickLanguage(r *rand.Rand) language {
	return language(pickWeighted(r, []int{60, 20, 20}))
}

func pickWeighted(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// entityName makes a readable, unique name: the index suffix keeps names
// distinct at any N, as users disambiguate namesakes.
func entityName(r *rand.Rand, lang language, typ string, i int) string {
	v := vocabularies[lang]
	var patterns map[string]string
	switch lang {
	case english:
		patterns = map[string]string{
			"person":       "{first}_{last}",
			"organization": "{orgname}",
			"project":      "Project_{codename}",
			"place":        "{citynom}_Office",
		}
	case japanese:
		patterns = map[string]string{
			"person":       "{family}{given}",
			"organization": "{orgname}",
			"project":      "{codename}プロジェクト",
			"place":        "{citynom}支社",
		}
	case russian:
		patterns = map[string]string{
			"person":       "{fullname}",
			"organization": "ООО_{orgname}",
			"project":      "Проект_{codename}",
			"place":        "Офис_{citynom}",
		}
	}
	base := strings.ReplaceAll(v.expand(r, patterns[typ]), " ", "_")
	return base + "_" + strconv.Itoa(i+1)
}

// expand fills every {slot} in tmpl with a random word for that slot.
func (v vocabulary) expand(r *rand.Rand, tmpl string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			panic("unclosed slot in template " + tmpl)
		}
		b.WriteString(tmpl[:open])
		b.WriteString(v.fill(r, tmpl[open+1:open+end]))
		tmpl = tmpl[open+end+1:]
	}
}

func (v vocabulary) fill(r *rand.Rand, slot string) string {
	switch slot {
	case "year":
		return strconv.Itoa(2012 + r.IntN(14))
	case "day":
		return strconv.Itoa(1 + r.IntN(28))
	case "n":
		return strconv.Itoa(2 + r.IntN(8))
	}
	words, ok := v.slots[slot]
	if !ok {
		panic(fmt.Sprintf("no words for slot {%s}", slot))
	}
	return words[r.IntN(len(words))]
}

var vocabularies = map[language]vocabulary{
	english: {
		templates: []string{
			"Works at {orgname} as a {role}",
			"Lives in {citynom} with a {pet} named {petname}",
			"Drinks {drink} every morning before work",
			"Has been learning {skill} since {year}",
			"Mentioned a trip to {citynom} planned for {month}",
			"Birthday is on {month} {day}",
			"Enjoys {hobby} on weekends",
			"Interested in machine learning for {topic}",
			"Met {first} {last} at a conference in {citynom}",
			"Uses {tool} for notes and planning",
			"Prefers short meetings in the {timeofday}",
			"Is allergic to {allergen}",
			"Asked to be reminded about the {codename} review every {weekday}",
			"Said that {first} from {orgname} is a trusted contact",
			"Budget for project {codename} is {n}0 thousand dollars",
			"Moved to the {codename} team in {month} {year}",
			"Would rather get updates by {channel} than by phone",
		},
		slots: map[string][]string{
			"first":     {"Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Isabel", "Jack", "Karen", "Liam", "Maria", "Noah", "Olivia", "Peter", "Rachel", "Samuel", "Tara", "Umar", "Victoria", "William", "Zoe"},
			"last":      {"Johnson", "Smith", "Brown", "Garcia", "Miller", "Davis", "Wilson", "Anderson", "Taylor", "Thomas", "Moore", "Martin", "Lee", "Walker", "Hall", "Young"},
			"orgname":   {"Northwind Traders", "Acme Corp", "Globex", "Initech", "Umbrella Analytics", "Stark Logistics", "Blue Harbor", "Evergreen Health", "Pinecone Robotics", "Riverside Bank"},
			"role":      {"software engineer", "product manager", "data scientist", "designer", "nurse", "teacher", "accountant", "sales director", "researcher", "consultant"},
			"citynom":   {"London", "New York", "Berlin", "Toronto", "Sydney", "Osaka", "Moscow", "Saint Petersburg", "Paris", "Singapore", "Austin", "Lisbon"},
			"pet":       {"dog", "cat", "parrot", "rabbit", "tortoise"},
			"petname":   {"Biscuit", "Luna", "Max", "Pepper", "Mochi", "Ziggy", "Tofu"},
			"drink":     {"coffee", "green tea", "black tea", "a matcha latte", "hot chocolate", "sparkling water", "an espresso"},
			"skill":     {"Go", "Rust", "Python", "Spanish", "Japanese", "the piano", "watercolor painting", "public speaking", "statistics", "Kubernetes"},
			"month":     {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
			"hobby":     {"rock climbing", "chess", "gardening", "photography", "long-distance running", "baking bread", "birdwatching", "board games"},
			"topic":     {"distributed systems", "computer vision", "climate modelling", "search ranking", "recommender systems", "robotics"},
			"tool":      {"Vim", "VS Code", "Notion", "Obsidian", "Excel", "Figma", "Jira"},
			"timeofday": {"morning", "afternoon", "evening"},
			"allergen":  {"peanuts", "shellfish", "pollen", "penicillin", "dust mites"},
			"codename":  {"Apollo", "Borealis", "Cedar", "Dynamo", "Everest", "Falcon", "Granite", "Helix", "Juniper", "Kestrel"},
			"weekday":   {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
			"channel":   {"email", "Slack", "text message", "a shared document"},
		},
	},
	japanese: {
		templates: []string{
			"{citynom}に住んでいる",
			"{orgname}で{role}として働いている",
			"毎朝{drink}を飲む",
			"{year}年から{skill}を勉強している",
			"趣味は{hobby}",
			"東京への出張が月に{n}回ある",
			"{month}に{citynom}へ旅行する予定",
			"誕生日は{month}{day}日",
			"{pet}を飼っていて名前は{petname}",
			"会議は{timeofday}が好き",
			"{codename}プロジェクトの締め切りは{month}末",
			"機械学習に興味がある",
			"{family}さんとは大学の同級生",
			"連絡はメールよりチャットの方がいい",
		},
		slots: map[string][]string{
			"family":    {"佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "山本", "中村", "小林", "加藤"},
			"given":     {"花子", "太郎", "美咲", "翔太", "結衣", "大輔", "さくら", "健一", "陽菜", "拓海"},
			"citynom":   {"東京", "大阪", "京都", "札幌", "福岡", "名古屋", "横浜", "仙台"},
			"orgname":   {"株式会社さくらテック", "山田商事", "東和システム", "みらい銀行", "北斗製作所"},
			"role":      {"エンジニア", "デザイナー", "営業部長", "研究者", "看護師", "教師"},
			"drink":     {"コーヒー", "緑茶", "抹茶ラテ", "紅茶", "ほうじ茶"},
			"skill":     {"英語", "ロシア語", "Go言語", "ピアノ", "書道", "統計学"},
			"hobby":     {"登山", "将棋", "写真", "料理", "茶道", "ジョギング", "読書"},
			"month":     {"1月", "2月", "3月", "4月", "5月", "6月", "7月", "8月", "9月", "10月", "11月", "12月"},
			"pet":       {"犬", "猫", "インコ", "うさぎ"},
			"petname":   {"モカ", "ハナ", "ソラ", "コタロウ", "ミルク"},
			"timeofday": {"午前中", "午後", "夕方"},
			"codename":  {"フェニックス", "オーロラ", "さくら", "富士", "大和"},
		},
	},
	russian: {
		templates: []string{
			"Живёт в {cityloc}",
			"Работает в компании «{orgname}» {role}",
			"По утрам пьёт {drink}",
			"Изучает {skill} с {year} года",
			"Увлекается {hobby}",
			"Планирует поездку в {cityacc} в {monthloc}",
			"День рождения {day} {monthgen}",
			"Интересуется машинным обучением",
			"Предпочитает встречи {timeofday}",
			"Отвечает за проект {codename} до конца {monthgen}",
			"Держит {pet} по кличке {petname}",
			"Познакомились с {fullname} на конференции",
			"Просит присылать новости по почте, а не звонить",
		},
		slots: map[string][]string{
			"fullname":  {"Иван Петров", "Анна Смирнова", "Дмитрий Кузнецов", "Мария Попова", "Сергей Соколов", "Ольга Лебедева", "Алексей Козлов", "Елена Новикова", "Николай Морозов", "Татьяна Волкова"},
			"citynom":   {"Москва", "Санкт-Петербург", "Казань", "Новосибирск", "Екатеринбург", "Владивосток"},
			"cityloc":   {"Москве", "Санкт-Петербурге", "Казани", "Новосибирске", "Екатеринбурге", "Токио", "Берлине"},
			"cityacc":   {"Москву", "Санкт-Петербург", "Казань", "Новосибирск", "Токио", "Берлин", "Лиссабон"},
			"orgname":   {"Ромашка", "ТехноСфера", "Северный ветер", "Байкал-Софт", "Восток-Логистик"},
			"role":      {"инженером", "дизайнером", "аналитиком", "менеджером проекта", "врачом", "учителем"},
			"drink":     {"кофе", "зелёный чай", "чёрный чай", "какао", "иван-чай"},
			"skill":     {"английский язык", "японский язык", "Go", "Python", "игру на гитаре", "статистику"},
			"hobby":     {"шахматами", "рыбалкой", "фотографией", "бегом", "туризмом", "гончарным делом"},
			"monthloc":  {"январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе", "сентябре", "октябре", "ноябре", "декабре"},
			"monthgen":  {"января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"},
			"timeofday": {"утром", "днём", "вечером"},
			"codename":  {"Полярис", "Байкал", "Восток", "Сапсан", "Алмаз"},
			"pet":       {"собаку", "кошку", "попугая", "кролика"},
			"petname":   {"Барсик", "Жучка", "Кеша", "Мурка", "Пушок"},
		},
	},
}
