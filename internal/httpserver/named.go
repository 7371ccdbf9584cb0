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

// Named memories (SPEC §11): with a tokens file, memory NAME is served at
// /mcp/NAME and the memory "default" at /mcp. Whatever is wrong with a
// request for a memory — no such name, a name that could never be one
// ("..", "%2e%2e", "a/b", upper case, a reserved name), a wrong token, a
// token without a grant for that memory — the answer is the same 403 with
// the same body, so no answer tells whether a memory exists. Only a
// request with no Authorization header at all gets 401, the same for every
// path. A memory is opened (its file or row created) only after a grant
// for it passed.
//
// The grant's level reaches the tool handlers as the go-sdk's
// RequestExtra.TokenInfo, which the go-sdk takes from the HTTP request's
// context (auth.RequireBearerToken puts it there): scopes "read", or "read"
// and "write" (server.ScopeWrite). Nothing a client sends can set it.

const (
	namedForbidden    = "Forbidden: this token does not give access to this memory\n"
	namedUnauthorized = "Unauthorized: send a token as Authorization: Bearer <token>\n"
)

// levelKey carries the access level checked by serveNamed to the token
// verifier that hands it to the go-sdk.
type levelKey struct{}

func (s *Server) serveNamed(w http.ResponseWriter, r *http.Request) {
	name := access.DefaultMemory
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/mcp/"); ok {
		name = rest // still escaped: "%2e%2e" is no valid name
	} else if r.URL.Path != "/mcp" {
		name = r.URL.Path // "/mcp/..." escaped oddly: refused below
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-server-memory"`)
		writeFixed(w, http.StatusUnauthorized, namedUnauthorized)
		return
	}
	level := access.None
	token, ok := bearerToken(header)
	if ok {
		level = s.cfg.Tokens.Check(token, name) // None for an invalid name
	}
	if level == access.None || access.ValidName(name) != nil {
		writeFixed(w, http.StatusForbidden, namedForbidden)
		return
	}
	ep, err := s.endpoint(r.Context(), name)
	if err != nil {
		s.cfg.Logf("opening memory %s: %v", name, err)
		writeFixed(w, http.StatusServiceUnavailable, "Service Unavailable: the memory cannot be opened now; the server's log says why\n")
		return
	}
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), levelKey{}, level))
	defer cancel()
	defer s.track(&openRequest{token: token, memory: name, cancel: cancel})()
	ep.handler.ServeHTTP(w, r.WithContext(ctx))
}

// openRequest is a request being served, which a revocation ends: a tool
// call, and above all an event stream, which would otherwise go on for
// hours.
type openRequest struct {
	token, memory string
	cancel        context.CancelFunc
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
		if s.cfg.Tokens.Check(r.token, r.memory) == access.None {
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

// endpoint returns the endpoint of memory name, opening it on first use.
// The lock is held while the memory opens, so two first requests open it
// once.
func (s *Server) endpoint(ctx context.Context, name string) (*endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ep := s.endpoints[name]; ep != nil {
		return ep, nil
	}
	mem, err := s.cfg.Memories(ctx, name)
	if err != nil {
		return nil, err
	}
	ep := s.newEndpoint(mem, auth.RequireBearerToken(grantedLevel, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true}))
	s.endpoints[name] = ep
	if s.background != nil {
		go mem.Watch(s.background)
	}
	return ep, nil
}

// grantedLevel turns the level serveNamed checked into the go-sdk's token
// information. It runs only after serveNamed, so it never refuses.
func grantedLevel(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	switch level, _ := ctx.Value(levelKey{}).(access.Level); level {
	case access.Write:
		return &auth.TokenInfo{Scopes: []string{"read", server.ScopeWrite}}, nil
	case access.Read:
		return &auth.TokenInfo{Scopes: []string{"read"}}, nil
	}
	return nil, auth.ErrInvalidToken
}
