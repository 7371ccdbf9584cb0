package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// learnedMemory is a memory whose times are relative to now: Ada learned 3
// days ago, her observations then, at an unknown time and 2 hours ago, her
// relation yesterday; Charles written by a tool that keeps no times; Acme
// in 2020.
func learnedMemory(now time.Time) string {
	at := func(d time.Duration) string { return now.Add(-d).UTC().Format(time.RFC3339) }
	return fmt.Sprintf(`{"type":"entity","name":"Ada","entityType":"person","observations":["wrote the first program","old note","met Babbage"],"createdAt":%q,"updatedAt":%q,"observationTimes":[%q,1,null,1,%q,1],"observationsHash":"%s"}
{"type":"entity","name":"Charles","entityType":"person","observations":["Babbage"]}
{"type":"entity","name":"Acme","entityType":"company","observations":["Makes anvils"],"createdAt":"2020-01-02T03:04:05Z","observationsHash":"10d95ea4"}
{"type":"relation","from":"Ada","to":"Charles","relationType":"worked with","createdAt":%q}
{"type":"relation","from":"Acme","to":"Charles","relationType":"employs"}
`, at(72*time.Hour), at(2*time.Hour), at(72*time.Hour), at(2*time.Hour), observationsHash("wrote the first program", "old note", "met Babbage"), at(24*time.Hour))
}

