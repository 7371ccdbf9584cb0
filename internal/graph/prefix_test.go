package graph

import (
	"reflect"
	"testing"
)

// A word ending in * matches the words that begin with it, in the exact
// rule and in the ranking; without a star the query is an ordinary one.
func TestSearchPrefix(t *testing.T) {
	g := newGraph(t, []Entity{
		ent("Login service", "service", "Handles authentication with OAuth tokens"),
		ent("Mary Shelley", "person", "Author of Frankenstein"),
		ent("Sign-in page", "page", "Shows the auth form"),
		ent("Gateway", "service", "Forwards requests; no authority over tokens"),
		ent("Tea", "drink", "Hot water and leaves"),
		ent("Notes", "note", "Uses the word oauth only in passing"),
	}, nil)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Words beginning with "auth": authentication, Author, auth,
		// authority; not OAuth, where auth is inside a word.
		{"auth*", []string{"Login service", "Mary Shelley", "Sign-in page", "Gateway"}},
		{"AUTH*", []string{"Login service", "Mary Shelley", "Sign-in page", "Gateway"}},
		{"sign*", []string{"Sign-in page"}}, // the name first
		{"auth* tokens", []string{"Login service", "Gateway"}},
		{"frank* shell*", []string{"Mary Shelley"}},
		// Without a star, or with one after a single letter: as before.
		{"auth", []string{"Login service", "Mary Shelley", "Sign-in page", "Gateway", "Notes"}},
		{"a*", nil},
	} {
		if got := exactNames(g.Search(tc.query)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
	// Ranked: a prefix finds the words it begins among the closest too.
	r := g.SearchRanked("who wrote frank*", 0)
	if len(r.Hits) == 0 || r.Hits[0].Entity.Name != "Mary Shelley" {
		t.Errorf("SearchRanked(who wrote frank*) = %q, want Mary Shelley first", hitNames(r))
	}
	if m := r.Hits[0].Matched(); len(m) != 1 {
		t.Errorf("Mary Shelley's matched observations %v, want the one about Frankenstein", m)
	}
}

func exactNames(s Selection) []string {
	var out []string
	for _, e := range s.Entities {
		out = append(out, e.Name)
	}
	return out
}

func TestWordStartsWith(t *testing.T) {
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"oauth and auth", "auth", true},
		{"oauth", "auth", false},
		{"(authority)", "auth", true},
		{"", "auth", false},
		{"привет мир", "ми", true},
	} {
		if got := wordStartsWith(tc.s, tc.p); got != tc.want {
			t.Errorf("wordStartsWith(%q, %q) = %v", tc.s, tc.p, got)
		}
	}
}
