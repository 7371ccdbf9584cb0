package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

// These tests drive the page in real headless Chromium (Debian's chromium)
// as a person would: type, click, look. They skip when chromium is missing,
// except in CI (CI or MCP_SERVER_MEMORY_REQUIRE_CHROMIUM set), where they
// fail.

const seedMemory = `{"type":"entity","name":"Москва","entityType":"город","observations":["Столица России","Население около 13 миллионов"]}
{"type":"entity","name":"東京","entityType":"都市","observations":["日本の首都","人口は約1400万人"]}
{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme","Lives in 東京","Speaks Russian"]}
{"type":"entity","name":"Acme","entityType":"organization","observations":["Makes anvils"]}
{"type":"entity","name":"<img src=x onerror=window.pwned=1>","entityType":"<b>type</b>","observations":["<script>window.pwned=1</script>"]}
{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}
{"type":"relation","from":"Alice","to":"東京","relationType":"lives_in"}
{"type":"relation","from":"Alice","to":"Москва","relationType":"visited"}
{"type":"relation","from":"Acme","to":"Москва","relationType":"has_office_in"}
`

func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" || os.Getenv("MCP_SERVER_MEMORY_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium is not installed; CI must install it (apt-get install -y chromium fonts-noto-cjk)")
	}
	t.Skip("chromium is not installed: apt-get install -y chromium fonts-noto-cjk to run the browser tests")
	return ""
}

// browser starts headless Chromium with a fresh profile and the flags this
// closed network needs.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return bctx
}

// serve writes memory to a fresh file and serves the page for it the way
// `mcp-server-memory ui` does.
func serve(t *testing.T, memory string) (*Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filestore.Open(path, filestore.Options{Logf: t.Logf, Lock: filestore.LockOptions{Timeout: 2 * time.Second}})
	return serveStore(t, store, path), path
}

// serveStore serves the page for store, named where, the way
// `mcp-server-memory ui` does, until the test ends.
func serveStore(t *testing.T, store graph.Store, where string) *Server {
	t.Helper()
	return serveOptions(t, store, where, Options{})
}

// serveOptions is serveStore with opts (a short watch interval and the
// test's log added).
func serveOptions(t *testing.T, store graph.Store, where string, opts Options) *Server {
	t.Helper()
	opts.WatchInterval, opts.Logf = 100*time.Millisecond, t.Logf
	srv, err := Listen(store, where, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return srv
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		// A navigation (a reload) replaces the page's JavaScript context
		// while the poll waits in it: poll again in the new one.
		if strings.Contains(err.Error(), "Cannot find context with specified id") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, expr, err, body)
	}
}

// js quotes s as a JavaScript string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func textHas(sel, s string) string {
	return fmt.Sprintf(`(document.querySelector(%s)?.textContent ?? "").includes(%s)`, js(sel), js(s))
}

func fileHas(t *testing.T, path, s string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// click clicks the first element sel finds, as a person does. A list
// that re-renders between finding the element and clicking it (search as
// you type answers after each key) leaves a node that no longer exists:
// the click is then tried again on the element there now.
func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		var err error
		for range 5 {
			if _, err = chromedp.Run(ctx, chromedp.Click(chromedp.CSS(sel))); err == nil || !strings.Contains(err.Error(), "Could not find node") {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
		return err
	})
}

