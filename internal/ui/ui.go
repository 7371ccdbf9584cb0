// Package ui is the web page people use to see and correct their memory
// (docs/design.md §9): search as you type, an entity's page with its
// relations both ways and when each fact was learned, a picture of its
// neighbourhood, the writes per day, and edits that run all or nothing
// under the memory's lock, with live updates when another process writes
// it. Where the memory keeps a history (history.Reader), an entity's
// recorded changes, and a restore of what a change deleted. The memory is a Store: the memory file (filestore) or a memory in
// PostgreSQL (pgstore); the page knows neither.
//
// The page (page/*) is small hand-written HTML, CSS and JavaScript embedded
// in the binary: no CDN, no third-party code. It puts every piece of memory
// content into the document with textContent, never as HTML.
//
// Security: the `ui` command's page is at /SECRET/ (Options.Secret): every
// request must carry the secret as the first segment of its path, and the
// page uses relative URLs only, so the secret never leaves the origin
// (Referrer-Policy keeps it out of Referer headers). Under --http the
// HTTP server in front logs the page in and tells it, through
// Options.MayEdit, whether a request may edit. A request that changes the
// memory must be a same-origin POST of JSON: Origin, when sent, must be
// the page's own (and the `ui` command's page requires it), Sec-Fetch-Site,
// when sent, "same-origin", and no CORS header is ever sent, so no page of
// another origin, another port of the same host included, can change the
// memory. The page's script sends the key it was given (see
// httpserver.PageKeyHeader) with each of its requests.
package ui

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/redact"
)

//go:embed page
var pageFS embed.FS

// Options configure a Handler.
type Options struct {
	// Secret must be the first path segment of every request: the page is
	// at /SECRET/. Empty serves the page at / with no secret, for use behind
	// another check (MayEdit).
	Secret string
	// MayEdit, when set, is asked before every edit by the server in front
	// that logged the request in (httpserver.MayEdit under --http): an
	// error (a read-only grant: "this token may only read memory NAME"; a
	// request that does not prove it comes from the page) refuses the edit
	// with 403 and its text, and the memory is not touched. The page hides
	// its edit controls for a request MayEdit refuses. Unset (the `ui`
	// command), an edit must carry the page's own Origin.
	MayEdit func(*http.Request) error
	// Client, when set, names who makes a request's edits, as the history
	// records them (the client of tool "page"): under --http the label of
	// the token that logged the request in (httpserver.Client). Unset (the
	// `ui` command), the page's edits name no client.
	Client func(*http.Request) string
	// WatchInterval is how often the memory is checked for changes by
	// other processes while a page is open (a database memory hears them at
	// once and checks only after losing its connection); 0 means one
	// second.
	WatchInterval time.Duration
	// Logf reports failed reads and writes; nil discards them (the
	// command hands down its one logger).
	Logf func(format string, args ...any)
	// HidePaths are the memory files whose paths, and the directories
	// above them, the page's error messages leave out: under --http the
	// page's readers may be remote. A database failure's message never
	// says where the database is (internal/redact). The log keeps every
	// message whole.
	HidePaths []string
	// Vectors, when set, says how many of the memory's texts have a
	// vector for search by meaning (internal/meaning), which the page
	// shows; unset (search by meaning off), the page says nothing of it.
	Vectors func() (ready, texts int)
}

// Handler serves the page and its API for one memory.
type Handler struct {
	store  graph.Store
	where  string
	opts   Options
	hide   redact.Rules
	static http.Handler
	hub    hub
	// homeReads: the home view's reads of the history, shared by the
	// requests that come at once.
	homeReads coalescer[homeHistory]

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: event streams end
}

// NewHandler returns the page for store. where names the memory for the
// page: the file's path, or the memory and database (never a password).
func NewHandler(store graph.Store, where string, opts Options) *Handler {
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	sub, err := fs.Sub(pageFS, "page")
	if err != nil {
		panic(err)
	}
	h := &Handler{store: store, where: where, opts: opts, hide: redact.Paths(opts.HidePaths...), static: http.FileServerFS(sub), closed: make(chan struct{})}
	h.hub.watch = func(ctx context.Context) {
		store.Watch(ctx, opts.WatchInterval, func() { h.hub.broadcast() })
	}
	return h
}

// Close ends the open event streams, which otherwise last as long as their
// pages: call it when the HTTP server shuts down
// (http.Server.RegisterOnShutdown), so that shutdown need not wait for them.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.closed) }) }

// Limits of what one answer holds, so the page stays fast on a memory of
// 100k entities.
const (
	searchLimit        = 50
	neighbourhoodLimit = 60  // entities in a neighbourhood picture
	wholeGraphLimit    = 150 // a whole-graph picture is drawn up to this many entities
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")

	path := r.URL.Path
	if h.opts.Secret != "" {
		secret, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if subtle.ConstantTimeCompare([]byte(secret), []byte(h.opts.Secret)) != 1 {
			http.Error(w, "Not found. Open the address mcp-server-memory ui printed, secret included.", http.StatusNotFound)
			return
		}
		if !ok { // /SECRET: relative URLs need the slash
			http.Redirect(w, r, "/"+secret+"/", http.StatusFound)
			return
		}
		path = "/" + rest
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		// A page of another origin: navigation to the page itself is
		// fine, nothing else is.
		if !(r.Method == http.MethodGet && path == "/" && r.Header.Get("Sec-Fetch-Mode") == "navigate") {
			http.Error(w, "Requests from other sites are refused.", http.StatusForbidden)
			return
		}
	}
	if strings.HasPrefix(path, "/api/") {
		h.api(w, r, strings.TrimPrefix(path, "/api/"))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = path
	h.static.ServeHTTP(w, r2)
}

func (h *Handler) api(w http.ResponseWriter, r *http.Request, name string) {
	if name == "edit" {
		h.editCall(w, r)
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "use GET")
		return
	}
	q := r.URL.Query()
	switch name {
	case "stats":
		h.stats(w, r)
	case "learned":
		h.learned(w, h.mayEdit(r) == nil)
	case "history":
		// The history holds what was deleted: only those who may edit
		// the memory (and so restore it) see it.
		if err := h.mayEdit(r); err != nil {
			writeError(w, http.StatusForbidden, "The history is shown to those who may edit this memory: "+err.Error())
			return
		}
		h.entityHistory(w, q.Get("name"))
	case "search":
		h.search(w, q.Get("q"), q.Get("offset"))
	case "entity":
		h.view(w, func(g *graph.Graph) (any, int) { return entityAnswer(g, q.Get("name")) })
	case "picture":
		depth, _ := strconv.Atoi(q.Get("depth"))
		h.view(w, func(g *graph.Graph) (any, int) { return pictureAnswer(g, q.Get("name"), depth) })
	case "events":
		h.events(w, r)
	default:
		writeError(w, http.StatusNotFound, "no such API call")
	}
}

