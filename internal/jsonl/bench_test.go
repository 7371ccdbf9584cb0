package jsonl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// benchFile is a memory file of n entities in the reference format, as
// the side-by-side benchmark generates it.
func benchFile(n int, seed uint64) []byte {
	g, _ := testgraph.Generate(n, seed)
	var b bytes.Buffer
	if err := g.WriteJSONL(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
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
		b.StartTimer()
		buf = encode(buf[:0], g, nil)
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
		buf = encode(buf[:0], g, nil)
	}
}

// BenchmarkEncodeCached measures a save where no line changed.
func BenchmarkEncodeCached(b *testing.B) {
	data := benchFile(10_000, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	g := Decode(data).Graph
	buf := encode(nil, g, nil)
	for b.Loop() {
		buf = encode(buf[:0], g, nil)
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
			buf = graph.AppendString(buf, s)
		}
	}
}

// BenchmarkAppendGoString escapes a whole answer's text item: indented
// JSON, with a quote or a new line every few bytes.
func BenchmarkAppendGoString(b *testing.B) {
	item := "    {\n      \"name\": \"Entity 12345\",\n      \"entityType\": \"person\",\n      \"observations\": [\n        \"Works on machine learning at the Tokyo office since 2019\",\n        \"東京で働いている\"\n      ]\n    },\n"
	s := strings.Repeat(item, 20000)
	b.SetBytes(int64(len(s)))
	buf := make([]byte, 0, len(s)*2)
	for b.Loop() {
		buf = graph.AppendGoString(buf[:0], s)
	}
}