// typeInto replaces an input's text by typing, as a person does.
func typeInto(sel, text string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(document.querySelector(%s).value = "") === ""`, js(sel))))
			return err
		}),
		chromedp.SendKeys(chromedp.CSS(sel), text),
	}
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestPageInChromium(t *testing.T) {
	ctx := browser(t)
	srv, path := serve(t, seedMemory)
	shots := t.ArtifactDir()

	do(t, ctx, "open the page", chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the list of entities", textHas("#count", "5 entities"))
	waitFor(t, ctx, "the whole-graph picture", `document.querySelectorAll("#pic .node").length === 5`)

	// Search as you type, in Japanese and in Russian (case folded).
	do(t, ctx, "search in Japanese", typeInto("#q", "首都")...)
	waitFor(t, ctx, "the Japanese match", `document.querySelectorAll("#hits li").length === 1 && `+textHas("#hits", "東京"))
	do(t, ctx, "search in Russian", typeInto("#q", "СТОЛИЦА")...)
	waitFor(t, ctx, "the Russian match", `document.querySelectorAll("#hits li").length === 1 && `+textHas("#hits", "Москва"))
	do(t, ctx, "search in Japanese across fields", typeInto("#q", "東京")...)
	waitFor(t, ctx, "the name match first", `document.querySelector("#hits .hitname")?.textContent === "東京" && `+textHas("#hits", "Alice"))

	// Open an entity: its type, observations and relations both ways.
	do(t, ctx, "open Москва", typeInto("#q", "москва")...)
	waitFor(t, ctx, "Москва in the list", textHas("#hits", "Москва"))
	do(t, ctx, "click Москва", click("#hits a"))
	waitFor(t, ctx, "the entity page", `document.querySelector("#ename").textContent === "Москва"`)
	waitFor(t, ctx, "its type and observations", textHas("#etype", "город")+" && "+textHas("#obs", "Столица России"))
	waitFor(t, ctx, "its relations both ways", textHas("#rels", "← visited Alice")+" && "+textHas("#rels", "← has_office_in Acme"))
	waitFor(t, ctx, "its neighbourhood picture", `document.querySelectorAll("#pic .node").length === 3`)

	// Add an observation; it reaches the file.
	added := "Основана в 1147 году — 1147年に創設"
	do(t, ctx, "add an observation", append(typeInto("#addObs input", added), click("#addObs button"))...)
	waitFor(t, ctx, "the new observation", textHas("#obs", added))
	if !fileHas(t, path, added) {
		t.Errorf("the memory file lacks the added observation")
	}
	// Change it.
	do(t, ctx, "edit the observation", click(`#obs li:last-child button`))
	do(t, ctx, "type the new text", append(typeInto("#obs form input", "Основана в 1147 году"), click("#obs form button"))...)
	waitFor(t, ctx, "the changed observation", `[...document.querySelectorAll("#obs .text")].map(e => e.textContent).join("|") === "Столица России|Население около 13 миллионов|Основана в 1147 году"`)
	if fileHas(t, path, added) || !fileHas(t, path, "Основана в 1147 году") {
		t.Errorf("the memory file does not hold the changed observation")
	}

	do(t, ctx, "laptop screenshot", chromedp.EmulateViewport(1280, 800))
	screenshot(t, ctx, filepath.Join(shots, "entity-laptop.png"), 1280, 800)

	// A change by another process appears without a reload.
	writeFromAnotherProcess(t, path, "Москва", "Добавлено другим процессом")
	waitFor(t, ctx, "the other process's observation", textHas("#obs", "Добавлено другим процессом"))

	// Rename: relations follow, in the file too.
	do(t, ctx, "rename", click("#renameBtn"))
	do(t, ctx, "type the new name", append(typeInto("#renameForm input", "Москва (столица)"), click("#renameForm button"))...)
	waitFor(t, ctx, "the new name", `document.querySelector("#ename").textContent === "Москва (столица)" && location.hash === "#e=" + encodeURIComponent("Москва (столица)")`)
	if !fileHas(t, path, `{"type":"relation","from":"Alice","to":"Москва (столица)","relationType":"visited"}`) {
		t.Errorf("the relation did not follow the rename in the file")
	}

	// Renaming onto an existing name fails with a clear message and changes nothing.
	before, _ := os.ReadFile(path)
	do(t, ctx, "rename onto Alice", click("#renameBtn"))
	do(t, ctx, "type Alice", append(typeInto("#renameForm input", "Alice"), click("#renameForm button"))...)
	waitFor(t, ctx, "the refusal", `document.querySelector("#msg.error")?.textContent === "Nothing was changed: Entity with name Alice already exists"`)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("a refused rename changed the file")
	}

	// Delete takes two clicks.
	do(t, ctx, "delete", click("#renameCancel"), click("#deleteBtn"))
	waitFor(t, ctx, "the armed button", textHas("#deleteBtn", "Click again"))
	do(t, ctx, "delete again", click("#deleteBtn"))
	waitFor(t, ctx, "the home view", `!document.querySelector("#homeView").hidden && location.hash === ""`)
	if fileHas(t, path, "Москва") {
		t.Errorf("the deleted entity, or a relation of it, is still in the file")
	}

	// Memory content is text, never HTML.
	do(t, ctx, "search the markup", typeInto("#q", "onerror")...)
	waitFor(t, ctx, "the markup entity", textHas("#hits", "<img src=x onerror=window.pwned=1>"))
	do(t, ctx, "open it", click("#hits a"))
	waitFor(t, ctx, "its page", textHas("#obs", "<script>window.pwned=1</script>")+` && document.querySelector("#etype").textContent === "<b>type</b>"`)
	if pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.pwned === 1 || document.querySelector("#view img, #view b, #obs script") !== null`)); err != nil || pwned {
		t.Errorf("memory content was interpreted as HTML (pwned %v, err %v)", pwned, err)
	}

	// A phone: one column, still readable.
	do(t, ctx, "phone", chromedp.Navigate(srv.URL+"#e="+"Alice"), chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	waitFor(t, ctx, "Alice on a phone", `document.querySelector("#ename").textContent === "Alice" && document.querySelectorAll("#pic .node").length === 3`)
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
		t.Errorf("the page is wider than the phone: %v px (err %v)", w, err)
	}
	screenshot(t, ctx, filepath.Join(shots, "entity-phone.png"), 780, 1688)
}

// TestForeignOriginCannotWrite opens a page of another origin in the
// browser that tries to change the memory, and sends forged requests.
func TestForeignOriginCannotWrite(t *testing.T) {
	ctx := browser(t)
	srv, path := serve(t, seedMemory)
	before, _ := os.ReadFile(path)

	// The attacker knows the secret URL (the worst case) but runs on
	// another origin.
	evil := fmt.Sprintf(`<!doctype html><title>evil</title><script>
