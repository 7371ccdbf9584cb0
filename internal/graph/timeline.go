package graph

import (
	"encoding/json"
	"strconv"
	"time"
)

// Ago says in English how long before now t was, as people say it: "just
// now", "5 minutes ago", "3 hours ago", "yesterday", "12 days ago", "2
// months ago", "3 years ago". A time after now (another machine's clock
// ahead of this one) says so: "3 hours from now"; up to a minute either
// way is "just now". An unknown time is "". The page's script says the
// same (internal/ui/page/app.js, function ago; testdata/ago.json holds
// the cases both are tested on).
func (t Time) Ago(now Time) string {
	if t == 0 {
		return ""
	}
	d := int64(now - t)
	future := d < 0
	if future {
		d = -d
	}
	const minute, hour, day = 60, 60 * 60, 24 * 60 * 60
	const month, year = 365 * day / 12, 365 * day // a month: a twelfth of a year
	var s string
	switch {
	case d < minute:
		return "just now"
	case d < hour:
		s = units(d/minute, "minute")
	case d < day:
		s = units(d/hour, "hour")
	case d < 2*day && !future:
		return "yesterday"
	case d < 30*day:
		s = units(d/day, "day")
	case d < 365*day:
		s = units(max(1, d/month), "month")
	default:
		s = units(d/year, "year")
	}
	if future {
		return s + " from now"
	}
	return s + " ago"
}

func units(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// Timeline is what the times of a graph's facts say of when it learned
// them. A fact is an entity (when it was created), an observation or a
// relation (when it was created); a fact whose time is unknown counts in
// Unknown only.
type Timeline struct {
	// Oldest and Newest are the earliest and latest time a fact was
	// learned, or zero when no fact's time is known.
	Oldest, Newest Time
	// Known and Unknown count the facts whose time is known and unknown.
	Known, Unknown int
	// PerDay counts the facts learned on each of the days asked for.
	PerDay PerDay
}

// Day is a day's length in a Time.
const Day Time = 24 * 60 * 60

// RecentDays is how many days the stats command and the page count per
// day: today (UTC) and the days before it.
const RecentDays = 30

// Timeline returns what the graph's times say of when it learned its
// facts, counted per day over the days (UTC) that end with now's.
func (g *Graph) Timeline(now Time, days int) Timeline {
	tl := Timeline{PerDay: NewPerDay(now, days)}
	fact := func(t Time) {
		if t == 0 {
			tl.Unknown++
			return
		}
		tl.Known++
		if tl.Oldest == 0 || t < tl.Oldest {
			tl.Oldest = t
		}
		tl.Newest = max(tl.Newest, t)
		tl.PerDay.Add(t)
	}
	for _, e := range g.entities {
		fact(e.Created)
		for i := range e.Observations {
			fact(e.ObservationTime(i))
		}
	}
	for _, r := range g.relations {
		fact(r.Created)
	}
	return tl
}

// MarshalJSON writes the timeline as the stats command's --json and the
// page give it: {"oldest", "newest" (RFC 3339; absent when no time is
// known), "known", "unknown", "perDay": [{"day", "count"}, …]}.
func (tl Timeline) MarshalJSON() ([]byte, error) {
	v := struct {
		Oldest  string `json:"oldest,omitempty"`
		Newest  string `json:"newest,omitempty"`
		Known   int    `json:"known"`
		Unknown int    `json:"unknown"`
		PerDay  PerDay `json:"perDay"`
	}{tl.Oldest.RFC3339(), tl.Newest.RFC3339(), tl.Known, tl.Unknown, tl.PerDay}
	return json.Marshal(v)
}

// PerDay counts things (facts learned, writes) on each of a run of days
// (UTC).
type PerDay struct {
	From   Time  // 00:00 UTC of the first day
	Counts []int // one per day, the oldest first
}

// NewPerDay returns the days days that end with now's, nothing counted.
func NewPerDay(now Time, days int) PerDay {
	p := PerDay{Counts: make([]int, max(days, 0))}
	p.From = now - now%Day - Time(len(p.Counts)-1)*Day
	return p
}

// Add counts t on its day, when that is one of p's.
func (p PerDay) Add(t Time) {
	if i := (t - p.From) / Day; t >= p.From && int(i) < len(p.Counts) {
		p.Counts[i]++
	}
}

// DayCount is how many things happened on one day (UTC), "2026-11-30".
type DayCount struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

// Days returns the counts with each day's date, the oldest first.
func (p PerDay) Days() []DayCount {
	days := make([]DayCount, len(p.Counts))
	for i, n := range p.Counts {
		days[i] = DayCount{(p.From + Time(i)*Day).UTC().Format(time.DateOnly), n}
	}
	return days
}

// MarshalJSON writes the days as Days returns them.
func (p PerDay) MarshalJSON() ([]byte, error) { return json.Marshal(p.Days()) }
