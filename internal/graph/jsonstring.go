package graph

import "unicode/utf8"

// escapes tells, for each byte, how AppendString writes it: 0 copies it,
// 'u' writes \u00xx, any other value v writes a backslash and v.
//
// This is JSON.stringify's escaping, not encoding/json's: '<', '>', '&',
// DEL, U+2028 and U+2029 are written as they are, and the control
// characters without a short form get lowercase hex.
var escapes = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = 'b', 'f', 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string escaped exactly as JavaScript's
// JSON.stringify does. Bytes of s that are not valid UTF-8 are written as
// U+FFFD, one for each byte, as encoding/json does: a JavaScript string
// cannot hold them.
func AppendString(buf []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return appendInvalidString(buf, s)
	}
	buf = append(buf, '"')
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs escaping.
		if i+8 <= len(s) {
			w := load64(s, i)
			if hasLess(w, 0x20)|hasByte(w, '"')|hasByte(w, '\\') == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		esc := escapes[c]
		if esc == 0 {
			i++
			continue
		}
		buf = appendEscape(append(buf, s[start:i]...), c, esc)
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendEscape appends byte c escaped as its escapes entry esc says: a
// \u00XX escape for 'u', else a backslash and esc.
func appendEscape(buf []byte, c, esc byte) []byte {
	if esc == 'u' {
		return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(buf, '\\', esc)
}

// load64 returns s[i:i+8] as a little-endian word; the compiler makes it
// one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendInvalidString is AppendString for s that is not valid UTF-8: the
// slow path, rune by rune.
func appendInvalidString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if esc := escapes[c]; esc == 0 {
				buf = append(buf, c)
			} else {
				buf = appendEscape(buf, c, esc)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, "\uFFFD"...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// goEscapes is escapes as encoding/json escapes with HTML escaping on (as
// json.Marshal does): '<', '>' and '&' too.
var goEscapes = func() (t [256]byte) {
	t = escapes
	t['<'], t['>'], t['&'] = 'u', 'u', 'u'
	return t
}()

// AppendGoString appends s as a JSON string escaped exactly as json.Marshal
// escapes a string: '<', '>', '&', U+2028 and U+2029 as \u escapes, and
// each byte that is not valid UTF-8 as \ufffd. It is for text the go-sdk
// would otherwise encode with json.Marshal, written byte for byte as it
// would, in one pass.
func AppendGoString(buf []byte, s string) []byte {
	return append(AppendGoStringBody(append(buf, '"'), s), '"')
}

// AppendGoStringBody is AppendGoString without the quotes around: the
// escaped bytes of s, for a string written a piece at a time. Pieces must
// not split a rune.
func AppendGoStringBody(buf []byte, s string) []byte {
	valid := utf8.ValidString(s)
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look: U+2028 and
		// U+2029 start with 0xE2, and a string that is not UTF-8 is
		// looked at rune by rune. Eight bytes that do need one are looked
		// at byte by byte (in indented JSON, most do).
		if valid && i+8 <= len(s) {
			w := load64(s, i)
			if hasLess(w, 0x20)|hasByte(w, '"')|hasByte(w, '\\')|hasByte(w, '<')|hasByte(w, '>')|hasByte(w, '&')|hasByte(w, 0xE2) == 0 {
				i += 8
				continue
			}
		}
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				esc := goEscapes[c]
				if esc == 0 {
					i++
					continue
				}
				buf = appendEscape(append(buf, s[start:i]...), c, esc)
				i++
				start = i
				continue
			}
			if valid && c != 0xE2 {
				// i may be inside a rune; in valid UTF-8 only U+2028 and
				// U+2029 need a look.
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				buf = append(buf, s[start:i]...)
				buf = append(buf, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				buf = append(buf, s[start:i]...)
				buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			start = i
		}
	}
	return append(buf, s[start:]...)
}

// The word tricks AppendString and AppendGoStringBody use to look at eight
// bytes at once (lsb and msb: the lowest and highest bit of each byte).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasLess reports, as the high bit of each byte, which bytes of w are
// below n (n at most 128).
func hasLess(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w & msb }

// hasByte reports, as the high bit of each byte, which bytes of w are c.
func hasByte(w uint64, c byte) uint64 { return hasLess(w^(lsb*uint64(c)), 1) }