const target = %s + "api/edit";
const body = JSON.stringify({op: "deleteEntity", entity: "Alice"});
Promise.allSettled([
  fetch(target, {method: "POST", headers: {"Content-Type": "application/json"}, body}),
  fetch(target, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
  fetch(target, {method: "POST", mode: "no-cors", body: new URLSearchParams({op: "deleteEntity", entity: "Alice"})}),
]).then(rs => { document.title = "done " + rs.map(r => r.status).join(","); });
</script>`, js(srv.URL))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	evilSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(evil))
	})}
	go evilSrv.Serve(ln)
	defer evilSrv.Close()

	do(t, ctx, "open the foreign page", chromedp.Navigate("http://"+ln.Addr().String()+"/"))
	waitFor(t, ctx, "its requests to finish", `document.title.startsWith("done")`)
	title, _ := chromedp.Run(ctx, chromedp.Title())
	if !strings.HasPrefix(title, "done rejected,") {
		t.Errorf("the JSON request was not blocked by the browser: %s", title)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatalf("a foreign page changed the memory:\n%s", after)
	}

	// Forged requests outside a browser: each is refused with 403.
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Content-Type": "text/plain"},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"api/edit", strings.NewReader(`{"op":"deleteEntity","entity":"Alice"}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with %v: status %d, want 403", h, resp.StatusCode)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("a CORS header was sent")
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatalf("a forged request changed the memory")
	}
}

// screenshot saves a PNG of the viewport and checks that it shows
// something: the expected size, and many colours over much of its area
// (a blank or failed page is one or two colours).
func screenshot(t *testing.T, ctx context.Context, path string, wantW, wantH int) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", path, err)
	}
	checkVaried(t, path, img, wantW, wantH)
}

