package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// buttonsOnFirstLine is a script that is true when each observation's
// Edit and Delete buttons sit on its text's first line, after its time
// (the time never pushes them onto a line of their own).
const buttonsOnFirstLine = `[...document.querySelectorAll("#obs li")].every(li => {
	const text = li.querySelector(".text").getBoundingClientRect(), line = parseFloat(getComputedStyle(li).lineHeight);
	return [...li.querySelectorAll("button")].every(b => { const r = b.getBoundingClientRect(); return r.top < text.top + line && r.left >= text.right; });
})`

// TestObservationRows: however long an observation and its "learned …
// ago", its buttons stay on its first line, on a laptop and on a phone.
func TestObservationRows(t *testing.T) {
	ctx := browser(t)
	now := time.Now()
	srv, _ := serve(t, learnedMemory(now))
	do(t, ctx, "open Ada", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"#e=Ada"))
	waitFor(t, ctx, "Ada", `document.querySelector("#ename").textContent === "Ada" && document.querySelectorAll("#obs li").length === 3`)
	for _, o := range []string{"designed the Analytical Engine's programs", strings.Repeat("a long observation that takes several lines ", 5)} {
		do(t, ctx, "add an observation", append(typeInto("#addObs input", o), click("#addObs button"))...)
		waitFor(t, ctx, "the new observation's time", `document.querySelector("#obs li:last-child time")?.textContent === "just now"`)
	}
	for _, size := range [][2]int{{1280, 900}, {1100, 900}, {800, 900}} {
		do(t, ctx, fmt.Sprint(size), chromedp.EmulateViewport(int64(size[0]), int64(size[1])))
		waitFor(t, ctx, fmt.Sprintf("the buttons on the first line at %d px", size[0]), buttonsOnFirstLine)
		screenshot(t, ctx, filepath.Join(t.ArtifactDir(), fmt.Sprintf("observations-%d.png", size[0])), size[0], size[1])
	}
	do(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	waitFor(t, ctx, "the buttons on the first line on a phone", buttonsOnFirstLine)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "observations-phone.png"), 780, 1688)
}

// TestSearchWhileScrolled: a query typed while the page is scrolled past
// the list brings the results into view.
func TestSearchWhileScrolled(t *testing.T) {
	ctx := browser(t)
	srv, _ := serve(t, showcaseMemory)
	do(t, ctx, "open Alice on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Navigate(srv.URL+"#e=Alice"))
	waitFor(t, ctx, "Alice", `document.querySelector("#ename").textContent === "Alice" && document.querySelectorAll("#pic .node").length === 7`)
	do(t, ctx, "scroll to the picture", chromedp.Evaluate[chromedp.Void](`document.querySelector("#pic").scrollIntoView()`))
	waitFor(t, ctx, "scrolled past the list", `document.querySelector("#results").getBoundingClientRect().bottom < 0`)
	do(t, ctx, "search", typeInto("#q", "Tea")...)
	waitFor(t, ctx, "the results in view, below the header", `document.querySelector("#hits a")?.dataset.name === "Tea" && (() => {
		const r = document.querySelector("#results").getBoundingClientRect(), header = document.querySelector("header").getBoundingClientRect();
		return r.top >= header.bottom - 1 && r.top < innerHeight / 2;
	})()`)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "search-while-scrolled.png"), 780, 1688)
}
