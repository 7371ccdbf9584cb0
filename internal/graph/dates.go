package graph

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Questions about when something happened ("When did Nadia hurt her
// ankle?", "How long ago…", "What year…") are answered by an entity that
// holds a date: a message with the day it was sent, a fact with the day it
// happened. Among the entities sharing words with such a question, those
// holding a date score dateBoost times more. Nothing is computed from the
// dates: the answer shows them as they are stored, and "yesterday" in a
// message stays "yesterday" beside the message's own date.

// dateBoost multiplies the score of an entity holding a date, for a
// question about when.
const dateBoost = 1.2

// temporalOpenings are folded phrases that make a question one about when.
var temporalOpenings = []string{
	"when ", "what date", "what year", "which year", "what day", "which day", "what month", "which month",
	"how long ago", "how long since", "since when", "what time", "как давно", "в каком году", "какого числа",
}

// temporalWords are folded words that do so anywhere in a question.
var temporalWords = map[string]bool{"when": true, "когда": true}

// isTemporal reports whether query asks when something happened.
func isTemporal(query string) bool {
	f := Fold(query)
	if strings.Contains(f, "いつ") || strings.Contains(f, "何年") || strings.Contains(f, "何月") || strings.Contains(f, "何日") {
		return true
	}
	for _, p := range temporalOpenings {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	found := false
	forEachToken(f, func(tok string, word bool) {
		if word && temporalWords[tok] {
			found = true
		}
	})
	return found
}

// months are the folded names (and the stems of the Russian ones' cases)
// of months, as a date is written in words.
var months = []string{
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
	"январ", "феврал", "март", "апрел", "мая", "май", "июн", "июл", "август", "сентябр", "октябр", "ноябр", "декабр",
}

// hasDate reports whether folded text holds a date: a year from 1900 to
// 2099 standing alone, a day or year beside a month's name, a date in
// digits (2026-03-14, 14.03.2026, 14/03), or a Japanese or Chinese date
// (3月, 2026年).
func hasDate(f string) bool {
	tokens := dateTokens(f)
	for i := range tokens {
		if dateAt(tokens, i) {
			return true
		}
	}
	return false
}

// dateAt reports whether tokens[i] is a date, or one with the token
// before or after it (a day or year beside a month's name).
func dateAt(tokens []string, i int) bool {
	t := tokens[i]
	if isDigits(t) {
		return len(t) == 4 && (strings.HasPrefix(t, "19") || strings.HasPrefix(t, "20"))
	}
	if strings.ContainsAny(t, "-./") && numericDate(t) || cjkDate(t) {
		return true
	}
	return isMonth(t) && (i > 0 && isDigits(tokens[i-1]) && len(tokens[i-1]) <= 2 || i+1 < len(tokens) && isDigits(tokens[i+1]))
}

// cjkDate reports whether t is a Japanese or Chinese date: digits and 月
// or 年 (3月, 2026年).
func cjkDate(t string) bool {
	if !strings.Contains(t, "月") && !strings.Contains(t, "年") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(t)
	return unicode.IsDigit(r)
}

// dateTokens cuts folded text at spaces and at punctuation other than the
// separators of a date in digits.
func dateTokens(f string) []string {
	return strings.FieldsFunc(f, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '.' && r != '/'
	})
}

func isMonth(t string) bool {
	t = strings.Trim(t, "-./")
	for _, m := range months {
		if t == m || len(m) >= 4 && strings.HasPrefix(t, m) && !isASCIILetters(m) {
			return true
		}
	}
	return false
}

// numericDate reports whether t is two or three runs of digits joined by
// one kind of separator, one of them a plausible day or month.
func numericDate(t string) bool {
	t = strings.Trim(t, "-./")
	for _, sep := range []string{"-", ".", "/"} {
		parts := strings.Split(t, sep)
		if len(parts) < 2 || len(parts) > 3 {
			continue
		}
		ok := true
		for _, p := range parts {
			if !isDigits(p) || len(p) > 4 {
				ok = false
			}
		}
		if ok && len(parts[0])+len(parts[1]) >= 3 {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// dated reports whether an observation of e holds a date; the answer is
// kept with the entity's derived state until it changes.
func (e *Entity) dated() bool {
	d := e.derived()
	if d.dated == 0 {
		d.dated = 1
		for _, o := range e.searchText().observations {
			if hasDate(o.nfkc) {
				d.dated = 2
				break
			}
		}
	}
	return d.dated == 2
}
