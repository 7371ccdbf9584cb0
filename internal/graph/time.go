package graph

import "time"

// Time is when something was written to the graph: whole seconds since the
// Unix epoch, UTC. Zero means unknown: what a memory file line without times
// holds, and what a write records when its caller gave no time (SetNow).
// The graph never reads a clock; callers pass the time of a write in.
type Time int64

// TimeOf returns t as a Time, truncated to the second; the zero time.Time
// is the zero Time.
func TimeOf(t time.Time) Time {
	if t.IsZero() {
		return 0
	}
	return Time(t.Unix())
}

// Known reports whether the time is known.
func (t Time) Known() bool { return t != 0 }

// UTC returns the time as a time.Time in UTC.
func (t Time) UTC() time.Time { return time.Unix(int64(t), 0).UTC() }

// String returns the time in RFC 3339 to the second ("2026-11-30T09:15:00Z"),
// or "unknown".
func (t Time) String() string {
	if t == 0 {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}

// SetNow sets the time the following writes record: a new entity's or
// relation's creation, an observation's, an entity's last change. The
// tools, commands and page call it with the present time at the start of
// each write, and set it back to zero after; zero records unknown, which is
// what a graph nobody told the time records.
func (g *Graph) SetNow(t Time) { g.now = t }

// Now returns the time set by SetNow.
func (g *Graph) Now() Time { return g.now }

// ObservationTime returns when the entity's i-th observation was written,
// or zero when that is unknown.
func (e *Entity) ObservationTime(i int) Time {
	if i < len(e.ObservedAt) {
		return e.ObservedAt[i]
	}
	return 0
}

// HasObservationTimes reports whether the time of any observation is known.
func (e *Entity) HasObservationTimes() bool {
	for _, t := range e.ObservedAt {
		if t != 0 {
			return true
		}
	}
	return false
}

// Latest returns the latest known time among the entity's creation, last
// change and observations, or zero.
func (e *Entity) Latest() Time {
	t := max(e.Created, e.Updated)
	for _, o := range e.ObservedAt {
		t = max(t, o)
	}
	return t
}

// SameTimes reports whether two lists of observation times say the same:
// nil and a list of zeros both say nothing is known.
func SameTimes(a, b []Time) bool {
	n := max(len(a), len(b))
	for i := range n {
		var x, y Time
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return false
		}
	}
	return true
}

// Timed wraps a write so that it records the time now returns when it runs
// (under the store's lock, so a write that waited records when it
// happened), in UTC to the second: the one way the tools, the commands and
// the page pass the time of a write in.
//
//	store.Update(ctx, graph.Timed(time.Now, fn))
func Timed(now func() time.Time, fn func(*Graph) error) func(*Graph) error {
	return func(g *Graph) error {
		g.SetNow(TimeOf(now()))
		defer g.SetNow(0)
		return fn(g)
	}
}
