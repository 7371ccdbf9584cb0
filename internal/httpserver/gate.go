package httpserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// The gate (docs/design.md §11). Every request for a memory, MCP or page,
// passes admit, which asks the server's grants what the request's
// credential may do with the memory:
//
//   - With a tokens file, memory NAME is served at /mcp/NAME and the memory
//     "default" at /mcp. Whatever is wrong with a request for a memory — no
//     such name, a name that could never be one ("..", "%2e%2e", "a/b",
//     upper case, a reserved name), a wrong token, a token without a grant
//     for that memory — the answer is the same 403 with the same body, so
//     no answer tells whether a memory exists. Only a request with no
//     credential at all gets 401, the same for every path. A memory is
//     opened (its file or row created) only after a grant for it passed.
//   - A server of one memory is the same server with one memory,
//     "default", and one grant: its token may write it (access.Single).
//     Any refusal is 401 there, as a server of one token has nothing to
//     hide (shape.go). Without a token (a loopback address) the grant is
//     everyone's (access.Everyone): whoever passed the Host and Origin
//     checks may write it.
//
// A read grant reaches the tool handlers as the go-sdk's
// RequestExtra.TokenInfo with the one scope "read", which the go-sdk takes
// from the HTTP request's context (auth.RequireBearerToken puts it there),
// and write tools refuse it (internal/server); a write grant needs no
// token information. Nothing a client sends can set it.

// grantKey carries the grant that admit passed (a grant) to the memory's
// page (MayEdit).
type grantKey struct{}

type grant struct {
	memory string
	level  access.Level
}

// checkFunc tells what the credential a request carries may do with a
// memory, under the grants in force when it is called.
type checkFunc func(memory string) access.Level

// credential is what a request carries to prove itself.
type credential struct {
	check      checkFunc // nil: nothing
	label      string    // the tokens file's label of a bearer token, or ""
	bearer     bool      // an Authorization header
	queryToken bool      // a page's first visit: the token in ?token=
	open       bool      // no token to prove: the grants are everyone's (access.Everyone)
}

// credential returns the credential r carries: the Authorization header;
// for a page (page true) also, on a GET, the token in ?token= (a first
// visit), else the page's cookie.
func (s *Server) credential(r *http.Request, page bool) credential {
	g := s.cfg.Grants.Grants // each call: the grants in force
	if g().Open() {
		return credential{check: func(memory string) access.Level { return g().Check("", memory) }, open: true}
	}
	if header := r.Header.Get("Authorization"); header != "" {
		token, ok := bearerToken(header)
		label := ""
		if ok {
			label = g().Label(token)
		}
		return credential{bearer: true, label: label, check: func(memory string) access.Level {
			if !ok {
				return access.None
			}
			return g().Check(token, memory)
		}}
	}
	if !page {
		return credential{}
	}
	if r.Method == http.MethodGet && r.URL.Query().Has("token") {
		token := r.URL.Query().Get("token")
		return credential{queryToken: true, check: func(memory string) access.Level { return g().Check(token, memory) }}
	}
	if c, err := r.Cookie(pageCookie); err == nil {
		return credential{check: func(memory string) access.Level { return g().CheckCookie(c.Value, memory) }}
	}
	return credential{}
}

// admit is the one gate, MCP and pages alike: it returns the level c
// grants on memory name, or answers the refusal and returns false.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, name string, c credential, page bool) (access.Level, bool) {
	level := access.None
	if c.check != nil {
		level = c.check(name) // None for an invalid name
	}
	if level != access.None && access.ValidName(name) == nil {
		return level, true
	}
	s.refuse(w, r, c, page)
	return access.None, false
}

// serveMCP serves a request for a memory's MCP endpoint (mcpMemory names
// it).
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	name := s.mcpMemory(r)
	c := s.credential(r, false)
	level, ok := s.admit(w, r, name, c, false)
	if !ok {
		return
	}
	s.serveGranted(w, r, name, level, c.check, func(ep *endpoint) http.Handler {
		if c.label != "" {
			return labelled(ep.router, level, c.label)
		}
		if level < access.Write {
			return ep.readOnly
		}
		return ep.router
	})
}

// serveGranted serves r, which admit granted level on memory name, through
// the handler of the memory's endpoint that pick chooses, opening the
// memory first if it is not open yet. A reload of the tokens file that
// revokes the grant (check) ends the request.
func (s *Server) serveGranted(w http.ResponseWriter, r *http.Request, name string, level access.Level, check checkFunc, pick func(*endpoint) http.Handler) {
	ep, release, err := s.acquire(r.Context(), name)
	var full errTooManyMemories
	switch {
	case errors.As(err, &full):
		writeUnavailable(w, r, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		s.cfg.Logf("opening memory %s: %v", name, err)
		writeUnavailable(w, r, http.StatusServiceUnavailable, "Service Unavailable: the memory cannot be opened now; the server's log says why")
		return
	}
	defer release()
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), grantKey{}, grant{memory: name, level: level}))
	defer cancel()
	defer s.track(&openRequest{check: func() access.Level { return check(name) }, cancel: cancel})()
	pick(ep).ServeHTTP(w, r.WithContext(ctx))
}

// openRequest is a request being served, which a revocation ends: a tool
// call, and above all an event stream, which would otherwise go on for
// hours.
type openRequest struct {
	check  func() access.Level // the request's grant, as the tokens file now says
	cancel context.CancelFunc
}

// track records r until the returned func is called.
func (s *Server) track(r *openRequest) (done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[*openRequest]struct{}{}
	}
	s.open[r] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.open, r)
	}
}

// ReloadTokens reads the grants again (Config.Grants: the tokens file, on
// SIGHUP) and ends the requests in progress, event streams included, whose
// token the new grants no longer give their memory. When the file cannot
// be read or parsed, or the grants are read from no file, the grants in
// force stay as they were and the error says why.
func (s *Server) ReloadTokens() error {
	if err := s.cfg.Grants.Reload(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.open {
		if r.check() == access.None {
			r.cancel()
		}
	}
	return nil
}

func writeFixed(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write([]byte(body))
}

// labelled serves h with the go-sdk's token information of a grant whose
// token the tokens file labels: its scopes (server.ScopeWrite for a write
// grant) and the label, which the history records as the client of the
// request's writes. It runs only after admit, so it never refuses.
func labelled(h http.Handler, level access.Level, label string) http.Handler {
	scopes := []string{"read"}
	if level >= access.Write {
		scopes = append(scopes, server.ScopeWrite)
	}
	info := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{Scopes: scopes, Extra: map[string]any{server.TokenLabelKey: label}}, nil
	}
	return auth.RequireBearerToken(info, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// readOnlyInfo is the go-sdk's token information of a read grant: its one
// scope is not server.ScopeWrite, so write tools refuse it. It runs only
// after admit, so it never refuses.
func readOnlyInfo(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
	return &auth.TokenInfo{Scopes: []string{"read"}}, nil
}
