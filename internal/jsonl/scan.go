package jsonl

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// The scanner works on one line at a time. Its functions take the line and
// an index and return the index after what they consumed, or -1 when the
// line is not valid JSON there; the caller then asks encoding/json for a
// message, which is off the fast path.

// maxDepth is encoding/json's nesting limit, so that the scanner and
// json.Valid agree on what is JSON.
const maxDepth = 10000

// Flags a string scan reports about the string's content.
const (
	strEscaped  = 1 << iota // has a backslash escape
	strNonASCII             // has a byte from 0x80 up
)

// stringStop marks the bytes that end a run of plain string content.
var stringStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the string whose opening quote is b[i]. It returns the
// index after the closing quote and the str* flags of its content.
func scanString(b []byte, i int) (end int, flags uint8) {
	i++
	var high uint64 // every content byte ORed together
	for {
		// Eight bytes at a time while none of them is a quote, a
		// backslash or a control character.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if hasLess(w, 0x20)|hasByte(w, '"')|hasByte(w, '\\') != 0 {
				break
			}
			high |= w
			i += 8
		}
		for i < len(b) && !stringStop[b[i]] {
			high |= uint64(b[i])
			i++
		}
		if i >= len(b) {
			return -1, 0
		}
		switch b[i] {
		case '"':
			if high&msb != 0 {
				flags |= strNonASCII
			}
			return i + 1, flags
		case '\\':
			flags |= strEscaped
			if i+1 >= len(b) {
				return -1, 0
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(b, i+2) < 0 {
					return -1, 0
				}
				i += 6
			default:
				return -1, 0
			}
		default: // a control character
			return -1, 0
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasLess is non-zero when some byte of w is less than n (n <= 0x80).
func hasLess(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w & msb }

// hasByte is non-zero when some byte of w equals c.
func hasByte(w uint64, c byte) uint64 { return hasLess(w^(lsb*uint64(c)), 1) }

// hex4 returns the value of the four hex digits at b[i:], or -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// appendUnquoted appends the text of the scanned string content s (between
// the quotes) to dst, as encoding/json decodes it: escapes resolved, a
// surrogate escape that is not half of a pair and every byte that is not
// valid UTF-8 become U+FFFD.
func appendUnquoted(dst, s []byte, flags uint8) []byte {
	if flags&strEscaped == 0 && (flags&strNonASCII == 0 || utf8.Valid(s)) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch c = s[i+1]; c {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s, i+2)
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s, i+2)
					}
					if r = utf16.DecodeRune(r, r2); r != utf8.RuneError {
						i += 6
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, c)
			}
			i += 2
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// skipValue scans the value that starts at b[i] (no space before it) inside
// containers depth deep, checking it is valid JSON, and returns the index
// after it. It keeps its own stack of open containers (a byte each, '{' or
// '['), so deep nesting costs no goroutine stack.
func skipValue(b []byte, i int, depth int, stack []byte) (int, []byte) {
	stack = stack[:0]
value:
	if i >= len(b) {
		return -1, stack
	}
	switch c := b[i]; c {
	case '{', '[':
		if depth+len(stack) >= maxDepth {
			return -1, stack
		}
		stack = append(stack, c)
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			stack = stack[:len(stack)-1]
			i++
			break
		}
		if c == '{' {
			if i = skipKey(b, i); i < 0 {
				return -1, stack
			}
		}
		goto value
	case '"':
		if i, _ = scanString(b, i); i < 0 {
			return -1, stack
		}
	case 't':
		i = skipLiteral(b, i, "true")
	case 'f':
		i = skipLiteral(b, i, "false")
	case 'n':
		i = skipLiteral(b, i, "null")
	default:
		i = skipNumber(b, i)
	}
	// After a value: close containers or go on to the next member.
	for i >= 0 && len(stack) > 0 {
		i = skipSpace(b, i)
		if i >= len(b) {
			return -1, stack
		}
		top := stack[len(stack)-1]
		switch b[i] {
		case top + 2:
			stack = stack[:len(stack)-1]
			i++
		case ',':
			i = skipSpace(b, i+1)
			if top == '{' {
				if i = skipKey(b, i); i < 0 {
					return -1, stack
				}
			}
			goto value
		default:
			return -1, stack
		}
	}
	return i, stack
}

// skipKey scans an object key, the colon and the space after it.
func skipKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i, _ = scanString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// skipNumber scans a number as JSON's grammar has it:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
