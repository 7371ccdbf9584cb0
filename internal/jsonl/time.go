package jsonl

import (
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// parseTime reads a time member's value: null (unknown) or a JSON string
// holding an RFC 3339 date-time. It reports false for anything else: a
// member this server did not write.
func parseTime(v []byte) (graph.Time, bool) {
	if string(v) == "null" {
		return 0, true
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, string(v[1:len(v)-1]))
	if err != nil || t.Unix() == 0 {
		return 0, false
	}
	return graph.TimeOf(t), true
}

// isHash reports whether v is a JSON string of eight lowercase hex digits.
func isHash(v []byte) bool {
	if len(v) != 10 || v[0] != '"' || v[9] != '"' {
		return false
	}
	for _, c := range v[1:9] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// run is a stretch of observations written at one time.
type run struct {
	at graph.Time
	n  int
}

// parseRuns reads the value of "observationTimes": an array of a time (or
// null) and a count of observations, again and again. It reports false when
// the value is anything else.
func parseRuns(b []byte) ([]run, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var out []run
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) {
			return nil, false
		}
		var r run
		switch {
		case b[i] == '"':
			end, flags := scanString(b, i)
			if end < 0 || flags != 0 {
				return nil, false
			}
			t, ok := parseTime(b[i:end])
			if !ok {
				return nil, false
			}
			r.at, i = t, end
		case len(b)-i >= 4 && string(b[i:i+4]) == "null":
			i += 4
		default:
			return nil, false
		}
		if i = skipSpace(b, i); i >= len(b) || b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' && i-start < 9 {
			r.n = r.n*10 + int(b[i]-'0')
			i++
		}
		if i == start || r.n == 0 || (b[start] == '0') || (i < len(b) && '0' <= b[i] && b[i] <= '9') {
			return nil, false
		}
		out = append(out, r)
		if i = skipSpace(b, i); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ']':
			return out, skipSpace(b, i+1) == len(b)
		case ',':
			i = skipSpace(b, i+1)
		default:
			return nil, false
		}
	}
}

// expandRuns returns the time of each of n observations, or false when the
// runs do not count n.
func expandRuns(runs []run, n int) ([]graph.Time, bool) {
	total := 0
	for _, r := range runs {
		if total += r.n; total > n {
			return nil, false
		}
	}
	if total != n {
		return nil, false
	}
	out := make([]graph.Time, 0, n)
	for _, r := range runs {
		for range r.n {
			out = append(out, r.at)
		}
	}
	return out, true
}
