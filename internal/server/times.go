package server

import (
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// timeArgs are the read tools' optional arguments about time
// (docs/design.md §8): keep only what was learned in a window, and show
// when each returned fact was learned.
type timeArgs struct {
	Since     string `json:"since"`
	Until     string `json:"until"`
	ShowTimes bool   `json:"showTimes"`
}

var (
	sinceArg     = str("Only what was learned at or after this time: a date (2026-11-30, UTC) or an RFC 3339 date-time (2026-11-30T09:15:00Z)")
	untilArg     = str("Only what was learned at or before this time: a date (2026-11-30: to the end of that day, UTC) or an RFC 3339 date-time")
	showTimesArg = &jsonschema.Schema{Type: "boolean", Description: "Also say when each returned entity, observation and relation was learned (UTC; absent or null: unknown)"}
)

// withTimeArgs adds the time arguments to a read tool's input properties.
func withTimeArgs(props map[string]*jsonschema.Schema) map[string]*jsonschema.Schema {
	props["since"], props["until"], props["showTimes"] = sinceArg, untilArg, showTimesArg
	return props
}

// timeSentence is the sentence each read tool's description gains.
const timeSentence = " since/until (a date or RFC 3339 date-time) keep only what was learned in that window; showTimes: true says when each fact was learned."

// window reads since and until. A date is the whole day in UTC: since
// from its start, until to its end.
func (a timeArgs) window(tool string) (graph.Window, error) {
	var w graph.Window
	var err error
	if w.Since, err = timeArg(tool, "since", a.Since, false); err != nil {
		return w, err
	}
	if w.Until, err = timeArg(tool, "until", a.Until, true); err != nil {
		return w, err
	}
	if w.Since != 0 && w.Until != 0 && w.Since > w.Until {
		return w, fmt.Errorf("Invalid arguments for tool %s: since (%s) is after until (%s)", tool, w.Since, w.Until)
	}
	return w, nil
}

func timeArg(tool, name, v string, end bool) (graph.Time, error) {
	if v == "" {
		return 0, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.Add(24*time.Hour - time.Second)
		}
		return graph.TimeOf(d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil && t.Unix() > 0 {
		return graph.TimeOf(t), nil
	}
	return 0, fmt.Errorf("Invalid arguments for tool %s: %s must be a date (2026-11-30) or an RFC 3339 date-time (2026-11-30T09:15:00Z); got %q", tool, name, v)
}

// applyTimes narrows a read tool's answer to what was learned in the
// window: an entity stays when its creation or one of its observations is
// in it, with only those observations; a relation stays when its creation
// is. Unknown times are in no window. showTimes makes the answer say when.
// Without either the answer is left exactly as it was.
func applyTimes(ans *answer.Answer, a timeArgs, w graph.Window) {
	if w.IsZero() && !a.ShowTimes {
		return
	}
	ans.Request += fmt.Sprintf(" since=%d until=%d showTimes=%t", w.Since, w.Until, a.ShowTimes)
	ans.Times = a.ShowTimes
	if w.IsZero() {
		return
	}
	views := ans.Entities[:0:0]
	for _, v := range ans.Entities {
		learned, kept := w.Learned(v.Entity)
		if learned == nil {
			continue
		}
		if kept != nil && v.First != nil {
			first := v.First
			v.First = func() []int { return remap(first(), kept) }
		}
		v.Entity = learned
		views = append(views, v)
	}
	ans.Entities = views
	rels := ans.Relations[:0:0]
	for _, r := range ans.Relations {
		if w.Contains(r.Created) {
			rels = append(rels, r)
		}
	}
	ans.Relations = rels
	ans.Notes = append(ans.Notes, windowNote(w))
}

// remap turns indexes into an entity's observations into indexes into the
// kept ones (kept[j] is the original index of kept observation j),
// dropping those not kept.
func remap(idx, kept []int) []int {
	at := make(map[int]int, len(kept))
	for j, i := range kept {
		at[i] = j
	}
	out := make([]int, 0, len(idx))
	for _, i := range idx {
		if j, ok := at[i]; ok {
			out = append(out, j)
		}
	}
	return out
}

func windowNote(w graph.Window) string {
	var span string
	switch {
	case w.Since != 0 && w.Until != 0:
		span = fmt.Sprintf("from %s to %s", w.Since, w.Until)
	case w.Since != 0:
		span = fmt.Sprintf("since %s", w.Since)
	default:
		span = fmt.Sprintf("until %s", w.Until)
	}
	return "Only what was learned " + span + " is shown; facts whose time is unknown (written before this server recorded times, or by another tool) are left out."
}
