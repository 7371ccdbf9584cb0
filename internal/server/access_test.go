package server

import (
	"strings"
	"testing"
)

// A client's name is recorded with every write of its session: control
// characters go, and it is cut to a bound at a character boundary.
func TestBoundedClientName(t *testing.T) {
	for in, want := range map[string]string{
		"Claude Desktop":                     "Claude Desktop",
		"a\x00b\nc\x1b[31m":                  "abc[31m",
		strings.Repeat("é", 100):             strings.Repeat("é", 64),
		strings.Repeat("x", 127) + "日本":      strings.Repeat("x", 127),
		strings.Repeat("y", maxClientName+1): strings.Repeat("y", maxClientName),
	} {
		if got := boundedName(in); got != want {
			t.Errorf("boundedName(%.20q…) = %.20q… (%d bytes), want %d bytes", in, got, len(got), len(want))
		}
	}
}
