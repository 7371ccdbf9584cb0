package httpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

// pagePath is memory's page, or a path below it.
func pagePath(memory, below string) string { return "/page/" + memory + "/" + below }

// pageEdit is the page's request to create the entity name, as the page
// sends it, with the credential given as header name, value pairs.
func pageEdit(t *testing.T, ns *namedServer, memory, name string, credential ...string) (*http.Response, string) {
	t.Helper()
	body := fmt.Sprintf(`{"op":"createEntity","entity":%q,"entityType":"test"}`, name)
	header := append([]string{"Content-Type", "application/json", "Origin", ns.base, "Sec-Fetch-Site", "same-origin"}, credential...)
	return rawRequest(t, ns.addr, http.MethodPost, pagePath(memory, "api/edit"), body, header...)
}

// apiError is the error a page API call answered with.
func apiError(t *testing.T, body string) string {
	t.Helper()
	var v struct{ Error string }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not a JSON answer: %q", body)
	}
	return v.Error
}

// firstVisit opens memory's page with ?token= and returns the cookie the
// answer sets, checking the redirect that drops the token.
func firstVisit(t *testing.T, ns *namedServer, memory, token string) *http.Cookie {
	t.Helper()
	resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath(memory, "?token="+token), "")
	if want := pagePath(memory, "") + "#key=" + access.PageKey(token); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		t.Fatalf("first visit: %d to %q, want 303 to %s: %s", resp.StatusCode, resp.Header.Get("Location"), want, body)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("first visit set %d cookies", len(cookies))
	}
	c := cookies[0]
	if c.Path != "/page/"+memory || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure {
		t.Errorf("cookie %s: want Path=/page/%s, HttpOnly, SameSite=Strict, not Secure without TLS", c, memory)
	}
	if strings.Contains(c.Value, token) || c.Value != access.CookieValue(token) {
		t.Errorf("the cookie holds %q, want the token's digest", c.Value)
	}
	return c
}

