package jsonl

import (
	"bytes"
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
		buf = append(buf, observationTimes...)
		for i, t := range e.ObservedAt {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendTime(buf, t)
		}
		buf = append(buf, ']')
		buf = append(buf, observationsHash...)
		buf = appendHash(buf, ObservationsHash(e.Observations))
		buf = append(buf, '"')
	}
	return buf
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

// parseTimes reads the value of "observationTimes": an array of times and
// nulls. It reports false when the value is anything else.
func parseTimes(b []byte) ([]graph.Time, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var out []graph.Time
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) {
			return nil, false
		}
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
			out = append(out, t)
			i = end
		case len(b)-i >= 4 && string(b[i:i+4]) == "null":
			out = append(out, 0)
			i += 4
		default:
			return nil, false
		}
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
