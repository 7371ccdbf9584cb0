package ui

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

// TestPageRestoresWhatWasDeleted: an entity's page lists its recorded
// changes, and what a change deleted comes back with one click, as a write
// the history records as the page's; the home view lists the entities
// deleted lately, an assistant's deletion among them, and restores them
// with their relations.
func TestPageRestoresWhatWasDeleted(t *testing.T) {
	ctx := browser(t)
	srv, path := serve(t, seedMemory)
	other := filestore.Open(path, filestore.Options{Logf: t.Logf, Lock: filestore.LockOptions{Timeout: 2 * time.Second}})
	defer other.Close()

	// Delete an observation on the page; the entity's history shows it,
	// with the text, and restores it.
	do(t, ctx, "open Alice", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"#e=Alice"))
	waitFor(t, ctx, "Alice", `document.querySelector("#ename").textContent === "Alice" && !document.querySelector("#historyBox").hidden`)
	do(t, ctx, "delete an observation", click(`#obs li:nth-child(3) button.danger`))
	waitFor(t, ctx, "the observation gone", `!`+textHas("#obs", "Speaks Russian"))
	do(t, ctx, "open the history", click("#historyBox summary"))
	waitFor(t, ctx, "the deletion in the history", `document.querySelector("#ehistory li")?.textContent.includes("page · − 1 observation on Alice “Speaks Russian”")`)
	waitFor(t, ctx, "when, with the time on hover", `document.querySelector("#ehistory li time")?.textContent === "just now" && document.querySelector("#ehistory li time").title !== ""`)
	do(t, ctx, "restore it", click("#ehistory li button"))
	waitFor(t, ctx, "the observation back", textHas("#obs", "Speaks Russian")+" && "+textHas("#msg", "Restored: + 1 observation on Alice."))
	if !fileHas(t, path, "Speaks Russian") {
		t.Errorf("the restored observation is not in the memory file")
	}
	waitFor(t, ctx, "the restore in the history, newest first, and the deletion undone", `document.querySelectorAll("#ehistory li").length === 2 && `+
		`document.querySelector("#ehistory li").textContent.includes("page · + 1 observation on Alice “Speaks Russian”") && !document.querySelector("#ehistory button") && `+
		`document.querySelector("#ehistory li:last-child").textContent.includes("(back in the memory)")`)
	newest := func() graph.Record {
		t.Helper()
		recs, err := other.History(history.Filter{})
		if err != nil || len(recs) == 0 {
			t.Fatalf("the history: %v, %v", recs, err)
		}
		return recs[0]
	}
	if r := newest(); r.Tool != "page" || history.Summary(r.Changes) != "+ 1 observation on Alice" {
		t.Errorf("the restore was recorded as %q by %q, want the page's", history.Summary(r.Changes), r.Tool)
	}

	// An assistant deletes Alice, and her relations go with her.
	actx := context.Background()
	if _, err := other.Update(actx, graph.Write{Tool: "delete_entities", Client: "Claude Desktop", Apply: func(g *graph.Graph) error {
		g.DeleteEntities([]string{"Alice"})
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "Alice gone from the page", `location.hash === "" && !document.querySelector("#homeView").hidden`)
	waitFor(t, ctx, "Alice recently deleted", `document.querySelector("#deletedList li")?.textContent.includes("delete_entities (Claude Desktop) · deleted Alice (person)") && `+
		`document.querySelector("#deletedList li").title === "− entity Alice (person), 3 observations, 3 relations"`)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "recently-deleted.png"), 1280, 900)

	// A restore from another origin is refused like every edit.
	for _, origin := range []string{"http://evil.example", ""} {
		req, _ := http.NewRequest("POST", srv.URL+"api/edit", strings.NewReader(`{"op":"restore","record":"`+newest().ID+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a restore with Origin %q: status %d, want 403", origin, resp.StatusCode)
		}
	}
	if fileHas(t, path, `"name":"Alice"`) {
		t.Fatalf("a refused restore brought Alice back")
	}

	do(t, ctx, "restore Alice", click("#deletedList li button"))
	waitFor(t, ctx, "Alice back", textHas("#msg", "Restored: + entity Alice (person), 3 observations")+" && "+textHas("#hits", "Alice"))
	waitFor(t, ctx, "the deletion marked as undone", textHas("#deletedList li", "(back in the memory)")+` && !document.querySelector("#deletedList li button")`)
	for _, line := range []string{`"name":"Alice"`, `{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"`, `{"type":"relation","from":"Alice","to":"Москва","relationType":"visited"`} {
		if !fileHas(t, path, line) {
			t.Errorf("the memory file lacks %s after the restore", line)
		}
	}
	if r := newest(); r.Tool != "page" {
		t.Errorf("the restore was recorded as %q's, want the page's", r.Tool)
	}
	do(t, ctx, "open Alice again", chromedp.Navigate(srv.URL+"#e=Alice"))
	waitFor(t, ctx, "her relations", textHas("#rels", "→ works_at Acme")+" && "+textHas("#rels", "→ visited Москва"))
	do(t, ctx, "open the history", click("#historyBox summary"))
	waitFor(t, ctx, "the deletion and the restore", `document.querySelectorAll("#ehistory li").length === 4`)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "entity-history.png"), 1280, 900)

	// A long history shows its newest changes and where the others are.
	for i := range entityHistoryLimit {
		if _, err := other.Update(actx, graph.Write{Tool: "delete_entities", Client: "Claude Desktop", Apply: func(g *graph.Graph) error {
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Alice", Contents: []string{fmt.Sprint("fact ", i)}}})
			return err
		}}); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, "open Alice's long history", chromedp.Reload())
	waitFor(t, ctx, "Alice", `document.querySelector("#ename").textContent === "Alice" && !document.querySelector("#historyBox").hidden`)
	do(t, ctx, "open the history", click("#historyBox summary"))
	waitFor(t, ctx, "the newest changes and a note on the older ones", fmt.Sprintf(`document.querySelectorAll("#ehistory li").length === %d && document.querySelector("#ehistory li").textContent.includes("fact %d") && `, entityHistoryLimit, entityHistoryLimit-1)+
		textHas("#ehistoryNote", `Older changes: mcp-server-memory history "Alice" shows them all.`))
}