// TestNamedPagesGrants tries every token on every memory's page, with the
// token as a header and as the cookie a first visit sets: a grant sees the
// page and searches; a write grant edits, a read grant's edit is refused
// and changes nothing; no grant gets the 403 of /mcp/NAME.
func TestNamedPagesGrants(t *testing.T) {
	ns := startNamed(t, teamTokens)
	_, forbidden := rawStatus(t, ns.addr, "/mcp/nosuchmemory", "Bearer "+tokAlpha)
	memories := []string{"default", "alpha", "beta", "gamma"}
	grants := map[string]map[string]access.Level{
		tokAlpha: {"alpha": access.Write},
		tokRead:  {"default": access.Read, "alpha": access.Read, "beta": access.Read, "gamma": access.Read},
		tokTwo:   {"alpha": access.Write, "beta": access.Write},
		tokNone:  {},
	}
	for _, token := range []string{tokAlpha, tokRead, tokTwo, tokNone} {
		for _, memory := range memories {
			level := grants[token][memory]
			for _, via := range []string{"header", "cookie"} {
				t.Run(fmt.Sprintf("%s/%s/%s", token[:12], memory, via), func(t *testing.T) {
					before := ns.files(t)
					if level == access.None {
						resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath(memory, "?token="+token), "")
						if resp.StatusCode != http.StatusForbidden || body != forbidden || len(resp.Cookies()) != 0 {
							t.Errorf("first visit: %d %q %v, want 403 %q and no cookie", resp.StatusCode, body, resp.Cookies(), forbidden)
						}
						for _, credential := range [][]string{{"Authorization", "Bearer " + token}, {"Cookie", "mcp_memory_page=" + access.CookieValue(token)}} {
							for _, path := range []string{pagePath(memory, ""), pagePath(memory, "api/search?q=x"), pagePath(memory, "app.js")} {
								if resp, body := rawRequest(t, ns.addr, http.MethodGet, path, "", credential...); resp.StatusCode != http.StatusForbidden || body != forbidden {
									t.Errorf("GET %s with %s: %d %q, want 403 %q", path, credential[0], resp.StatusCode, body, forbidden)
								}
							}
							if resp, body := pageEdit(t, ns, memory, "refused", credential...); resp.StatusCode != http.StatusForbidden || body != forbidden {
								t.Errorf("an edit with %s: %d %q, want 403 %q", credential[0], resp.StatusCode, body, forbidden)
							}
						}
						if after := ns.files(t); !slices.Equal(before, after) {
							t.Errorf("files %v became %v", before, after)
						}
						return
					}
					credential := []string{"Authorization", "Bearer " + token}
					if via == "cookie" {
						c := firstVisit(t, ns, memory, token)
						credential = []string{"Cookie", c.Name + "=" + c.Value, "X-Memory-Page-Key", access.PageKey(token)}
					}
					resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath(memory, ""), "", credential...)
					if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<script src="app.js"`) {
						t.Fatalf("the page: %d %.100q", resp.StatusCode, body)
					}
					resp, body = rawRequest(t, ns.addr, http.MethodGet, pagePath(memory, "api/stats"), "", credential...)
					var stats struct {
						Where    string
						ReadOnly string
					}
					if err := json.Unmarshal([]byte(body), &stats); resp.StatusCode != http.StatusOK || err != nil {
						t.Fatalf("stats: %d %q", resp.StatusCode, body)
					}
					wantReadOnly := ""
					if level == access.Read {
						wantReadOnly = "this token may only read memory " + memory
					}
					if stats.Where != "memory "+memory || stats.ReadOnly != wantReadOnly {
						t.Errorf("stats say %q, read only %q; want memory %s, %q", stats.Where, stats.ReadOnly, memory, wantReadOnly)
					}
					name := fmt.Sprintf("%s-%s-%s", token[:12], memory, via)
					fileBefore, _ := os.ReadFile(ns.memoryFile(memory))
					resp, body = pageEdit(t, ns, memory, name, credential...)
					if level == access.Write {
						if resp.StatusCode != http.StatusOK {
							t.Fatalf("an edit: %d %s", resp.StatusCode, body)
						}
						if !entityNames(t, ns.memoryFile(memory))[name] {
							t.Errorf("%s is not in %s", name, memory)
						}
						resp, body = rawRequest(t, ns.addr, http.MethodGet, pagePath(memory, "api/search?q="+name), "", credential...)
						if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"name":"`+name+`"`) {
							t.Errorf("searching for the edit: %d %s", resp.StatusCode, body)
						}
					} else {
						if resp.StatusCode != http.StatusForbidden || apiError(t, body) != wantReadOnly {
							t.Errorf("a read grant's edit: %d %s, want 403 %q", resp.StatusCode, body, wantReadOnly)
						}
						if fileAfter, _ := os.ReadFile(ns.memoryFile(memory)); string(fileBefore) != string(fileAfter) {
							t.Errorf("a refused edit changed %s", memory)
						}
					}
				})
			}
		}
	}
	// What the writers wrote is each in its own memory only.
	for _, memory := range memories {
		if _, err := os.Stat(ns.memoryFile(memory)); err != nil {
			continue
		}
		for name := range entityNames(t, ns.memoryFile(memory)) {
			if !strings.Contains(name, "-"+memory+"-") {
				t.Errorf("%s holds %s, written to another memory", memory, name)
			}
		}
	}
	// The reader's page of a memory nobody wrote created nothing.
	if _, err := os.Stat(ns.memoryFile("gamma")); !os.IsNotExist(err) {
		t.Errorf("gamma's file exists after reads only: %v", err)
	}
}

