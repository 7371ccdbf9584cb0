package jsonl

import (
	"bytes"
	"strconv"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// appendEntityTimes appends the time members of e's line (see the package
// doc): nothing when no time is known.
func appendEntityTimes(buf []byte, e *graph.Entity) []byte {
	if e.Created != 0 && !hasExtraKey(e.Extra, createdAt) {
		buf = append(buf, createdAt...)
		buf = appendTime(buf, e.Created)
	}
	if e.Updated != e.Created && !hasExtraKey(e.Extra, updatedAt) {
		buf = append(buf, updatedAt...)
		buf = appendTime(buf, e.Updated)
	}
	if e.HasObservationTimes() && len(e.ObservedAt) == len(e.Observations) &&
		!hasExtraKey(e.Extra, observationTimes[:len(observationTimes)-1]) && !hasExtraKey(e.Extra, observationsHash[:len(observationsHash)-1]) {
		if !allAt(e.ObservedAt, e.Created) {
			// Runs: a time (or null) and how many observations in a row
			// were written then.
			buf = append(buf, observationTimes...)
			for i := 0; i < len(e.ObservedAt); {
				j := i + 1
				for j < len(e.ObservedAt) && e.ObservedAt[j] == e.ObservedAt[i] {
					j++
				}
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendTime(buf, e.ObservedAt[i])
				buf = append(buf, ',')
				buf = strconv.AppendInt(buf, int64(j-i), 10)
				i = j
			}
			buf = append(buf, ']')
		}
		buf = append(buf, observationsHash...)
		buf = appendHash(buf, ObservationsHash(e.Observations))
		buf = append(buf, '"')
	}
	return buf
}

// allAt reports whether every time in ts is t.
func allAt(ts []graph.Time, t graph.Time) bool {
	for _, x := range ts {
		if x != t {
			return false
		}
	}
	return true
}

// appendTime appends t as a JSON string, or null when unknown.
func appendTime(buf []byte, t graph.Time) []byte {
	if t == 0 {
		return append(buf, "null"...)
	}
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339)
	return append(buf, '"')
}

// ObservationsHash is the hash "observationsHash" holds for an observations
// list: FNV-1a, 32 bits, over each observation followed by the byte 0xFF
// (which UTF-8 never holds).
func ObservationsHash(obs []string) uint32 {
	const prime = 16777619
	h := uint32(2166136261)
	for _, o := range obs {
		for i := 0; i < len(o); i++ {
			h ^= uint32(o[i])
			h *= prime
		}
		h ^= 0xFF
		h *= prime
	}
	return h
}

func appendHash(buf []byte, h uint32) []byte {
	for shift := 28; shift >= 0; shift -= 4 {
		buf = append(buf, hexDigits[(h>>shift)&0xF])
	}
	return buf
}

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

// hasExtraKey reports whether extra (members as Entity.Extra holds them)
// may hold a member named key: a time member this server did not write,
// kept as it is. The writer then leaves that time out rather than write
// the key twice. (A nested member of that name counts too: the time is
// then unknown, never wrong.)
func hasExtraKey(extra []byte, key string) bool {
	return len(extra) > 0 && bytes.Contains(extra, []byte(key))
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