// TestRecentlyDeletedIsCompact: the home view's recently deleted writes
// take a line each (renames, merges and undos too, said in a few words,
// the rest on hover) below the Create form; only the newest deletion of
// an entity is offered for restoring; a client's name shows its invisible
// characters.
func TestRecentlyDeletedIsCompact(t *testing.T) {
	ctx := browser(t)
	srv, path := serve(t, seedMemory)
	other := filestore.Open(path, filestore.Options{Logf: t.Logf, Lock: filestore.LockOptions{Timeout: 2 * time.Second}})
	defer other.Close()
	write := func(tool, client string, f func(g *graph.Graph) error) {
		t.Helper()
		if _, err := other.Update(context.Background(), graph.Write{Tool: tool, Client: client, Apply: f}); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("a long observation that fills the line ", 6)
	write("add_observations", "Claude Desktop", func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Alice", Contents: []string{long, long + "2", long + "3"}}})
		return err
	})
	write("rename", "", func(g *graph.Graph) error { _, err := g.Rename("東京", "Tokyo"); return err })
	write("merge", "", func(g *graph.Graph) error { _, err := g.Merge("Acme", "Москва"); return err })
	// A client whose name reverses what follows it: "Claude", then an
	// override and "edoC", which would show as "ClaudeCode".
	write("delete_entities", "Claude\u202eedoC", func(g *graph.Graph) error { g.DeleteEntities([]string{"Alice"}); return nil })
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the deletions", `document.querySelectorAll("#deletedList li").length === 3`)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#deletedList li")].map(li => li.textContent.replace(/^[^·]*· /, ""))`))
	want := []string{
		`delete_entities (Claude\u202eedoC) · deleted Alice (person) Restore`,
		`merge · merged Москва into Acme mcp-server-memory undo `,
		`rename · renamed 東京 to Tokyo mcp-server-memory undo `,
	}
	if err != nil || len(got) != 3 {
		t.Fatalf("the deletions: %q (err %v)", got, err)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("deletion %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
	waitFor(t, ctx, "a line each, below the Create form, which is in view", `(() => {
		const lis = [...document.querySelectorAll("#deletedList li")], form = document.querySelector("#createForm").getBoundingClientRect();
		return lis.every(li => li.getBoundingClientRect().height < 30) && form.bottom < innerHeight && form.bottom <= document.querySelector("#deleted").getBoundingClientRect().top;
	})()`)
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "recently-deleted-compact.png"), 1280, 900)

	// Restored, then deleted again: only the newer deletion is offered.
	do(t, ctx, "restore Alice", click("#deletedList li button"))
	waitFor(t, ctx, "Alice back", textHas("#msg", "Restored: + entity Alice (person)")+" && "+textHas("#deletedList li", "(back in the memory)"))
	write("delete_entities", "Cursor", func(g *graph.Graph) error { g.DeleteEntities([]string{"Alice"}); return nil })
	waitFor(t, ctx, "the newer deletion offered, the older not", `document.querySelectorAll("#deletedList li").length === 4 && document.querySelectorAll("#deletedList li button").length === 1 && `+
		`document.querySelector("#deletedList li button") === document.querySelector("#deletedList li:first-child button") && `+textHas("#deletedList li:nth-child(2)", "(deleted again since)"))
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "recently-deleted-again.png"), 1280, 900)

	// The favicon.
	waitFor(t, ctx, "the favicon", `document.querySelector("link[rel=icon]") !== null`)
	if st, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector("link[rel=icon]").href).then(r => r.status + " " + r.headers.get("Content-Type"))`, chromedp.EvalAwaitPromise)); err != nil || st != "200 image/svg+xml" {
		t.Errorf("the favicon: %q (err %v), want 200 image/svg+xml", st, err)
	}
}