// TestNamedPagesRefuseUniformly: names that are no memory's, traversal
// attempts, bad tokens and cookies on the pages: the 403 of /mcp/NAME,
// byte for byte, and no file created; without any credential the 401 of
// /mcp/NAME everywhere.
func TestNamedPagesRefuseUniformly(t *testing.T) {
	ns := startNamed(t, teamTokens)
	_, forbidden := rawStatus(t, ns.addr, "/mcp/gamma", "Bearer "+tokAlpha)
	_, unauthorized := rawStatus(t, ns.addr, "/mcp/alpha", "")
	names := []string{
		"..", "%2e%2e", "%2E%2E", "%2e%2e%2f%2e%2e", "..%2f..%2fetc", "a%2fb", "", "%00", "alpha%00",
		"Alpha", "ALPHA", "con", "nul.jsonl", "com1", ".alpha", "alpha.", "%61lpha", "~", "%7e",
		strings.Repeat("a", 65), "unknown",
	}
	type attempt struct{ name, path string }
	var attempts []attempt
	for _, name := range names {
		for _, below := range []string{"", "/", "/api/stats", "/../alpha/", "/%2e%2e/%2e%2e/tokens"} {
			attempts = append(attempts, attempt{name, "/page/" + name + below})
		}
	}
	for _, path := range []string{"/page", "/page//alpha/", "/page/../page/alpha/", "/page/%2e%2e/page/alpha/"} {
		attempts = append(attempts, attempt{"", path})
	}
	credentials := map[string][]string{
		"the reader's token":        {"Authorization", "Bearer " + tokRead},
		"a token granted nothing":   {"Authorization", "Bearer " + tokNone},
		"a near miss":               {"Authorization", "Bearer " + tokRead + "x"},
		"an empty bearer":           {"Authorization", "Bearer"},
		"basic":                     {"Authorization", "Basic " + tokRead},
		"the reader's cookie":       {"Cookie", "mcp_memory_page=" + access.CookieValue(tokRead)},
		"a cookie granted nothing":  {"Cookie", "mcp_memory_page=" + access.CookieValue(tokNone)},
		"the token as the cookie":   {"Cookie", "mcp_memory_page=" + tokRead},
		"an empty cookie":           {"Cookie", "mcp_memory_page="},
		"the reader's ?token=":      nil,
		"a ?token= granted nothing": {"?token", tokNone},
	}
	reader := map[string]bool{"the reader's token": true, "the reader's cookie": true, "the reader's ?token=": true}
	for _, a := range attempts {
		for what, credential := range credentials {
			if a.name == "unknown" && reader[what] {
				continue // a valid name: the reader reaches it
			}
			target := a.path
			switch {
			case credential == nil:
				target, credential = target+"?token="+tokRead, []string{}
			case credential[0] == "?token":
				target, credential = target+"?token="+credential[1], []string{}
			}
			resp, body := rawRequest(t, ns.addr, http.MethodGet, target, "", credential...)
			if resp.StatusCode != http.StatusForbidden || body != forbidden || len(resp.Cookies()) != 0 {
				t.Errorf("GET %s with %s: %d %q, want 403 %q", target, what, resp.StatusCode, body, forbidden)
			}
		}
		resp, body := rawRequest(t, ns.addr, http.MethodGet, a.path, "")
		if resp.StatusCode != http.StatusUnauthorized || body != unauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without a token: %d %q, want 401 %q", a.path, resp.StatusCode, body, unauthorized)
		}
	}
	// A cookie for one memory does not reach another (a cookie is scoped
	// to its page, and the token behind it is checked for the memory).
	alpha := firstVisit(t, ns, "alpha", tokAlpha)
	if resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath("beta", "api/stats"), "", "Cookie", alpha.Name+"="+alpha.Value); resp.StatusCode != http.StatusForbidden || body != forbidden {
		t.Errorf("alpha's cookie on beta: %d %q", resp.StatusCode, body)
	}
	if files := ns.files(t); !slices.Equal(files, []string{"tokens"}) {
		t.Errorf("files after refused requests: %v, want only the tokens file", files)
	}
}

// TestNamedPageCrossOriginEdit: the edit API keeps its same-origin checks
// for a write grant: another origin's request changes nothing.
func TestNamedPageCrossOriginEdit(t *testing.T) {
	ns := startNamed(t, teamTokens)
	credential := []string{"Authorization", "Bearer " + tokTwo}
	body := `{"op":"createEntity","entity":"forged","entityType":"test"}`
	for what, header := range map[string][]string{
		"Origin":         {"Content-Type", "application/json", "Origin", "http://evil.example"},
		"Sec-Fetch-Site": {"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"},
		"form":           {"Content-Type", "text/plain"},
	} {
		resp, _ := rawRequest(t, ns.addr, http.MethodPost, pagePath("beta", "api/edit"), body, append(slices.Clone(credential), header...)...)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("an edit with a foreign %s: %d, want 403", what, resp.StatusCode)
		}
	}
	if resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath("beta", "api/edit"), "", credential...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an edit by GET: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Stat(ns.memoryFile("beta")); !os.IsNotExist(err) {
		t.Errorf("beta's file exists after refused edits only: %v", err)
	}
}