func checkVaried(t *testing.T, path string, img image.Image, wantW, wantH int) {
	t.Helper()
	b := img.Bounds()
	if b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("screenshot %s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), wantW, wantH)
	}
	colours := make(map[uint32]int)
	nonWhite, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>11)<<10|(g>>11)<<5|bl>>11]++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				nonWhite++
			}
			total++
		}
	}
	if len(colours) < 50 || nonWhite < total/50 {
		t.Errorf("screenshot %s looks blank: %d colours, %d of %d sampled pixels not white", path, len(colours), nonWhite, total)
	}
}

var big = flag.Bool("ui.big", false, "also drive the page on a generated memory of 100k entities (slow)")

// TestPageOnBigMemory opens the page on 100k entities: search, an entity's
// page and its neighbourhood stay usable, and the whole-graph picture is
// refused with a reason. Run with -ui.big.
func TestPageOnBigMemory(t *testing.T) {
	if !*big {
		t.Skip("run with -ui.big")
	}
	ctx := browser(t)
	g, q := testgraph.Generate(100_000, 1)
	var b bytes.Buffer
	if err := g.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	srv, _ := serve(t, b.String())
	start := time.Now()
	do(t, ctx, "open", chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the first entities", textHas("#count", "Entities 1–50 of 100,000"))
	waitFor(t, ctx, "the refusal to draw everything", textHas("#picNote", "The memory holds 100000 entities"))
	t.Logf("opened in %v", time.Since(start))
	start = time.Now()
	do(t, ctx, "search", typeInto("#q", q.Japanese)...)
	waitFor(t, ctx, "Japanese matches", `/^Matches 1–50 of |^No entity contains/.test(document.querySelector("#count").textContent) && document.querySelectorAll("#hits li a").length === 50`)
	t.Logf("first search answered in %v", time.Since(start))
	do(t, ctx, "open the first", click("#hits a"))
	waitFor(t, ctx, "its page and picture", `document.querySelector("#ename").textContent !== "" && document.querySelectorAll("#pic .node").length > 1`)
	do(t, ctx, "depth 2", click(`#depthBtns button[data-depth="2"]`))
	waitFor(t, ctx, "depth 2", textHas("#picTitle", "depth 2"))
	do(t, ctx, "laptop", chromedp.EmulateViewport(1280, 800))
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), "big.png"), 1280, 800)
}

// writeFromAnotherProcess runs this test binary again as a separate process
// that adds an observation through its own Store, under the lock, as a
// server or a command sharing the file would.
func writeFromAnotherProcess(t *testing.T, path, entity, observation string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "UI_TEST_WRITE="+path, "UI_TEST_ENTITY="+entity, "UI_TEST_OBSERVATION="+observation)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other process failed: %v\n%s", err, out)
	}
}

func TestMain(m *testing.M) {
	if path := os.Getenv("UI_TEST_WRITE"); path != "" {
		store := filestore.Open(path, filestore.Options{})
		_, err := store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
			_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: os.Getenv("UI_TEST_ENTITY"), Contents: []string{os.Getenv("UI_TEST_OBSERVATION")}}})
			return err
		}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	os.Exit(runTests(m))
}

// runTests runs the tests; database_test.go makes it pgtest.Main where
// pgtest builds, so the tests on a memory in PostgreSQL have a database.
var runTests = (*testing.M).Run

