package graph

import (
	"reflect"
	"testing"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"only punctuation", " -- ?! ", nil},

		// English: Snowball stems, so forms of one word meet.
		{"English plural", "groups", []string{"group"}},
		{"English verb forms", "meeting meets met", []string{"meet", "meet", "meet"}},
		{"English irregular past forms", "went gone go going", []string{"go", "go", "go", "go"}},
		{"English irregular participles", "written wrote writes", []string{"write", "write", "write"}},
		{"English forms that are other words too", "a bit of a rose", []string{"bit", "rose"}},
		{"English won't is not win", "won't won’t won couldn't", []string{"wont", "wont", "win", "couldn"}},
		{"English words beside apostrophes", "'tis d'Artagnan rock'n'roll I'm", []string{"tis", "d", "artagnan", "rock", "n", "roll", "m"}},
		{"English -ing and -ed", "supported supporting support", []string{"support", "support", "support"}},
		{"English -ies", "libraries library", []string{"librari", "librari"}},
		{"English possessive splits off", "Caroline's", []string{"carolin"}},

		// Russian: Snowball stems, ё is е.
		{"Russian case endings", "группа группы группу", []string{"групп", "групп", "групп"}},
		{"Russian verb forms", "работает работала работать", []string{"работа", "работа", "работа"}},
		{"Russian ё and е meet", "ёлка елки", []string{"елк", "елк"}},

		// Stop words of both languages are dropped, in any case.
		{"English stop words", "When did she go to the group?", []string{"go", "group"}},
		{"English stop words in capitals", "WHAT IS THE PLAN", []string{"plan"}},
		{"Russian stop words", "Когда он был в Москве", []string{"москв"}},

		// Japanese and Chinese: character bigrams, a lone character kept.
		{"Japanese bigrams", "東京都", []string{"東京", "京都"}},
		{"kana and kanji in one run", "東京に住む", []string{"東京", "京に", "に住", "住む"}},
		{"one character", "東", []string{"東"}},
		{"runs split by punctuation", "東京、大阪", []string{"東京", "大阪"}},
		{"half-width katakana folds first", "ｶﾀｶﾅ", []string{"カタ", "タカ", "カナ"}},
		{"prolonged sound mark belongs to the run", "コーヒー", []string{"コー", "ーヒ", "ヒー"}},
		{"Chinese", "北京大学", []string{"北京", "京大", "大学"}},
		{"CJK next to Latin", "Tokyo東京", []string{"tokyo", "東京"}},

		// Folding happens before cutting.
		{"full-width Latin", "ＰＹＴＨＯＮ", []string{"python"}},
		{"case", "Python PYTHON", []string{"python", "python"}},

		// Separators and what stays as it is.
		{"underscore and hyphen separate", "works_at tea-house", []string{"work", "tea", "hous"}},
		{"numbers stay", "7 May 2023", []string{"7", "may", "2023"}},
		{"accented Latin is not stemmed", "café naïve", []string{"café", "naïve"}},
		{"Greek is not stemmed", "Κόσμος", []string{"κόσμοσ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := terms(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("terms(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Forms a user would call the same word must give one term.
func TestTermsMeet(t *testing.T) {
	for _, same := range [][]string{
		{"support group", "Support Groups", "SUPPORT GROUP", "supporting grouped"},
		{"поддержка группы", "Поддержки группа", "ПОДДЕРЖКУ ГРУППУ"},
		{"東京", "東京"},
		{"ｐｙｔｈｏｎ", "Python"},
	} {
		want := terms(same[0])
		if len(want) == 0 {
			t.Fatalf("terms(%q) is empty", same[0])
		}
		for _, s := range same[1:] {
			if got := terms(s); !reflect.DeepEqual(got, want) {
				t.Errorf("terms(%q) = %q, but terms(%q) = %q", s, got, same[0], want)
			}
		}
	}
}
