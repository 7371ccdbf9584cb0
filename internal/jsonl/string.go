package jsonl

import "unicode/utf8"

// escapes tells, for each byte, how AppendString writes it: 0 copies it,
// 'u' writes \u00xx, any other value v writes a backslash and v. Bytes from
// 0x80 up are marked 0x80: they are copied once the rest of the string is
// known to be valid UTF-8.
//
// This is JSON.stringify's escaping, not encoding/json's: '<', '>', '&',
// U+2028 and U+2029 are written as they are, and the control characters
// without a short form get lowercase hex.
var escapes = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = 'b', 'f', 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	for c := 0x80; c < 0x100; c++ {
		t[c] = 0x80
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string escaped exactly as JavaScript's
// JSON.stringify does. Bytes of s that are not valid UTF-8 are written as
// U+FFFD, one for each byte, as encoding/json does: a JavaScript string
// cannot hold them.
func AppendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0 // s[start:i] is still to be copied
	// utf8State is what is known about s[i:] once a byte from 0x80 up is
	// met: unchecked, valid (copy such bytes), or invalid somewhere
	// (decode rune by rune).
	const unchecked, valid, invalid = 0, 1, 2
	utf8State := unchecked
	for i := 0; i < len(s); {
		c := s[i]
		esc := escapes[c]
		if esc == 0 {
			i++
			continue
		}
		if esc == 0x80 {
			if utf8State == unchecked {
				utf8State = invalid
				if utf8.ValidString(s[i:]) {
					utf8State = valid
				}
			}
			if utf8State == valid {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, s[start:i]...)
				buf = append(buf, "\uFFFD"...)
				start = i + 1
			}
			i += size
			continue
		}
		buf = append(buf, s[start:i]...)
		if esc == 'u' {
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		} else {
			buf = append(buf, '\\', esc)
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