// pictureMemory is a small memory in two parts, with long Russian names
// and relation types, two relations each way between one pair, and an
// entity related to itself.
const pictureMemory = `{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme"]}
{"type":"entity","name":"Acme","entityType":"organization","observations":["Makes anvils"]}
{"type":"entity","name":"Москва","entityType":"город","observations":["Столица России"]}
{"type":"entity","name":"東京","entityType":"都市","observations":["日本の首都"]}
{"type":"entity","name":"Система хранения памяти","entityType":"проект","observations":["Хранит граф знаний"]}
{"type":"entity","name":"Спецификация протокола","entityType":"документ","observations":["Версия 2025-11-25"]}
{"type":"entity","name":"Хранилище","entityType":"компонент","observations":["Файл JSONL"]}
{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}
{"type":"relation","from":"Acme","to":"Alice","relationType":"employs"}
{"type":"relation","from":"Alice","to":"東京","relationType":"lives_in"}
{"type":"relation","from":"Alice","to":"Москва","relationType":"visited"}
{"type":"relation","from":"Acme","to":"Москва","relationType":"has_office_in"}
{"type":"relation","from":"Система хранения памяти","to":"Спецификация протокола","relationType":"описывается спецификацией"}
{"type":"relation","from":"Система хранения памяти","to":"Хранилище","relationType":"состоит из"}
{"type":"relation","from":"Хранилище","to":"Хранилище","relationType":"копирует себя"}
`

// pictureReport measures the drawn picture as a person sees it: sizes on
// screen, what sticks out of the picture, what covers what, where each
// arrow ends, and how far apart the graph's separate parts are.
const pictureReport = `(() => {
  const pic = document.querySelector("#pic"), frame = pic.getBoundingClientRect();
  const r = e => e.getBoundingClientRect();
  const screenSize = t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const nodes = [...pic.querySelectorAll(".node")], rels = [...pic.querySelectorAll("text.rel")], edges = [...pic.querySelectorAll(".edge")];
  const names = nodes.map(n => n.querySelector("text")), boxes = nodes.map(n => n.querySelector("rect"));
  const byName = new Map(nodes.map(n => [n.dataset.name, n.querySelector("rect")]));
  const rep = { note: document.querySelector("#picNote").textContent, nodes: nodes.length, edges: edges.length, rels: rels.length, minNodeFont: 1e9, minRelFont: 1e9, outside: [], overlaps: [], arrows: 0, wrongEnds: [], partGap: 0 };
  for (const t of names) rep.minNodeFont = Math.min(rep.minNodeFont, screenSize(t));
  for (const t of rels) rep.minRelFont = Math.min(rep.minRelFont, screenSize(t));
  for (const t of [...names, ...rels]) {
    const b = r(t);
    if (b.left < frame.left || b.right > frame.right || b.top < frame.top || b.bottom > frame.bottom) rep.outside.push(t.textContent);
    if (t.textContent.endsWith("…") && t.closest(".node") && !t.closest(".node").querySelector("title").textContent.startsWith(t.textContent.slice(0, -1))) rep.outside.push("cut: " + t.textContent);
  }
  boxes.forEach((a, i) => boxes.forEach((b, j) => { if (i < j && overlap(r(a), r(b))) rep.overlaps.push(names[i].textContent + " / " + names[j].textContent); }));
  rels.forEach((t, i) => {
    boxes.forEach((b, j) => { if (overlap(r(t), r(b))) rep.overlaps.push(t.textContent + " / " + names[j].textContent); });
    rels.forEach((u, j) => { if (i < j && overlap(r(t), r(u))) rep.overlaps.push(t.textContent + " / " + u.textContent); });
  });
  const marker = document.getElementById("arrow");
  for (const e of edges) {
    if (marker?.tagName === "marker" && marker.querySelector("path") && e.getAttribute("marker-end") === "url(#arrow)") rep.arrows++;
    // The arrow's tip is at the border of the entity it points to.
    const end = e.getPointAtLength(e.getTotalLength()), to = byName.get(e.dataset.to).getBBox();
    const d = Math.max(to.x - end.x, end.x - to.x - to.width, to.y - end.y, end.y - to.y - to.height, 0);
    const inside = end.x > to.x + 1 && end.x < to.x + to.width - 1 && end.y > to.y + 1 && end.y < to.y + to.height - 1;
    if (d > 4 || inside) rep.wrongEnds.push(e.dataset.from + " → " + e.dataset.to);
  }
  // The graph's separate parts: the largest gap between a part and its
  // nearest other part.
  const part = new Map(nodes.map(n => [n.dataset.name, n.dataset.name]));
  const find = x => part.get(x) === x ? x : find(part.get(x));
  for (const e of edges) part.set(find(e.dataset.from), find(e.dataset.to));
  const bb = new Map();
  for (const n of nodes) {
    const k = find(n.dataset.name), b = r(n.querySelector("rect")), o = bb.get(k);
    bb.set(k, o ? { left: Math.min(o.left, b.left), top: Math.min(o.top, b.top), right: Math.max(o.right, b.right), bottom: Math.max(o.bottom, b.bottom) } : b);
  }
  const parts = [...bb.values()];
  rep.parts = parts.length;
  for (const a of parts) {
    let near = 1e9;
    for (const b of parts) if (a !== b) near = Math.min(near, Math.max(b.left - a.right, a.left - b.right, b.top - a.bottom, a.top - b.bottom, 0));
    if (parts.length > 1) rep.partGap = Math.max(rep.partGap, near);
  }
  return JSON.stringify(rep);
})()`

