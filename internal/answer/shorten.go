package answer

import "sort"

// Shorten fits an answer that lists total items (the entities a call
// created, the names it did not find) into limit bytes of text (0: no
// limit). render(n) gives the answer's text items listing only the first n
// items, saying how many it leaves out; Shorten returns the largest n whose
// text fits (0 when none does, which lists nothing and says so).
func Shorten(limit, total int, render func(n int) []string) (n int) {
	if limit <= 0 || textSize(render(total)) <= limit {
		return total
	}
	// The size grows with n; find the last n that fits.
	return sort.Search(total, func(n int) bool { return textSize(render(n+1)) > limit })
}