// TestNamedPageRedirects: /page/NAME goes to /page/NAME/ once granted; a
// first visit below the page keeps its path and other parameters; a first
// visit from another site's link moves on without a redirect.
func TestNamedPageRedirects(t *testing.T) {
	ns := startNamed(t, teamTokens)
	resp, _ := rawRequest(t, ns.addr, http.MethodGet, "/page/alpha", "", "Authorization", "Bearer "+tokAlpha)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/page/alpha/" {
		t.Errorf("/page/alpha: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = rawRequest(t, ns.addr, http.MethodGet, "/page/alpha?token="+tokAlpha, "")
	key := "#key=" + access.PageKey(tokAlpha)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/page/alpha/"+key || len(resp.Cookies()) != 1 {
		t.Errorf("/page/alpha?token=: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = rawRequest(t, ns.addr, http.MethodGet, "/page/alpha/api/search?q=x&token="+tokAlpha, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/page/alpha/api/search?q=x"+key {
		t.Errorf("a first visit below the page: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// From a link on another site: a page that moves on by itself (a
	// redirect would carry no SameSite=Strict cookie), naming no token.
	resp, body := rawRequest(t, ns.addr, http.MethodGet, "/page/alpha/?token="+tokAlpha, "", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate")
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 || resp.Cookies()[0].Value != access.CookieValue(tokAlpha) ||
		!strings.Contains(body, `<meta http-equiv="refresh" content="0; url=/page/alpha/`+key+`">`) || strings.Contains(body, tokAlpha) || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("a first visit from another site: %d %v %q", resp.StatusCode, resp.Cookies(), body)
	}
	if resp, body := rawRequest(t, ns.addr, http.MethodGet, "/page/alpha/?token="+tokNone, "", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("an ungranted first visit from another site: %d %q", resp.StatusCode, body)
	}
}

// TestNamedPageRevoked: a token revoked by a reload is refused on its next
// page request, by header and by cookie, and the live-update streams of
// its pages end; another token's stream goes on.
func TestNamedPageRevoked(t *testing.T) {
	ns := startNamed(t, teamTokens)
	cookie := firstVisit(t, ns, "beta", tokRead)
	events := func(credential ...string) <-chan struct{} {
		t.Helper()
		_, ended := openPageEvents(t, ns, "beta", credential...)
		return ended
	}
	revoked := events("Cookie", cookie.Name+"="+cookie.Value)
	revokedBearer := events("Authorization", "Bearer "+tokRead)
	kept := events("Authorization", "Bearer "+tokTwo)
	if err := os.WriteFile(ns.tokens, []byte(strings.Replace(teamTokens, tokRead+" * read\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ns.hs.ReloadTokens(); err != nil {
		t.Fatal(err)
	}
	for what, ended := range map[string]<-chan struct{}{"by cookie": revoked, "by header": revokedBearer} {
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Errorf("the revoked token's page stream (%s) is still open", what)
		}
	}
	select {
	case <-kept:
		t.Error("the stream of a token still granted ended")
	case <-time.After(300 * time.Millisecond):
	}
	_, forbidden := rawStatus(t, ns.addr, "/mcp/gamma", "Bearer "+tokAlpha)
	for _, credential := range [][]string{{"Cookie", cookie.Name + "=" + cookie.Value}, {"Authorization", "Bearer " + tokRead}} {
		if resp, body := rawRequest(t, ns.addr, http.MethodGet, pagePath("beta", "api/stats"), "", credential...); resp.StatusCode != http.StatusForbidden || body != forbidden {
			t.Errorf("a revoked token's %s: %d %q", credential[0], resp.StatusCode, body)
		}
	}
	if resp, _ := rawRequest(t, ns.addr, http.MethodGet, pagePath("beta", "?token="+tokRead), ""); resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("a revoked token's first visit: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}

// openPageEvents opens memory's page's live-update stream with the
// credential given as a header name and value, and returns a channel that
// receives each change announced and one closed when the stream ends.
func openPageEvents(t *testing.T, ns *namedServer, memory string, credential ...string) (changes <-chan struct{}, ended <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ns.base+pagePath(memory, "api/events"), nil)
	req.Header.Set(credential[0], credential[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the page's events: %d", resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() || lines.Text() != ": connected" {
		t.Fatalf("the page's events: %q", lines.Text())
	}
	changed, done := make(chan struct{}, 100), make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		for lines.Scan() {
			if lines.Text() == "event: change" {
				changed <- struct{}{}
			}
		}
	}()
	return changed, done
}

// pageEvents is the changes announced on memory's page opened with token.
func pageEvents(t *testing.T, ns *namedServer, memory, token string) <-chan struct{} {
	t.Helper()
	changes, _ := openPageEvents(t, ns, memory, "Authorization", "Bearer "+token)
	return changes
}

// TestPageCookieAloneCannotEdit: a browser sends a host's cookies to every
// port of it, so another service on the same machine may hold a page's
// cookie and replay it. An edit needs more: the page's Origin and the edit
// key that only the first visit's redirect gave (in its fragment), which
// the cookie does not carry; or the token itself. Both pages, the one
// memory's at / and a named memory's, refuse every replay and change
// nothing, and still take the page's own edits; what the memory holds is
// read with the key too.
func TestPageCookieAloneCannotEdit(t *testing.T) {
	const token = "page-token-0123456789abcdef"
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	page := ui.NewHandler(filestore.Open(file, filestore.Options{}), file, ui.Options{MayEdit: httpserver.MayEdit, Logf: t.Logf})
	one := startPaged(t, httpserver.Config{Grants: tokenGrants(t, token)}, page, file)
	ns := startNamed(t, teamTokens)
	for _, tc := range []struct{ name, base, login, edit, file, token string }{
		{"one memory", one.base, "/?token=" + token, "/api/edit", file, token},
		{"named memory", ns.base, pagePath("beta", "?token="+tokTwo), pagePath("beta", "api/edit"), ns.memoryFile("beta"), tokTwo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := strings.TrimPrefix(tc.base, "http://")
			resp, _ := rawRequest(t, addr, http.MethodGet, tc.login, "")
			_, key, _ := strings.Cut(resp.Header.Get("Location"), "#key=")
			if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || key != access.PageKey(tc.token) {
				t.Fatalf("first visit: %d to %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), resp.Cookies())
			}
			cookie := []string{"Cookie", resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value}
			withKey := []string{"X-Memory-Page-Key", key}
			origin := []string{"Origin", tc.base}
			edit := func(name string, header ...[]string) (*http.Response, string) {
				h := []string{"Content-Type", "application/json"}
				for _, kv := range header {
					h = append(h, kv...)
				}
				return rawRequest(t, addr, http.MethodPost, tc.edit, `{"op":"createEntity","entity":"`+name+`","entityType":"test"}`, h...)
			}
			before, _ := os.ReadFile(tc.file)
			for what, header := range map[string][][]string{
				"the cookie alone":                            {cookie},
				"the cookie and the key, with no Origin":      {cookie, withKey},
				"the cookie and the page's Origin, no key":    {cookie, origin},
				"the cookie, the Origin and a made-up key":    {cookie, origin, {"X-Memory-Page-Key", access.PageKey("not-the-token-0123456789")}},
				"the cookie and the key from another port":    {cookie, withKey, {"Origin", "http://127.0.0.1:1"}},
				"the cookie and the key, another port's page": {cookie, withKey, origin, {"Sec-Fetch-Site", "same-site"}},
			} {
				if resp, body := edit("replayed", header...); resp.StatusCode != http.StatusForbidden {
					t.Errorf("an edit with %s: %d %s, want 403", what, resp.StatusCode, body)
				}
			}
			if after, _ := os.ReadFile(tc.file); string(after) != string(before) {
				t.Errorf("refused edits changed the memory:\n%s", after)
			}
			// The page's own edit: cookie, Origin and key.
			if resp, body := edit("by-the-page", cookie, withKey, origin, []string{"Sec-Fetch-Site", "same-origin"}); resp.StatusCode != http.StatusOK {
				t.Fatalf("the page's own edit: %d %s", resp.StatusCode, body)
			}
			// A script with the token itself needs neither.
			if resp, body := edit("by-a-script", []string{"Authorization", "Bearer " + tc.token}); resp.StatusCode != http.StatusOK {
				t.Fatalf("an edit with the bearer token: %d %s", resp.StatusCode, body)
			}
			names := entityNames(t, tc.file)
			if !names["by-the-page"] || !names["by-a-script"] || names["replayed"] {
				t.Errorf("the memory holds %v", names)
			}
			// What the memory holds is not for the cookie alone either: the
			// page's API answers it with the key; the page's files, which
			// hold nothing of the memory, need none.
			api := strings.TrimSuffix(tc.edit, "edit")
			for _, path := range []string{"stats", "search?q=Alice", "entity?name=by-the-page", "picture"} {
				resp, body := rawRequest(t, addr, http.MethodGet, api+path, "", cookie...)
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(apiError(t, body), "?token=") {
					t.Errorf("GET %s with the cookie alone: %d %s, want 403 saying to open ?token= again", path, resp.StatusCode, body)
				}
				if resp, body := rawRequest(t, addr, http.MethodGet, api+path, "", append(slices.Clone(cookie), withKey...)...); resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s with the cookie and the key: %d %s", path, resp.StatusCode, body)
				}
			}
			page := strings.TrimSuffix(api, "api/")
			for _, path := range []string{"", "app.js"} {
				if resp, body := rawRequest(t, addr, http.MethodGet, page+path, "", cookie...); resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s with the cookie: %d %.80q", page+path, resp.StatusCode, body)
				}
			}
		})
	}
}
