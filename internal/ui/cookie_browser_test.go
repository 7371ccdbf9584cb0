package ui

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/server"
	"github.com/kgmemory/mcp-server-memory/internal/testserver"
)

// serveBehindToken serves a memory file (seeded with memory) and its page
// at / the way `mcp-server-memory --http` with a token does, and returns
// the base URL and the file.
func serveBehindToken(t *testing.T, memory, token string) (base, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(path, []byte(memory), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filestore.Open(path, filestore.Options{Logf: t.Logf})
	mem := server.New(store, server.Options{Version: "test", Logf: t.Logf, HidePaths: []string{path}})
	page := NewHandler(store, "memory file", Options{MayEdit: httpserver.MayEdit, Logf: t.Logf, HidePaths: []string{path}})
	grants, err := httpserver.SingleGrants(token)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := httpserver.New(httpserver.Config{Addr: "127.0.0.1:0", Grants: grants, Memories: httpserver.One(httpserver.Memory{Server: mem, Page: page}), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := testserver.Serve(t, hs)
	return "http://" + addr, path
}

// TestCookieOnAnotherPortCannotEdit: cookies have no port, so Chromium
// sends the page's cookie to any other service on the same host. That
// service gets the cookie, but neither a replay of the cookie nor a script
// of its page can edit the memory, and the replay reads nothing of it; the
// page itself still edits, also when opened again later without the
// token.
func TestCookieOnAnotherPortCannotEdit(t *testing.T) {
	const token = "cookie-token-0123456789abcdef"
	ctx := browser(t)
	base, path := serveBehindToken(t, seedMemory, token)

	do(t, ctx, "open the page with the token", chromedp.Navigate(base+"/?token="+token))
	waitFor(t, ctx, "the list of entities", textHas("#count", "5 entities"))
	waitFor(t, ctx, "the address without the token or the key", `location.href === `+js(base+"/"))
	do(t, ctx, "open Alice", chromedp.Navigate(base+"/#e=Alice"))
	waitFor(t, ctx, "Alice's page", `document.querySelector("#ename").textContent === "Alice"`)
	do(t, ctx, "add an observation", append(typeInto("#addObs input", "Edited on the page"), click("#addObs button"))...)
	waitFor(t, ctx, "the new observation", textHas("#obs", "Edited on the page"))
	if !fileHas(t, path, "Edited on the page") {
		t.Fatal("the page's edit is not in the memory file")
	}

	// Another service on another port of the same host: it records the
	// cookies it is sent, and its page tries to edit the memory.
	var (
		mu     sync.Mutex
		cookie string
	)
	evil := fmt.Sprintf(`<!doctype html><title>evil</title><script>
const target = %s + "/api/edit";
const body = JSON.stringify({op: "deleteEntity", entity: "Alice"});
Promise.allSettled([
  fetch(target, {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body}),
  fetch(target, {method: "POST", credentials: "include", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body}),
]).then(rs => { document.title = "done " + rs.map(r => r.status).join(","); });
</script>`, js(base))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if c := r.Header.Get("Cookie"); c != "" {
			cookie = c
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(evil))
	})}
	go other.Serve(ln)
	defer other.Close()
	before, _ := os.ReadFile(path)
	do(t, ctx, "open the other port's page", chromedp.Navigate("http://"+ln.Addr().String()+"/"))
	waitFor(t, ctx, "its requests to finish", `document.title.startsWith("done")`)
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatalf("a page on another port changed the memory:\n%s", after)
	}

	// The other service replays the cookie it was sent, as it is and
	// with the page's Origin forged: refused, as the cookie alone proves
	// nothing.
	mu.Lock()
	stolen := cookie
	mu.Unlock()
	if !strings.Contains(stolen, "mcp_memory_page=") {
		t.Logf("the browser sent the other port no page cookie (%q); replaying a made one", stolen)
		stolen = "mcp_memory_page=" + pageCookieOf(t, base, token)
	}
	for _, origin := range []string{"", base} {
		req, _ := http.NewRequest("POST", base+"/api/edit", strings.NewReader(`{"op":"deleteEntity","entity":"Alice"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", stolen)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a replay of the cookie with Origin %q: %d, want 403", origin, resp.StatusCode)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatalf("a replayed cookie changed the memory:\n%s", after)
	}
	// Nor does it read what the memory holds.
	req, _ := http.NewRequest("GET", base+"/api/entity?name=Alice", nil)
	req.Header.Set("Cookie", stolen)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a replay of the cookie reading Alice: %d, want 403", resp.StatusCode)
	}

	// The page, opened again without the token, still edits: it kept its key.
	do(t, ctx, "open the page again", chromedp.Navigate(base+"/#e=Alice"))
	waitFor(t, ctx, "Alice's page", `document.querySelector("#ename").textContent === "Alice" && document.querySelector("#mode").hidden`)
	do(t, ctx, "add another observation", append(typeInto("#addObs input", "Edited again"), click("#addObs button"))...)
	waitFor(t, ctx, "the second observation", textHas("#obs", "Edited again"))
	if !fileHas(t, path, "Edited again") {
		t.Error("the page's second edit is not in the memory file")
	}
}

// pageCookieOf logs in with token and returns the page cookie's value.
func pageCookieOf(t *testing.T, base, token string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(base + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		return c.Value
	}
	t.Fatal("no cookie")
	return ""
}
