package ui

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

const (
	teamWriter = "team-writer-0123456789abcdef"
	teamReader = "team-reader-0123456789abcdef"
)

// serveTeam serves memory "team" (seeded with memory) and its page the way
// `mcp-server-memory --http --tokens --memories` does, to a writer and a
// reader, and returns the server's base URL and the memory file.
func serveTeam(t *testing.T, memory string) (base, path string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "team.jsonl")
	tokensPath := filepath.Join(dir, "tokens")
	if err := os.WriteFile(path, []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokensPath, []byte(teamWriter+" team write\n"+teamReader+" team read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := access.Open(tokensPath)
	if err != nil {
		t.Fatal(err)
	}
	open := func(_ context.Context, name string) (httpserver.Memory, error) {
		store := filestore.Open(filepath.Join(dir, name+".jsonl"), filestore.Options{Logf: t.Logf})
		return httpserver.Memory{
			Server: server.New(store, server.Options{Version: "test", Memory: name, WatchInterval: 100 * time.Millisecond, Logf: t.Logf}),
			Page:   NewHandler(store, "memory "+name, Options{MayEdit: httpserver.MayEdit, WatchInterval: 100 * time.Millisecond, Logf: t.Logf}),
		}, nil
	}
	hs, err := httpserver.New(httpserver.Config{Addr: "127.0.0.1:0", Grants: tokens, Memories: open, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := testserver.Serve(t, hs)
	return "http://" + addr, path
}

// TestTeamPageInChromium opens a team memory's page as its writer and as
// its reader: the writer searches, edits into the memory file and sees an
// assistant's and another process's writes live; the reader sees the
// memory with no edit controls, and an edit it sends anyway is refused
// with a message on the page and changes nothing.
func TestTeamPageInChromium(t *testing.T) {
	ctx := browser(t)
	base, path := serveTeam(t, seedMemory)
	page := base + "/page/team/"

	do(t, ctx, "open the page with the writer's token", chromedp.Navigate(page+"?token="+teamWriter))
	waitFor(t, ctx, "the list of entities", textHas("#count", "5 entities"))
	waitFor(t, ctx, "the address without the token", `location.href === `+js(page))
	waitFor(t, ctx, "the edit controls", `document.querySelector("#mode").hidden && getComputedStyle(document.querySelector("#createForm")).display !== "none"`)
	waitFor(t, ctx, "the memory's name", textHas("#stats", "in memory team"))

	do(t, ctx, "search in Japanese", typeInto("#q", "首都")...)
	waitFor(t, ctx, "the Japanese match", `document.querySelectorAll("#hits li").length === 1 && `+textHas("#hits", "東京"))
	do(t, ctx, "search for Alice", typeInto("#q", "alice")...)
	waitFor(t, ctx, "Alice in the list", textHas("#hits .hitname", "Alice"))
	do(t, ctx, "open Alice", click("#hits a"))
	waitFor(t, ctx, "Alice's page", `document.querySelector("#ename").textContent === "Alice"`)

	added := "Leads the team — チームを率いる"
	do(t, ctx, "add an observation", append(typeInto("#addObs input", added), click("#addObs button"))...)
	waitFor(t, ctx, "the new observation", textHas("#obs", added))
	if !fileHas(t, path, added) {
		t.Errorf("the memory file lacks the observation added on the page")
	}

	// An assistant writes through /mcp/team: the page shows it live.
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp/team", HTTPClient: testserver.BearerClient(teamWriter), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_observations", Arguments: map[string]any{
		"observations": []any{map[string]any{"entityName": "Alice", "contents": []string{"Written by an assistant"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("add_observations: %v %v", err, res)
	}
	waitFor(t, ctx, "the assistant's observation", textHas("#obs", "Written by an assistant"))
	writeFromAnotherProcess(t, path, "Alice", "Written by another process")
	waitFor(t, ctx, "the other process's observation", textHas("#obs", "Written by another process"))

	// The reader, in a browser of its own.
	rctx := browser(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	do(t, rctx, "open the page with the reader's token", chromedp.Navigate(page+"?token="+teamReader))
	waitFor(t, rctx, "the list of entities", textHas("#count", "5 entities"))
	waitFor(t, rctx, "read only, and no create form", `!document.querySelector("#mode").hidden && `+textHas("#mode", "read only")+
		` && getComputedStyle(document.querySelector("#createForm")).display === "none"`)
	do(t, rctx, "open Alice", chromedp.Navigate(page+"#e=Alice"))
	waitFor(t, rctx, "Alice's observations, written by all three", `document.querySelector("#ename").textContent === "Alice" && `+textHas("#obs", added)+" && "+textHas("#obs", "Written by another process"))
	waitFor(t, rctx, "no edit control shown", `[...document.querySelectorAll("#addObs, #addRel, #renameBtn, #deleteBtn, #obs button, #rels button")].every(e => e.offsetParent === null)`)
	// The edit the page would send, sent anyway: refused, said, nothing changed.
	do(t, rctx, "try an edit", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`edit({op: "addObservation", entity: "Alice", observation: "by the reader"}) && true`))
		return err
	}))
	waitFor(t, rctx, "the refusal", `document.querySelector("#msg.error")?.textContent === "this token may only read memory team"`)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the reader's edit changed the memory file:\n%s", after)
	}
	do(t, rctx, "laptop", chromedp.EmulateViewport(1280, 800))
	shot := filepath.Join(t.ArtifactDir(), "team-reader.png")
	screenshot(t, rctx, shot, 1280, 800)
}

// waitAcross is waitFor across navigations the page starts by itself: an
// evaluation that a navigation interrupts is tried again.
func waitAcross(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	t.Fatalf("waiting for %s (%s)\npage text:\n%s", what, expr, body)
}

// TestTeamPageFromALink follows a link to a team memory's page with its
// token from a page of another site, as from a team's chat: the browser
// sends no SameSite=Strict cookie along a redirect another site started,
// so the first visit must still land on the page, its address without the
// token.
func TestTeamPageFromALink(t *testing.T) {
	ctx := browser(t)
	base, _ := serveTeam(t, seedMemory)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	chat := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><a id="link" href="`+base+`/page/team/?token=`+teamReader+`">our memory</a>`)
	})}
	go chat.Serve(ln)
	t.Cleanup(func() { chat.Close() })
	// localhost and 127.0.0.1 are two sites.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	do(t, ctx, "open the chat", chromedp.Navigate("http://localhost:"+port+"/"))
	do(t, ctx, "follow the link", click("#link"))
	waitAcross(t, ctx, "the page, read only", textHas("#count", "5 entities")+` && !document.querySelector("#mode").hidden`)
	waitAcross(t, ctx, "the address without the token", `location.href === `+js(base+"/page/team/"))
}