// editCall makes an edit, when it comes from this page and r may change
// the memory.
func (h *Handler) editCall(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r, h.opts.MayEdit == nil); err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	if err := h.mayEdit(r); err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	h.edit(w, r)
}

// stats answers the page's first question: how big the memory is, where
// it is kept, whether r may edit it, and how far the vectors are.
func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	readOnly := ""
	if err := h.mayEdit(r); err != nil {
		readOnly = err.Error()
	}
	var vectors any
	if h.opts.Vectors != nil {
		ready, texts := h.opts.Vectors()
		vectors = map[string]int{"ready": ready, "texts": texts}
	}
	h.view(w, func(g *graph.Graph) (any, int) {
		e, rel := g.Len()
		ans := map[string]any{"entities": e, "relations": rel, "where": h.where, "wholeGraph": e <= wholeGraphLimit, "readOnly": readOnly,
			"history": historyOf(h.store) != nil}
		if vectors != nil {
			ans["vectors"] = vectors
		}
		return ans, 200
	})
}

// mayEdit asks Options.MayEdit whether r may change the memory.
func (h *Handler) mayEdit(r *http.Request) error {
	if h.opts.MayEdit == nil {
		return nil
	}
	return h.opts.MayEdit(r)
}

// sameOrigin refuses a write that a page of another origin could send: it
// must be a POST of JSON (which a cross-origin page cannot send without a
// CORS preflight, which is never granted), and what the browser says of its
// origin must be this page's. needOrigin refuses a request that says
// nothing of its origin: every browser sends Origin with a POST.
func sameOrigin(r *http.Request, needOrigin bool) error {
	if r.Method != http.MethodPost {
		return errors.New("edits must be POST requests")
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return errors.New("edits must be sent as application/json")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("edits from another origin are refused (Sec-Fetch-Site: %s)", site)
	}
	origin := r.Header.Get("Origin")
	if origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		return fmt.Errorf("edits from another origin are refused (Origin: %s)", origin)
	}
	if origin == "" && needOrigin {
		return errors.New("edits must come from the page (the request carries no Origin header)")
	}
	return nil
}

func (h *Handler) view(w http.ResponseWriter, answer func(*graph.Graph) (any, int)) {
	h.viewWith(w, h.store.View, answer)
}

// viewWith is view reading the memory through view (the store's View, or
// graph.ViewIndexed for a search).
func (h *Handler) viewWith(w http.ResponseWriter, view func(context.Context, func(*graph.Graph) error) error, answer func(*graph.Graph) (any, int)) {
	var v any
	status := 0
	if err := view(context.Background(), func(g *graph.Graph) error { v, status = answer(g); return nil }); err != nil {
		h.opts.Logf("the page could not read the memory: %v", err)
		writeError(w, http.StatusInternalServerError, h.hide.Error(err))
		return
	}
	writeJSON(w, status, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// hub tells every open page that the memory changed: after the page's own
// edits and when another process wrote it. It watches the memory only while
// a page listens.
type hub struct {
	watch func(context.Context)

	mu     sync.Mutex
	subs   map[chan struct{}]bool
	cancel context.CancelFunc
}

func (b *hub) subscribe() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = make(map[chan struct{}]bool)
	}
	ch := make(chan struct{}, 1)
	b.subs[ch] = true
	if len(b.subs) == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		b.cancel = cancel
		go b.watch(ctx)
	}
	return ch
}

func (b *hub) unsubscribe(ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, ch)
	if len(b.subs) == 0 && b.cancel != nil {
		b.cancel()
		b.cancel = nil
	}
}

func (b *hub) broadcast() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default: // a change is already pending for this page
		}
	}
}

// events streams server-sent events: "change" whenever the memory changed.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	// A ResponseController finds the Flusher behind writers that wrap it
	// and Unwrap, as --http's access log and limits do.
	rc := http.NewResponseController(w)
	ch := h.hub.subscribe()
	defer h.hub.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ": connected\n\n")
	ping := time.NewTicker(25 * time.Second)
	defer ping.Stop()
	for {
		if err := rc.Flush(); err != nil {
			if errors.Is(err, http.ErrNotSupported) {
				h.opts.Logf("the page's live updates cannot be sent: %v", err)
			}
			return // else the page went away
		}
		select {
		case <-r.Context().Done():
			return
		case <-h.closed:
			return
		case <-ch:
			io.WriteString(w, "event: change\ndata: {}\n\n")
		case <-ping.C:
			io.WriteString(w, ": ping\n\n")
		}
	}
}
