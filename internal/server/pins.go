package server

import (
	"reflect"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstSessionlessVersion is the first protocol version without the
// initialize handshake: its requests carry their version in
// _meta[mcp.MetaKeyProtocolVersion], and so does every later version.
// Versions are dates, so they compare as strings.
const firstSessionlessVersion = "2026-07-28"

// sessionless reports whether version is a protocol without the initialize
// handshake. "" stands for a handshake-era version not yet negotiated.
func sessionless(version string) bool { return version >= firstSessionlessVersion }

// requestVersion is the protocol version a message speaks: the version its
// _meta declares for a sessionless protocol, or "" for the handshake era
// (initialize negotiates the exact version). decides is false for
// notifications that every protocol sends, which pin nothing.
func requestVersion(method string, req mcp.Request) (version string, decides bool) {
	if method == "initialize" || method == "notifications/initialized" {
		return "", true
	}
	if strings.HasPrefix(method, "notifications/") {
		return "", false
	}
	// Params may be a typed nil (ping without params).
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok && sessionless(v) {
			return v, true
		}
	}
	return "", true
}

// pins holds the protocol version each live session is pinned to. The
// first message of a session decides (docs/design.md §4); initialize then
// records the version it negotiated. The go-sdk serves each request by its
// own _meta and does not do this. An entry lives as long as its session: it is
// removed when the session ends, so the one-request sessions of stateless
// HTTP leave nothing behind.
type pins struct {
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]string
}

// check pins session to version if this is its first deciding message, and
// otherwise refuses a message of the other kind of protocol.
func (p *pins) check(session mcp.Session, method, version string, decides bool) error {
	ss, _ := session.(*mcp.ServerSession)
	if !decides || ss == nil {
		return nil
	}
	p.mu.Lock()
	pinned, seen := p.sessions[ss]
	if !seen {
		if p.sessions == nil {
			p.sessions = make(map[*mcp.ServerSession]string)
		}
		p.sessions[ss] = version
	}
	p.mu.Unlock()
	if !seen {
		go func() {
			ss.Wait()
			p.mu.Lock()
			delete(p.sessions, ss)
			p.mu.Unlock()
		}()
		return nil
	}
	switch {
	case sessionless(pinned) == sessionless(version):
		return nil
	case sessionless(pinned):
		return errMetaRequired(pinned, method)
	default:
		return errPinnedToHandshake(pinned, method, version)
	}
}

// pin records the version initialize negotiated for a session pinned to the
// handshake era.
func (p *pins) pin(session mcp.Session, version string) {
	ss, _ := session.(*mcp.ServerSession)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pinned, ok := p.sessions[ss]; ok && pinned == "" {
		p.sessions[ss] = version
	}
}