type pictureFacts struct {
	Nodes, Edges, Rels, Arrows, Parts int
	MinNodeFont, MinRelFont, PartGap  float64
	Outside, Overlaps, WrongEnds      []string
	Note                              string
}

// checkPicture asserts what a person notices in the drawn picture.
func checkPicture(t *testing.T, ctx context.Context, state string, nodes, edges int) pictureFacts {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](pictureReport))
	if err != nil {
		t.Fatalf("%s: measuring the picture: %v", state, err)
	}
	var f pictureFacts
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("%s: %v: %s", state, err, s)
	}
	t.Logf("%s: %s", state, s)
	if f.Nodes != nodes || f.Edges != edges {
		t.Errorf("%s: %d entities and %d relations drawn, want %d and %d", state, f.Nodes, f.Edges, nodes, edges)
	}
	if f.Arrows != f.Edges {
		t.Errorf("%s: %d of %d relations have an arrowhead", state, f.Arrows, f.Edges)
	}
	if len(f.WrongEnds) > 0 {
		t.Errorf("%s: these arrows do not end at the border of the entity they point to: %q", state, f.WrongEnds)
	}
	if f.MinNodeFont < 12 || f.MinRelFont < 11 {
		t.Errorf("%s: labels too small on screen: names %.1f px (want ≥ 12), relations %.1f px (want ≥ 11)", state, f.MinNodeFont, f.MinRelFont)
	}
	if len(f.Outside) > 0 {
		t.Errorf("%s: labels clipped at the picture's edge: %q", state, f.Outside)
	}
	if len(f.Overlaps) > 0 {
		t.Errorf("%s: labels cover each other: %q", state, f.Overlaps)
	}
	return f
}

// shot saves a 1280×900 screenshot of the page in state name under the
// test's artifact directory (go test -artifacts -outputdir DIR keeps them)
// and names it in the log.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	screenshot(t, ctx, filepath.Join(t.ArtifactDir(), name+".png"), 1280, 900)
}

