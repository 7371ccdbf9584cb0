package ui

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/history"
)

const showcaseMemory = `{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme as a data engineer","Moved to 東京 in 2023","Learning Russian on weekends","Prefers tea over coffee"]}
{"type":"entity","name":"Acme","entityType":"organization","observations":["Makes anvils","Office in Москва"]}
{"type":"entity","name":"東京","entityType":"都市","observations":["日本の首都"]}
{"type":"entity","name":"Москва","entityType":"город","observations":["Столица России"]}
{"type":"entity","name":"Борис","entityType":"person","observations":["Коллега Алисы в Acme"]}
{"type":"entity","name":"田中さん","entityType":"person","observations":["Alice's neighbour","日本語の先生"]}
{"type":"entity","name":"Project Anvil","entityType":"project","observations":["Migrating the warehouse to PostgreSQL"]}
{"type":"entity","name":"PostgreSQL","entityType":"technology","observations":["Open-source database"]}
{"type":"entity","name":"Tea","entityType":"interest","observations":["Sencha and Earl Grey"]}
{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}
{"type":"relation","from":"Alice","to":"東京","relationType":"lives_in"}
{"type":"relation","from":"Acme","to":"Москва","relationType":"has_office_in"}
{"type":"relation","from":"Борис","to":"Acme","relationType":"works_at"}
{"type":"relation","from":"Борис","to":"Alice","relationType":"knows"}
{"type":"relation","from":"田中さん","to":"Alice","relationType":"teaches"}
{"type":"relation","from":"田中さん","to":"東京","relationType":"lives_in"}
{"type":"relation","from":"Alice","to":"Project Anvil","relationType":"leads"}
{"type":"relation","from":"Project Anvil","to":"PostgreSQL","relationType":"uses"}
{"type":"relation","from":"Alice","to":"Tea","relationType":"likes"}
`

// TestScreenshot takes the picture the README shows
// (docs/see-your-memory.png, copied from readme.png in the test's
// artifacts): an entity's page with a fact learned just now, its history
// open and its neighbourhood at depth 2, in
// English, Japanese and Russian.
func TestScreenshot(t *testing.T) {
	ctx := browser(t)
	srv, path := serve(t, showcaseMemory)
	// Facts an assistant learned lately, with their times, in the history.
	other := filestore.Open(path, filestore.Options{Logf: t.Logf})
	defer other.Close()
	actx := history.WithAuthor(context.Background(), history.Author{Tool: "add_observations", Client: "Claude Desktop"})
	if _, err := other.Update(actx, graph.Timed(time.Now, func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Alice", Contents: []string{"Started a pottery class on Thursdays"}}})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "open Alice", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"#e=Alice"))
	waitFor(t, ctx, "Alice", `document.querySelector("#ename").textContent === "Alice" && document.querySelectorAll("#pic .node").length === 7`)
	waitFor(t, ctx, "when the new fact was learned", `document.querySelector("#obs li:last-child time")?.textContent === "just now"`)
	do(t, ctx, "open the history", click("#historyBox summary"))
	waitFor(t, ctx, "the history", textHas("#ehistory li", "add_observations (Claude Desktop) · + 1 observation on Alice"))
	do(t, ctx, "depth 2", click(`#depthBtns button[data-depth="2"]`))
	waitFor(t, ctx, "depth 2", `document.querySelectorAll("#pic .node").length === 9`)
	do(t, ctx, "search", typeInto("#q", "東京")...)
	waitFor(t, ctx, "the hits", `document.querySelectorAll("#hits li a").length === 3`)
	checkPicture(t, ctx, "Alice, depth 2", 9, 10)
	shot(t, ctx, "readme")
}
