package protocol

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Pins holds the protocol version each live session is pinned to. The
// first message of a session decides (docs/design.md §4); initialize then
// records the version it negotiated. The go-sdk serves each request by its
// own _meta and does not do this. An entry lives as long as its session:
// it is removed when the session ends, so the one-request sessions of
// stateless HTTP leave nothing behind. The zero value is ready to use.
type Pins struct {
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]string
}

// Check pins session to version if this is its first deciding message
// (RequestVersion), and otherwise refuses a message of the other kind of
// protocol.
func (p *Pins) Check(session mcp.Session, method, version string, decides bool) error {
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
	case Sessionless(pinned) == Sessionless(version):
		return nil
	case Sessionless(pinned):
		return ErrMetaRequired(pinned, method)
	default:
		return ErrPinnedToHandshake(Connection, pinned, method, version)
	}
}

// Pin records the version initialize negotiated for a session pinned to
// the handshake era.
func (p *Pins) Pin(session mcp.Session, version string) {
	ss, _ := session.(*mcp.ServerSession)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pinned, ok := p.sessions[ss]; ok && pinned == "" {
		p.sessions[ss] = version
	}
}

// Version returns the version session is pinned to, and whether it is
// pinned at all.
func (p *Pins) Version(session *mcp.ServerSession) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.sessions[session]
	return v, ok
}

// Len returns the number of sessions pinned.
func (p *Pins) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}