// observationsHash is the memory file's hash of an observations list
// (FNV-1a over each observation's bytes and 0xFF), written out here so
// that the test does not take it from the code it tests.
func observationsHash(obs ...string) string {
	h := uint32(2166136261)
	for _, o := range obs {
		for _, b := range []byte(o) {
			h = (h ^ uint32(b)) * 16777619
		}
		h = (h ^ 0xFF) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

// TestPageSaysWhenFactsWereLearned: an entity's page says when it and each
// observation and relation was learned ("3 days ago", the exact time on
// hover), nothing where that is unknown; the home view plots the facts
// learned per day over the last 30 days.
func TestPageSaysWhenFactsWereLearned(t *testing.T) {
	ctx := browser(t)
	now := time.Now()
	srv, _ := serve(t, learnedMemory(now))

	// The home view: the writes the memory's history recorded on each of
	// the last 30 days (UTC), today's last, none yet; the facts learned in
	// that time, the oldest and the newest.
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the plot", `document.querySelectorAll("#perDay g.day").length === 30 && !document.querySelector("#learned").hidden`)
	waitFor(t, ctx, "its title", textHas("#learnedTitle", "Writes per day, last 30 days"))
	checkPlot(t, ctx, now, nil)
	waitFor(t, ctx, "what the plot shows, in words", textHas("#learnedNote", "0 writes in the last 30 days. ")+" && "+
		textHas("#learnedNote", "4 facts learned in that time are still in the memory.")+" && "+
		textHas("#learnedNote", "years ago, the newest 2 hours ago.")+" && "+textHas("#learnedNote", "4 facts have no time"))
	waitFor(t, ctx, "the oldest fact's exact time on hover", `[...document.querySelectorAll("#learnedNote time")].some(e => e.dateTime === "2020-01-02T03:04:05Z" && e.title.includes("2020"))`)

	// Ada's page.
	do(t, ctx, "open Ada", chromedp.Navigate(srv.URL+"#e=Ada"))
	waitFor(t, ctx, "Ada", `document.querySelector("#ename").textContent === "Ada"`)
	waitFor(t, ctx, "when Ada was learned", `document.querySelector("#elearned time")?.textContent === "learned 3 days ago"`)
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#elearned time").title`))
	if err != nil || !strings.HasPrefix(title, "Learned ") || !strings.Contains(title, now.Add(-72*time.Hour).Format("2006")) || !strings.Contains(title, "\nLast changed ") {
		t.Errorf("the exact time on hover: %q (err %v)", title, err)
	}
	obs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#obs li")].map(li => li.querySelector(".text").textContent + "|" + (li.querySelector("time")?.textContent ?? ""))`))
	if want := []string{"wrote the first program|3 days ago", "old note|", "met Babbage|2 hours ago"}; err != nil || fmt.Sprint(obs) != fmt.Sprint(want) {
		t.Errorf("observations %q (err %v), want %q", obs, err, want)
	}
	waitFor(t, ctx, "when the relation was learned", `document.querySelector("#rels li time")?.textContent === "yesterday"`)

	// An observation added on the page was learned just now, and is today's
	// write.
	do(t, ctx, "add an observation", append(typeInto("#addObs input", "designed the Analytical Engine's programs"), click("#addObs button"))...)
	waitFor(t, ctx, "the new observation's time", `document.querySelector("#obs li:last-child time")?.textContent === "just now"`)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "learned-entity.png"), 1280, 900)
	do(t, ctx, "home", chromedp.Navigate(srv.URL+"#"))
	waitFor(t, ctx, "today's write", `document.querySelector("#perDay g.day:last-of-type")?.dataset.count === "1"`)
	checkPlot(t, ctx, now, map[string]int{now.UTC().Format(time.DateOnly): 1})
	waitFor(t, ctx, "the write, in words", textHas("#learnedNote", "1 write in the last 30 days, on "))
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "learned-home.png"), 1280, 900)

	// A memory without times anywhere says nothing of when.
	do(t, ctx, "open Charles", chromedp.Navigate(srv.URL+"#e=Charles"))
	waitFor(t, ctx, "Charles", `document.querySelector("#ename").textContent === "Charles" && `+textHas("#rels", "employs"))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#elearned time, #obs time").length`)); err != nil || n != 0 {
		t.Errorf("Charles, whose times are unknown, shows %d times (err %v)", n, err)
	}

	// On a phone the plot fits the screen, its text as large as on a laptop.
	do(t, ctx, "phone", chromedp.Navigate(srv.URL+"#"), chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	waitFor(t, ctx, "the plot on a phone", `!document.querySelector("#learned").hidden && document.querySelectorAll("#perDay g.day").length === 30`)
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(document.documentElement.scrollWidth, document.querySelector("#perDay").getBoundingClientRect().right)`)); err != nil || w > 390 {
		t.Errorf("the plot is wider than the phone: %v px (err %v)", w, err)
	}
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "learned-phone.png"), 780, 1688)
}

// checkPlot checks the home view's plot: the 30 days to today (UTC), each
// with its count from perDay (none when absent), a bar for each that has
// some.
func checkPlot(t *testing.T, ctx context.Context, now time.Time, perDay map[string]int) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[][2]any](`[...document.querySelectorAll("#perDay g.day")].map(g => [g.dataset.day, +g.dataset.count])`))
	if err != nil {
		t.Fatal(err)
	}
	today := now.UTC().Format(time.DateOnly)
	if len(got) != 30 || got[29][0] != today || got[0][0] != now.UTC().AddDate(0, 0, -29).Format(time.DateOnly) {
		t.Fatalf("the plot's days: %v, want the 30 days to today, %s", got, today)
	}
	bars := 0
	for _, d := range got {
		if n := perDay[d[0].(string)]; float64(n) != d[1].(float64) {
			t.Errorf("%s: %v, want %d", d[0], d[1], n)
		}
		if d[1].(float64) > 0 {
			bars++
		}
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#perDay rect.bar").length`)); err != nil || n != bars {
		t.Errorf("%d bars drawn (err %v), want one for each of the %d days with some", n, err, bars)
	}
	if label, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#perDay").getAttribute("aria-label")`)); err != nil || !strings.Contains(label, " per day, ") {
		t.Errorf("the plot's label for screen readers: %q (err %v)", label, err)
	}
}

// TestPageAgo checks the page's relative times on the cases the commands'
// are checked on (internal/graph/testdata/ago.json): the two say the same.
func TestPageAgo(t *testing.T) {
	b, err := os.ReadFile("../graph/testdata/ago.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Seconds int64  `json:"seconds"`
		Want    string `json:"want"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	srv, _ := serve(t, "")
	do(t, ctx, "open the page", chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the page's script", `typeof ago === "function"`)
	const now = 1_800_000_000_000 // ms
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`%s.map(c => ago(new Date(%d - c.seconds * 1000).toISOString(), %d + 999))`, b, now, now)))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got[i] != c.Want {
			t.Errorf("%d seconds before now: %q, want %q", c.Seconds, got[i], c.Want)
		}
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`ago(null, Date.now()) + ago("", Date.now())`)); err != nil || got != "" {
		t.Errorf("an unknown time: %q (err %v), want nothing", got, err)
	}
}
