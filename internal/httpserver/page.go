package httpserver

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/access"
)

// The web pages: the page of the one memory at /, and memory NAME's page
// at /page/NAME/ with named memories. Not under /mcp/, which is the MCP
// endpoints' (a client or proxy routing /mcp/… expects MCP there, and a
// name never holds a '/'); not at /NAME/, where a memory could shadow
// /healthz or any path added later. One path per memory also scopes each
// page's cookie to its memory.
//
// Every page logs in the same way, here, and passes the same gate as an
// MCP request (admit, gate.go): a named memory's page is refused as its
// MCP endpoint is, and the memory is opened only after a grant passed; the
// page at / is behind the server's one grant (access.Single), or open when
// the server has no token. The credential is
// the token as "Authorization: Bearer", or the cookie that a first visit
// to the page with ?token=TOKEN sets (access.CookieValue: a digest, never
// the token) before a redirect drops the token from the address. The
// cookie is checked against the grants on every request, so a token
// revoked by SIGHUP is refused on its next request and its open
// live-update streams end.
//
// A cookie is no proof that a request comes from the page: a browser sends
// a host's cookies to every port of it, so another service on the same
// machine receives the cookie and can replay it. An edit therefore needs
// more (MayEdit): the bearer token itself, or an Origin header and the
// page's key (access.PageKey) in PageKeyHeader; and what the page's
// API answers of the memory's content needs the key too
// (refuseWithoutKey). The redirect of the first visit hands the key to the
// page in the address's fragment, which no server is sent; the page's
// script keeps it in its origin's storage, which scripts of other ports
// cannot read, and sends it with each request.

// pagePrefix is where the memories' pages are.
const pagePrefix = "/page/"

// pageCookie names the cookie that stands for the token on a page; its
// Path keeps it to that page.
const pageCookie = "mcp_memory_page"

// PageKeyHeader carries the page's key (access.PageKey) on the requests
// of the page's own script (internal/ui's app.js sends it).
const PageKeyHeader = "X-Memory-Page-Key"

// loginKey carries, beside the grant, how a page request proved itself
// (a login), for MayEdit.
type loginKey struct{}

type login struct {
	bearer  bool         // the token itself, in Authorization
	open    bool         // no token to prove: a loopback server without one
	pageKey access.Level // what the request's key grants on the memory
	label   string       // the tokens file's label of the token or key, or ""
}

// isPagePath reports whether r is for a memory's page: every path under
// /page, however escaped, so that ServeMux never cleans or redirects one
// and every refusal goes through admit.
func isPagePath(r *http.Request) bool {
	return r.URL.Path == "/page" || strings.HasPrefix(r.URL.Path, pagePrefix) || strings.HasPrefix(r.URL.EscapedPath(), pagePrefix)
}

// servePage serves a request for a memory's page (pageMemory names it):
// /page/NAME/... is memory NAME's; a server of one memory serves its page
// at every path that is not another's (/mcp, /healthz).
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	name, prefix, below := s.pageMemory(r)
	c := s.credential(r, true)
	level, ok := s.admit(w, r, name, c, true)
	if !ok {
		return
	}
	home := prefix + "/"
	if c.queryToken {
		target := home
		if below {
			target = r.URL.EscapedPath()
		}
		cookiePath := prefix
		if cookiePath == "" {
			cookiePath = "/"
		}
		logIn(w, r, cookiePath, target)
		return
	}
	if !below { // /page/NAME: the page's relative URLs need the slash
		http.Redirect(w, r, home, http.StatusFound)
		return
	}
	l := login{bearer: c.bearer, open: c.open, label: c.label}
	if !c.open {
		g := s.cfg.Grants.Grants()
		key := r.Header.Get(PageKeyHeader)
		l.pageKey = g.CheckPageKey(key, name)
		if !c.bearer && l.pageKey != access.None {
			l.label = g.PageKeyLabel(key)
		}
	}
	if refuseWithoutKey(w, strings.TrimPrefix(r.URL.Path, prefix), l) {
		return
	}
	if strings.TrimPrefix(r.URL.Path, prefix) == "/api/events" {
		done, status, refusal := s.streamCaps.open(r)
		if done == nil {
			w.Header().Set("Retry-After", "60")
			writeFixed(w, status, refusal+"\n")
			return
		}
		defer done()
	}
	r = r.WithContext(context.WithValue(r.Context(), loginKey{}, l))
	s.serveGranted(w, r, name, level, c.check, func(ep *endpoint) http.Handler {
		if ep.page == nil {
			return http.NotFoundHandler()
		}
		return http.StripPrefix(prefix, ep.page)
	})
}

// refuseWithoutKey answers 403 and returns true when r, logged in by the
// cookie alone, asks the page's API (path, below the page) for what the
// memory holds: the cookie may have reached another service on this host,
// and the page's own script sends its key. The page's files and its
// live-update stream (which says only that something changed) need none.
func refuseWithoutKey(w http.ResponseWriter, path string, l login) bool {
	if l.bearer || l.open || l.pageKey >= access.Read || !strings.HasPrefix(path, "/api/") || path == "/api/events" {
		return false
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, `{"error":"This page has no key for this memory: open it again with ?token=YOUR_TOKEN (that visit gives the page its key)."}`+"\n")
	return true
}

// logIn answers a first visit, which carries the token in ?token=: the
// cookie (for cookiePath), then target (a path of this site) without the
// token, and with the page's key in the fragment, so that the token
// stays out of the history and of bookmarks and the key reaches only the
// page's script.
func logIn(w http.ResponseWriter, r *http.Request, cookiePath, target string) {
	q := r.URL.Query()
	token := q.Get("token")
	http.SetCookie(w, &http.Cookie{Name: pageCookie, Value: access.CookieValue(token), Path: cookiePath,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	q.Del("token")
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	target += "#key=" + access.PageKey(token)
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

// Client tells a memory's web page (ui.Options.Client) who makes the
// request's edits, as the history records them: the tokens file's label
// of the token that logged the request in (the bearer token, or the token
// whose key the page sends), or "".
func Client(r *http.Request) string {
	l, _ := r.Context().Value(loginKey{}).(login)
	return l.label
}

// MayEdit tells a memory's web page (ui.Options.MayEdit) whether the
// request it serves may change the memory: nil for a write grant that the
// request proves as the page's own (see the comment at the top of this
// file), an error saying why not otherwise. A request that reached no page
// through the gate has no grant, and may not.
func MayEdit(r *http.Request) error {
	g, ok := r.Context().Value(grantKey{}).(grant)
	switch {
	case !ok:
		return errors.New("this request carries no grant for this memory")
	case g.level < access.Write:
		return fmt.Errorf("this token may only read memory %s", g.memory)
	}
	l, _ := r.Context().Value(loginKey{}).(login)
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead
	switch {
	case l.bearer:
		return nil
	case changes && r.Header.Get("Origin") == "":
		return errors.New("an edit without an Origin header must carry the token (Authorization: Bearer TOKEN)")
	case l.open:
		return nil
	case l.pageKey < access.Write:
		return errors.New("this page has no edit key: open it again with ?token=YOUR_TOKEN to edit (that visit gives the page its key)")
	}
	return nil
}
