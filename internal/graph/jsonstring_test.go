package graph

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendStringTests are inputs with what JavaScript's JSON.stringify writes
// for them (checked against node).
var appendStringTests = []struct{ in, want string }{
	{"", `""`},
	{"plain ASCII text", `"plain ASCII text"`},
	{`say "hi"`, `"say \"hi\""`},
	{`C:\Users\a`, `"C:\\Users\\a"`},
	{"/ is not escaped", `"/ is not escaped"`},
	{"\b\f\n\r\t", `"\b\f\n\r\t"`},
	{"\x00\x01\x02\x03\x04\x05\x06\x07", `"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007"`},
	{"\x0b\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17", `"\u000b\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017"`},
	{"\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f", `"\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"`},
	{"DEL \x7f stays", "\"DEL \x7f stays\""},
	{"<script>&amp;</script>", `"<script>&amp;</script>"`},
	{"line\u2028para\u2029", "\"line\u2028para\u2029\""},
	{"é e\u0301 \u00a0 \ufeff", "\"é e\u0301 \u00a0 \ufeff\""},
	{"日本語のテキスト", `"日本語のテキスト"`},
	{"Привет, мир", `"Привет, мир"`},
	{"🧠 👨‍👩‍👧‍👦 🇯🇵", `"🧠 👨‍👩‍👧‍👦 🇯🇵"`},
	{"\uFFFD is a character", `"� is a character"`},
	{"mixed \"日本\"\n\tрусский\\🧠\x01", `"mixed \"日本\"\n\tрусский\\🧠\u0001"`},
	// Not valid UTF-8: each bad byte becomes U+FFFD, as in encoding/json.
	{"a\xffb", `"a�b"`},
	{"\xf0\x9f\xa7", `"���"`}, // a cut-off 🧠
	{"\xed\xa0\x80", `"���"`}, // a surrogate encoded as UTF-8
	{"é\xc3\n日", `"é�\n日"`},   // valid runes around the bad byte are kept
	{"\xc0\xaf<", `"��<"`},    // overlong '/'
	{"日本\x80", `"日本�"`},       // the bad byte comes after valid non-ASCII
}

func TestAppendString(t *testing.T) {
	for _, tt := range appendStringTests {
		if got := string(AppendString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// It appends.
	if got := string(AppendString([]byte("x:"), "y")); got != `x:"y"` {
		t.Errorf(`AppendString("x:", "y") = %s, want x:"y"`, got)
	}
}

// FuzzAppendString checks that the output is JSON that encoding/json reads
// back as the input (with U+FFFD for each byte that is not UTF-8), and that
// only what JSON.stringify escapes is escaped.
func FuzzAppendString(f *testing.F) {
	for _, tt := range appendStringTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("AppendString(%q) = %q: not valid JSON in UTF-8", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %q: %v", s, out, err)
		}
		if want := perByteReplacement(s); back != want {
			t.Fatalf("AppendString(%q) = %q reads back as %q, want %q", s, out, back, want)
		}
		for i := 1; i < len(out)-1; i++ {
			if out[i] < 0x20 {
				t.Fatalf("AppendString(%q) = %q: raw control character", s, out)
			}
			if out[i] != '\\' {
				continue
			}
			i++
			switch out[i] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
			case 'u':
				c := out[i+1 : i+5]
				if c[0] != '0' || c[1] != '0' || c[2] > '1' || strings.ContainsAny(string(c), "ABCDEF") {
					t.Fatalf("AppendString(%q) = %q: \\u%s is not how JSON.stringify escapes", s, out, c)
				}
				switch string(c) {
				case "0008", "000c", "000a", "000d", "0009":
					t.Fatalf("AppendString(%q) = %q: \\u%s has a short form", s, out, c)
				}
			default:
				t.Fatalf("AppendString(%q) = %q: unexpected escape \\%c", s, out, out[i])
			}
		}
	})
}

// perByteReplacement is s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as ranging over a string does.
func perByteReplacement(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzAppendGoString checks AppendGoString against json.Marshal, byte for
// byte.
func FuzzAppendGoString(f *testing.F) {
	for _, tt := range appendStringTests {
		f.Add(tt.in)
	}
	f.Add("a<b>c&d e\u2028f\u2029 \x7f \xe2\x80 \xe2\x80\xa8\xff long enough to take the fast path <")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendGoString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendGoString(%q) = %s, want %s (json.Marshal)", s, got, want)
		}
	})
}
