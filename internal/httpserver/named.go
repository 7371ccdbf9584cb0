package httpserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/kgmemory/mcp-server-memory/internal/access"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// Named memories (docs/design.md §11): with a tokens file, memory NAME is
// served at /mcp/NAME and the memory "default" at /mcp. Whatever is wrong
// with a request for a memory — no such name, a name that could never be one
// ("..", "%2e%2e", "a/b", upper case, a reserved name), a wrong token, a
// token without a grant for that memory — the answer is the same 403 with
// the same body, so no answer tells whether a memory exists. Only a
// request with no Authorization header at all gets 401, the same for every
// path. A memory is opened (its file or row created) only after a grant
// for it passed. Memory NAME's web page, at /page/NAME/, passes the same
// gate (admit; page.go).
//
// The grant's level reaches the tool handlers as the go-sdk's
// RequestExtra.TokenInfo, which the go-sdk takes from the HTTP request's
// context (auth.RequireBearerToken puts it there): scopes "read", or "read"
// and "write" (server.ScopeWrite). Nothing a client sends can set it.

const (
	namedForbidden    = "Forbidden: this token does not give access to this memory\n"
	namedUnauthorized = "Unauthorized: send a token as Authorization: Bearer <token> (a memory's web page: open /page/NAME/?token=<token> once)\n"
)

// grantKey carries the grant that admit passed (a grant) to the go-sdk's
// token verifier (grantedLevel) and to the memory's page (MayEdit).
type grantKey struct{}

type grant struct {
	memory string
	level  access.Level
}

// checkFunc tells what the credential a request carries may do with a
// memory, under the grants in force when it is called.
type checkFunc func(memory string) access.Level

// bearerCheck is the check of an Authorization header; nil when there is
// none.
func (s *Server) bearerCheck(header string) checkFunc {
	if header == "" {
		return nil
	}
	token, ok := bearerToken(header)
	return func(memory string) access.Level {
		if !ok {
			return access.None
		}
		return s.cfg.Tokens.Check(token, memory)
	}
}

// admit is the one gate of named memories, MCP and pages alike: it returns
// the level check grants memory name, or answers the refusal and returns
// false. With no credential at all (check nil) the answer is 401, the same
// for every path; any other refusal is the same 403 with the same body.
func admit(w http.ResponseWriter, name string, check checkFunc) (access.Level, bool) {
	if check == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-server-memory"`)
		writeFixed(w, http.StatusUnauthorized, namedUnauthorized)
		return access.None, false
	}
	level := check(name) // None for an invalid name
	if level == access.None || access.ValidName(name) != nil {
		writeFixed(w, http.StatusForbidden, namedForbidden)
		return access.None, false
	}
	return level, true
}

func (s *Server) serveNamed(w http.ResponseWriter, r *http.Request) {
	name := access.DefaultMemory
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/mcp/"); ok {
		name = rest // still escaped: "%2e%2e" is no valid name
	} else if r.URL.Path != "/mcp" {
		name = r.URL.Path // "/mcp/..." escaped oddly: refused below
	}
	check := s.bearerCheck(r.Header.Get("Authorization"))
	level, ok := admit(w, name, check)
	if !ok {
		return
	}
	s.serveGranted(w, r, name, level, check, func(ep *endpoint) http.Handler { return ep.handler })
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

// ReloadTokens reads the tokens file again (on SIGHUP) and ends the
// requests in progress, event streams included, whose token the new grants
// no longer give their memory. When the file cannot be read or parsed, the
// grants in force stay as they were and the error says why.
func (s *Server) ReloadTokens() error {
	if s.cfg.Tokens == nil {
		return errors.New("no tokens file to read again")
	}
	if err := s.cfg.Tokens.Reload(); err != nil {
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

// grantedLevel turns the level serveNamed checked into the go-sdk's token
// information. It runs only after serveNamed, so it never refuses.
func grantedLevel(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	switch g, _ := ctx.Value(grantKey{}).(grant); g.level {
	case access.Write:
		return &auth.TokenInfo{Scopes: []string{"read", server.ScopeWrite}}, nil
	case access.Read:
		return &auth.TokenInfo{Scopes: []string{"read"}}, nil
	}
	return nil, auth.ErrInvalidToken
}