func TestPictureInChromium(t *testing.T) {
	ctx := browser(t)
	srv, _ := serve(t, pictureMemory)
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the whole memory", `document.querySelectorAll("#pic .node").length === 7`)
	f := checkPicture(t, ctx, "the whole memory", 7, 8)
	if f.Parts != 2 || f.PartGap > 60 {
		t.Errorf("the whole memory: %d parts, %.0f px apart; want 2, side by side (at most 60 px apart)", f.Parts, f.PartGap)
	}
	if f.Rels != 8 {
		t.Errorf("the whole memory: %d of 8 relations named; this small picture has room for all", f.Rels)
	}
	waitFor(t, ctx, "counts that agree in number", textHas("#picNote", "7 entities, 8 relations"))
	shot(t, ctx, "picture-whole")

	do(t, ctx, "open Alice", chromedp.Navigate(srv.URL+"#e=Alice"))
	waitFor(t, ctx, "Alice's neighbourhood", `document.querySelector("#ename").textContent === "Alice" && document.querySelectorAll("#pic .node").length === 4`)
	checkPicture(t, ctx, "Alice, depth 1", 4, 5)
	shot(t, ctx, "picture-alice")

	do(t, ctx, "open the Russian project", chromedp.Navigate(srv.URL+"#e="+url.PathEscape("Хранилище")))
	waitFor(t, ctx, "its neighbourhood at depth 2", `document.querySelector("#ename").textContent === "Хранилище" && document.querySelectorAll("#pic .node").length === 2`)
	do(t, ctx, "depth 2", click(`#depthBtns button[data-depth="2"]`))
	waitFor(t, ctx, "depth 2", `document.querySelectorAll("#pic .node").length === 3`)
	checkPicture(t, ctx, "Хранилище, depth 2", 3, 3)
	shot(t, ctx, "picture-russian")

	// A crowded neighbourhood: 60 entities in the narrow column. Names
	// stay readable and apart; relation names that have no room are left
	// out, and the note says so.
	var b strings.Builder
	b.WriteString(`{"type":"entity","name":"Hub","entityType":"t","observations":[]}` + "\n")
	for i := range 80 {
		fmt.Fprintf(&b, `{"type":"entity","name":"Спутник номер %d","entityType":"t","observations":[]}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"relation","from":"Hub","to":"Спутник номер %d","relationType":"связан с"}`+"\n", i)
	}
	crowd, _ := serve(t, b.String())
	do(t, ctx, "open the hub", chromedp.Navigate(crowd.URL+"#e=Hub"))
	waitFor(t, ctx, "the capped neighbourhood", `document.querySelectorAll("#pic .node").length === 60`)
	if f := checkPicture(t, ctx, "a crowded neighbourhood", 60, 59); f.Rels < 59 && !strings.Contains(f.Note, "left out") {
		t.Errorf("a crowded neighbourhood: %d of 59 relation names shown, and the note does not say so: %q", f.Rels, f.Note)
	}
	shot(t, ctx, "picture-crowded")
}

// TestListInChromium pages through a memory of 5,000 entities to the last,
// and checks that counts agree in number ("1 entity").
func TestListInChromium(t *testing.T) {
	ctx := browser(t)
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, `{"type":"entity","name":"Entity %04d","entityType":"item","observations":["number %d"]}`+"\n", i, i)
	}
	srv, _ := serve(t, b.String())
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the first page", textHas("#count", "Entities 1–50 of 5,000")+` && !document.querySelector("#pager").hidden && document.querySelector("#prevPage").disabled`)
	do(t, ctx, "next page", click("#nextPage"))
	waitFor(t, ctx, "the second page", textHas("#count", "Entities 51–100 of 5,000")+` && document.querySelector("#hits .hitname").textContent === "Entity 0051"`)
	do(t, ctx, "last page", click("#lastPage"))
	waitFor(t, ctx, "the last page", textHas("#count", "Entities 4,951–5,000 of 5,000")+
		` && [...document.querySelectorAll("#hits .hitname")].pop().textContent === "Entity 5000" && document.querySelector("#nextPage").disabled`)
	shot(t, ctx, "list-last-page")
	do(t, ctx, "previous page", click("#prevPage"))
	waitFor(t, ctx, "the page before", textHas("#count", "Entities 4,901–4,950 of 5,000"))
	// A search pages too; a new search starts at its first page.
	do(t, ctx, "search", typeInto("#q", "number")...)
	waitFor(t, ctx, "the first page of matches", textHas("#count", "Matches 1–50 of 5,000"))

	one, _ := serve(t, `{"type":"entity","name":"Solo","entityType":"thing","observations":["the only one"]}`+"\n")
	do(t, ctx, "open a memory of one entity", chromedp.Navigate(one.URL))
	waitFor(t, ctx, "one entity, in the singular", `document.querySelector("#count").textContent === "1 entity" && `+
		textHas("#stats", "1 entity and 0 relations in")+` && document.querySelector("#picNote").textContent.startsWith("1 entity, 0 relations.") && document.querySelector("#pager").hidden`)
	do(t, ctx, "search it", typeInto("#q", "only")...)
	waitFor(t, ctx, "one match", `document.querySelector("#count").textContent === "1 match"`)
	shot(t, ctx, "one-entity")
}

