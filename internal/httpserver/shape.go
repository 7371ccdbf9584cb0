package httpserver

import (
	"net/http"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/access"
)

// The one shape of a server, and what in it follows from its grants
// (Config.Grants). A server of one memory (access.Grants.Only names it) is
// a server of named memories with one entry, always open: the same
// routes, gate, page login and limits. What differs is written here, once:
//
//   - where the memories are: the one memory at /mcp and its page at every
//     other path but /healthz; named memories at /mcp/NAME (the memory
//     "default" at /mcp) and their pages at /page/NAME/;
//   - how the gate refuses (refuse): named memories answer the same 403 to
//     every credential that does not reach the memory asked for, so that no
//     answer tells whether a memory exists; a server of one memory has
//     nothing to hide, and answers 401, with the challenge's
//     error="invalid_token" when the bearer token was wrong.

const (
	namedForbidden    = "Forbidden: this token does not give access to this memory\n"
	namedUnauthorized = "Unauthorized: send a token as Authorization: Bearer <token> (a memory's web page: open /page/NAME/?token=<token> once)\n"
	// The refusals of a server of one memory.
	singleUnauthorized     = "Unauthorized: send the server's token as Authorization: Bearer <token>\n"
	singlePageUnauthorized = "Unauthorized. Open /?token=YOUR_TOKEN once (the token the server was started with).\n"
	challenge              = `Bearer realm="mcp-server-memory"`
)

// routes sends each request to its memory's MCP endpoint (serveMCP) or
// page (servePage), both behind the Host and Origin checks, or to
// /healthz. Every path under /mcp and /page of named memories goes to
// serveMCP and servePage before ServeMux could clean it ("/mcp/../x"
// would be redirected): a name that is not a memory's gets the same 403
// as a memory the token does not reach. The page of a server of one
// memory is ServeMux's "/", so that its paths are cleaned as any other.
func (s *Server) routes() http.Handler {
	policy := newHostPolicy(s.addr, s.cfg.AllowedHosts)
	mcpHandler, pageHandler := policy.guard(http.HandlerFunc(s.serveMCP)), policy.guard(http.HandlerFunc(s.servePage))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	if ep := s.endpoints[s.one]; ep != nil && ep.page != nil {
		mux.Handle("/", pageHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case s.isMCPPath(r):
			mcpHandler.ServeHTTP(w, r)
		case s.one == "" && isPagePath(r):
			pageHandler.ServeHTTP(w, r)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// isMCPPath reports whether r is for a memory's MCP endpoint: /mcp, and
// with named memories every path under /mcp, however escaped.
func (s *Server) isMCPPath(r *http.Request) bool {
	if r.URL.Path == "/mcp" {
		return true
	}
	return s.one == "" && (strings.HasPrefix(r.URL.Path, "/mcp/") || strings.HasPrefix(r.URL.EscapedPath(), "/mcp/"))
}

// mcpMemory names the memory of an MCP request: /mcp is the one memory of
// a server of one memory, or the memory "default"; /mcp/NAME is memory
// NAME, still escaped ("%2e%2e" is no valid name, and admit refuses it).
func (s *Server) mcpMemory(r *http.Request) string {
	switch rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/mcp/"); {
	case s.one != "":
		return s.one
	case ok:
		return rest
	case r.URL.Path != "/mcp":
		return r.URL.Path // "/mcp/..." escaped oddly: refused
	}
	return access.DefaultMemory
}

// pageMemory names the memory of a page request, the prefix its page is
// served below, and whether the path is below it (/page/NAME is not: it
// is redirected to /page/NAME/). The page of a server of one memory is at
// every path.
func (s *Server) pageMemory(r *http.Request) (name, prefix string, below bool) {
	if s.one != "" {
		return s.one, "", true
	}
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), pagePrefix); ok {
		name, _, below = strings.Cut(rest, "/") // still escaped: "%2e%2e" is no valid name
	}
	return name, pagePrefix + name, below
}

// refuse answers a request that admit refused, MCP or page (page true),
// as the server's shape says.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, c credential, page bool) {
	switch {
	case s.one != "" && page:
		writeFixed(w, http.StatusUnauthorized, singlePageUnauthorized)
	case s.one != "":
		ch := challenge
		if _, ok := bearerToken(r.Header.Get("Authorization")); ok {
			ch += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		writeFixed(w, http.StatusUnauthorized, singleUnauthorized)
	case c.check == nil:
		w.Header().Set("WWW-Authenticate", challenge)
		writeFixed(w, http.StatusUnauthorized, namedUnauthorized)
	default:
		writeFixed(w, http.StatusForbidden, namedForbidden)
	}
}
