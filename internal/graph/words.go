package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/russian"
)

// The ranked search compares words, not substrings. A text is cut into
// terms, each the unit BM25 counts:
//
//   - Runs of letters, digits and combining marks are words, compared after
//     Fold. English words (ASCII letters) are reduced to their Snowball stem
//     ("groups", "grouped" -> "group"), Russian words (Cyrillic) to theirs
//     ("группы", "группа" -> "групп"), other words are kept as they are.
//   - Stop words of English and Russian ("when", "did", "the", "когда") are
//     dropped: they occur everywhere and say nothing about which entity a
//     question is about.
//   - Japanese and Chinese text has no spaces between words, so a run of
//     Han, hiragana and katakana characters yields its character bigrams
//     ("東京都" -> "東京", "京都"); a run of one character yields itself.
//
// Everything else (spaces, punctuation, symbols, "_" and "-") separates.

// forEachToken calls emit with every token of s, which must be folded
// (Fold): each word (word true; wordTerm turns it into a term) and each
// Japanese or Chinese bigram (word false; a term as it is). A token may be a
// substring of s; emit must copy it to keep it.
func forEachToken(s string, emit func(token string, word bool)) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isCJK(r):
			j := i + n
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isCJK(r2) {
					break
				}
				j += n2
			}
			cjkBigrams(s[i:j], func(t string) { emit(t, false) })
			i = j
		case isWordRune(r):
			j := i + n
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(r2) || isCJK(r2) {
					break
				}
				j += n2
			}
			if negation(s, i, j) && irregularForms[s[i:j]] != "" {
				emit(s[i:j]+"t", true)
			} else {
				emit(s[i:j], true)
			}
			i = j
		default:
			i += n
		}
	}
}

// negation reports whether the word s[i:j] is the verb of an English
// negation, "couldn" of "couldn't", "won" of "won't". One that is also an
// irregular past ("won") is read with its "t" ("wont"), so "won't" is not
// "win"; the others stay as they were (most are stop words).
func negation(s string, i, j int) bool {
	if !strings.HasSuffix(s[i:j], "n") {
		return false
	}
	rest, ok := strings.CutPrefix(s[j:], "'")
	if !ok {
		rest, ok = strings.CutPrefix(s[j:], "’")
	}
	if !ok || !strings.HasPrefix(rest, "t") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest[1:])
	return len(rest) == 1 || !isWordRune(r)
}

// forEachTerm calls emit with every term of s, which must be folded.
func forEachTerm(s string, emit func(term string)) {
	forEachToken(s, func(tok string, word bool) {
		if word {
			tok = wordTerm(tok)
		}
		if tok != "" {
			emit(tok)
		}
	})
}

// cjkBigrams emits the character bigrams of run, or run itself when it is
// one character.
func cjkBigrams(run string, emit func(string)) {
	_, first := utf8.DecodeRuneInString(run)
	if first == len(run) {
		emit(run)
		return
	}
	for i := 0; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		if i+n >= len(run) {
			break
		}
		_, n2 := utf8.DecodeRuneInString(run[i+n:])
		emit(run[i : i+n+n2])
		i += n
	}
}

func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || r == 'ー' // the prolonged sound mark is "Common"
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// stemmed reports whether wordTerm may change w: whether it is English or
// Russian, whose words are stemmed and may be stop words.
func stemmed(w string) bool { return isASCIILetters(w) || hasCyrillic(w) }

// wordTerm returns the term a folded word stands for, or "" for a stop word.
func wordTerm(w string) string {
	if hasCyrillic(w) {
		w = strings.ReplaceAll(w, "ё", "е") // Snowball's Russian treats them as one letter
		if russian.IsStopWord(w) {
			return ""
		}
		return russian.Stem(w, true)
	}
	if isASCIILetters(w) {
		if english.IsStopWord(w) {
			return ""
		}
		if base, ok := irregularForms[w]; ok {
			w = base
		}
		return english.Stem(w, true)
	}
	return w
}

func hasCyrillic(w string) bool {
	for _, r := range w {
		if 0x400 <= r && r <= 0x4FF {
			return true
		}
	}
	return false
}

// isASCIILetters reports whether w is an English word: ASCII letters only
// (numbers are kept as they are written).
func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