const searchMemory = `{"type":"entity","name":"Friedrichshafen","entityType":"city","observations":["A town on Lake Constance with a harbour, a ferry to Romanshorn and a long promenade","Where the company that builds the Zeppelin NT airship has its hangar"]}
{"type":"entity","name":"Hangar-7","entityType":"building","observations":["Glass dome in Salzburg","Shows historic aircraft"]}
{"type":"entity","name":"Lake Constance","entityType":"lake","observations":["Borders Germany, Austria and Switzerland"]}
`

// TestSearchInChromium: a hit shows the observation that matched, with the
// match marked and in view, and a search that no entity contains whole
// says that its hits are only the closest matches.
func TestSearchInChromium(t *testing.T) {
	ctx := browser(t)
	srv, _ := serve(t, searchMemory)
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL))
	waitFor(t, ctx, "the list", textHas("#count", "3 entities"))

	do(t, ctx, "search", typeInto("#q", "zeppelin nt")...)
	waitFor(t, ctx, "the match", `document.querySelector("#count").textContent === "1 match" && document.querySelectorAll("#hits li a").length === 1`)
	// The second observation, not the first, with "Zeppelin NT" marked
	// inside the part of the snippet a person sees.
	visible := `(() => {
	  const s = document.querySelector("#hits .snippet"), m = s?.querySelector("mark");
	  if (!m) return false;
	  const a = s.getBoundingClientRect(), b = m.getBoundingClientRect();
	  return m.textContent === "Zeppelin NT" && !s.textContent.includes("Romanshorn") && b.left >= a.left && b.right <= a.right && b.top >= a.top && b.bottom <= a.bottom;
	})()`
	waitFor(t, ctx, "the matched observation, its match in view", visible)
	shot(t, ctx, "search-match")

	do(t, ctx, "search for what no entity holds whole", typeInto("#q", "zeppelin aircraft")...)
	waitFor(t, ctx, "the closest matches, said to be only that", `document.querySelector("#count").textContent === "No entity contains “zeppelin aircraft”; the closest matches by the words they share with it:" && document.querySelectorAll("#hits li a").length === 2`)
	waitFor(t, ctx, "each with the words it shares marked", `[...document.querySelectorAll("#hits .snippet mark")].map(m => m.textContent.toLowerCase()).sort().join() === "aircraft,zeppelin"`)
	shot(t, ctx, "search-partial")
}

// TestVectorsInChromium: with search by meaning on, the page says how many
// texts have their vector, as stats does; off, it says nothing of it.
func TestVectorsInChromium(t *testing.T) {
	ctx := browser(t)
	path := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, []byte(searchMemory), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filestore.Open(path, filestore.Options{Logf: t.Logf})
	var ready atomic.Int64
	ready.Store(812)
	on := serveOptions(t, store, path, Options{Vectors: func() (int, int) { return int(ready.Load()), 1000 }})
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(on.URL))
	waitFor(t, ctx, "the count of vectors", `document.querySelector("#vectors").textContent === "Vectors 812 of 1,000 texts" && document.querySelector("#vectors").checkVisibility()`)
	shot(t, ctx, "vectors")
	ready.Store(1000)
	do(t, ctx, "open the page again", chromedp.Navigate(on.URL))
	waitFor(t, ctx, "every text with its vector", `document.querySelector("#vectors").textContent === "Vectors 1,000 of 1,000 texts"`)

	off := serveStore(t, store, path)
	do(t, ctx, "open the page of a server without search by meaning", chromedp.Navigate(off.URL))
	waitFor(t, ctx, "the home page, with no word of vectors", textHas("#stats", "3 entities and 0 relations")+` && !document.querySelector("#vectors").checkVisibility() && !/Vectors \d/.test(document.body.innerText)`)
}
