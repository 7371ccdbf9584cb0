package jsonl

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// benchWords mix the scripts a memory file holds in practice.
var benchWords = [...][]string{
	strings.Fields("the user prefers short answers works at acme corp lives in berlin likes tea and hiking project deadline is friday uses go and typescript"),
	strings.Fields("ユーザーは 東京 に 住んでいる 寿司 が 好き 会社 で エンジニア として 働いている 週末 は 山登り を する 締め切り は 金曜日"),
	strings.Fields("пользователь живёт в москве работает программистом любит чай и длинные прогулки дедлайн в пятницу пишет на go"),
}

// benchFile builds a memory file of n entities with three to eight
// observations each in mixed English, Japanese and Russian, and about two
// relations per entity, through Encode so it is canonical.
func benchFile(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	sentence := func() string {
		words := benchWords[rng.IntN(len(benchWords))]
		var b strings.Builder
		for i := range 4 + rng.IntN(12) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	g := graph.New()
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s %d", benchWords[i%3][i%7], i)
		obs := make([]string, 3+rng.IntN(6))
		for j := range obs {
			obs[j] = fmt.Sprintf("%s (%d)", sentence(), j)
		}
		g.LoadEntity(graph.Entity{Name: names[i], EntityType: benchWords[rng.IntN(3)][rng.IntN(5)], Observations: obs})
	}
	for i := range 2 * n {
		g.LoadRelation(graph.Relation{From: names[rng.IntN(n)], To: names[rng.IntN(n)], RelationType: fmt.Sprintf("rel_%d", i%13)})
	}
	return Encode(nil, g, nil)
}

func BenchmarkDecode(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if f := Decode(data); len(f.Problems) != 0 {
			b.Fatal(f.Problems[0])
		}
	}
}

// BenchmarkDecodeSequential measures Decode without its pipeline, as it
// reads files under a megabyte.
func BenchmarkDecodeSequential(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		decode(data, false)
	}
}

// BenchmarkEncode measures a save with nothing cached: every line encoded.
func BenchmarkEncode(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(data))
	for b.Loop() {
		b.StopTimer()
		g := Decode(data).Graph
		for _, e := range g.Entities() {
			e.SetEncodedLine(nil)
		}
		for _, r := range g.Relations() {
			r.SetEncodedLine(nil)
		}
		b.StartTimer()
		buf = Encode(buf[:0], g, nil)
	}
}

// BenchmarkEncodeAfterDecode measures the first save after loading a file
// the writer wrote.
func BenchmarkEncodeAfterDecode(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(data))
	for b.Loop() {
		b.StopTimer()
		g := Decode(data).Graph
		b.StartTimer()
		buf = Encode(buf[:0], g, nil)
	}
}

// BenchmarkEncodeCached measures a save where no line changed.
func BenchmarkEncodeCached(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	g := Decode(data).Graph
	buf := Encode(nil, g, nil)
	for b.Loop() {
		buf = Encode(buf[:0], g, nil)
	}
}

// BenchmarkAppendString measures the escaper alone, on the same text.
func BenchmarkAppendString(b *testing.B) {
	data := benchFile(10_000, 1)
	f := Decode(data)
	var strs []string
	n := 0
	for _, e := range f.Graph.Entities() {
		strs = append(strs, e.Observations...)
	}
	for _, s := range strs {
		n += len(s)
	}
	b.SetBytes(int64(n))
	buf := make([]byte, 0, 2*n)
	for b.Loop() {
		buf = buf[:0]
		for _, s := range strs {
			buf = AppendString(buf, s)
		}
	}
}
