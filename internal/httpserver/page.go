package httpserver

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/access"
)

// The web page of a named memory (docs/design.md §9 and §11): memory NAME's
// page is at /page/NAME/. Not under /mcp/, which is the MCP endpoints' (a
// client or proxy routing /mcp/… expects MCP there, and a name never holds a
// '/'); not at /NAME/, where a memory could shadow /healthz or any path
// added later. One path per memory also scopes each page's cookie to its
// memory.
//
// A page request passes the same gate as an MCP request (admit): the same
// 401 without any credential, the same 403 for every other refusal, and
// the memory is opened only after a grant passed. Its credential is the
// token as "Authorization: Bearer", or the cookie that a first visit to
// /page/NAME/?token=TOKEN sets (access.CookieValue: a digest, never the
// token) before a redirect drops the token from the address. The cookie is
// checked against the tokens file on every request, so a token revoked by
// SIGHUP is refused on its next request and its open live-update streams
// end.

// pagePrefix is where the memories' pages are.
const pagePrefix = "/page/"

// pageCookie names the cookie that stands for the token on one memory's
// page; its Path keeps it to that page.
const pageCookie = "mcp_memory_page"

// isPagePath reports whether r is for a memory's page: every path under
// /page, however escaped, so that ServeMux never cleans or redirects one
// and every refusal goes through admit.
func isPagePath(r *http.Request) bool {
	return r.URL.Path == "/page" || strings.HasPrefix(r.URL.Path, pagePrefix) || strings.HasPrefix(r.URL.EscapedPath(), pagePrefix)
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	name, below := "", false
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), pagePrefix); ok {
		name, _, below = strings.Cut(rest, "/") // still escaped: "%2e%2e" is no valid name
	}
	check, queryToken := s.pageCheck(r)
	level, ok := admit(w, name, check)
	if !ok {
		return
	}
	home := pagePrefix + name + "/"
	if queryToken {
		// A first visit: the cookie, then the same address without the
		// token, so that it stays out of the history and of bookmarks.
		http.SetCookie(w, &http.Cookie{Name: pageCookie, Value: access.CookieValue(r.URL.Query().Get("token")), Path: pagePrefix + name,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		q := r.URL.Query()
		q.Del("token")
		target := home
		if below {
			target = r.URL.EscapedPath()
		}
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			// A link on another site (a team's chat, a wiki): a browser
			// sends no SameSite=Strict cookie anywhere along a redirect
			// chain that another site started, so a 303 would land on
			// 401. A page of ours that moves on by itself starts a
			// navigation of this site, which carries the cookie.
			moveOn(w, target)
			return
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	if !below { // /page/NAME: the page's relative URLs need the slash
		http.Redirect(w, r, home, http.StatusFound)
		return
	}
	s.serveGranted(w, r, name, level, check, func(ep *endpoint) http.Handler {
		if ep.page == nil {
			return http.NotFoundHandler()
		}
		return http.StripPrefix(pagePrefix+name, ep.page)
	})
}

// moveOn answers with a page that goes on to target (a path of this site)
// at once, with no script (the pages' Content-Security-Policy allows none
// inline) and no Referer carrying the token.
func moveOn(w http.ResponseWriter, target string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'")
	u := html.EscapeString(target)
	fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=%s"><title>Memory</title><a href="%s">Open the memory's page</a>`+"\n", u, u)
}

// pageCheck returns the check of the credential a page request carries,
// nil when it carries none: the Authorization header, else on a GET the
// token in ?token= (queryToken: a first visit), else the page's cookie.
func (s *Server) pageCheck(r *http.Request) (check checkFunc, queryToken bool) {
	if header := r.Header.Get("Authorization"); header != "" {
		return s.bearerCheck(header), false
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("token") {
		return s.bearerCheck("Bearer " + r.URL.Query().Get("token")), true
	}
	if c, err := r.Cookie(pageCookie); err == nil {
		return func(memory string) access.Level { return s.cfg.Tokens.CheckCookie(c.Value, memory) }, false
	}
	return nil, false
}

// MayEdit tells the page of a named memory (ui.Options.MayEdit) whether
// the request it serves may change the memory: nil for a write grant, an
// error saying so for a read grant. A request that reached no page through
// the gate has no grant, and may not.
func MayEdit(r *http.Request) error {
	g, ok := r.Context().Value(grantKey{}).(grant)
	switch {
	case !ok:
		return errors.New("this request carries no grant for this memory")
	case g.level < access.Write:
		return fmt.Errorf("this token may only read memory %s", g.memory)
	}
	return nil
}
