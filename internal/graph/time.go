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

// RFC3339 returns the time as String does, or "" when it is unknown: what
// a JSON member that is left out when unknown holds.
func (t Time) RFC3339() string {
	if t == 0 {
		return ""
	}
	return t.String()
}

// SetNow sets the time the following writes record: a new entity's or
// relation's creation, an observation's, an entity's last change. The
// stores call it with the present time at the start of each write
// (Graph.Write), and set it back to zero after; zero records unknown,
// which is what a graph nobody told the time records.
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

// LastLearned returns when the entity last learned something, as far as
// known: the latest of its creation and its observations' times, or zero.
// (A change that removed something is no fact learned.)
func (e *Entity) LastLearned() Time {
	t := e.Created
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

// Window is a span of time, both ends included; a zero end is open. What
// was learned in it: a known time between its ends. An unknown time is in
// no window.
type Window struct{ Since, Until Time }

// IsZero reports whether the window is unbounded: it keeps everything,
// unknown times included, and the read tools do not filter.
func (w Window) IsZero() bool { return w.Since == 0 && w.Until == 0 }

// Contains reports whether t is known and within the window.
func (w Window) Contains(t Time) bool {
	return t != 0 && (w.Since == 0 || t >= w.Since) && (w.Until == 0 || t <= w.Until)
}

// Keeps reports whether the entity was learned in the window: its creation
// or one of its observations.
func (w Window) Keeps(e *Entity) bool {
	if w.Contains(e.Created) {
		return true
	}
	for _, t := range e.ObservedAt {
		if w.Contains(t) {
			return true
		}
	}
	return false
}

// Learned returns what of e was learned in the window, or nil when Keeps is
// false: e itself when every observation was, else a copy with only those
// observations, in order, with their times. kept maps the copy's
// observations to e's indexes (nil when e itself is returned). The copy
// shares the strings with e and must not be modified.
func (w Window) Learned(e *Entity) (learned *Entity, kept []int) {
	if !w.Keeps(e) {
		return nil, nil
	}
	for i := range e.Observations {
		if !w.Contains(e.ObservationTime(i)) {
			kept = make([]int, 0, len(e.Observations))
			break
		}
	}
	if kept == nil {
		return e, nil
	}
	c := &Entity{Name: e.Name, EntityType: e.EntityType, Extra: e.Extra, Created: e.Created, Updated: e.Updated,
		Observations: []string{}, seq: e.seq}
	for i, o := range e.Observations {
		if t := e.ObservationTime(i); w.Contains(t) {
			kept = append(kept, i)
			c.Observations = append(c.Observations, o)
			c.ObservedAt = append(c.ObservedAt, t)
		}
	}
	return c, kept
}
