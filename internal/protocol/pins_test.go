package protocol

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session connects a client to a fresh server in memory and returns the
// server's side of the session, and a function that ends it.
func session(t *testing.T) (*mcp.ServerSession, func()) {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	server := mcp.NewServer(&mcp.Implementation{Name: "pins", Version: "v0"}, nil)
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ss, func() { cs.Close(); ss.Wait() }
}

func TestPinsRefuseTheOtherKindOfProtocol(t *testing.T) {
	var p Pins
	ss, end := session(t)
	if err := p.Check(ss, "initialize", "", true); err != nil {
		t.Fatalf("first message: %v", err)
	}
	p.Pin(ss, "2025-11-25")
	if v, ok := p.Version(ss); !ok || v != "2025-11-25" {
		t.Errorf("pinned to %q %v, want 2025-11-25", v, ok)
	}
	if err := p.Check(ss, "tools/list", "", true); err != nil {
		t.Errorf("a handshake session's next request: %v", err)
	}
	err := p.Check(ss, "tools/list", FirstSessionless, true)
	if err == nil || !strings.Contains(err.Error(), "2025-11-25") {
		t.Errorf("a sessionless request in a handshake session: %v", err)
	}
	if err := p.Check(ss, "tools/list", FirstSessionless, false); err != nil {
		t.Errorf("a message that does not decide: %v", err)
	}
	p.Pin(ss, "2024-11-05") // pinned already: kept
	if v, _ := p.Version(ss); v != "2025-11-25" {
		t.Errorf("a second Pin changed the version to %q", v)
	}
	end()
	waitForLen(t, &p, 0)
}

func TestPinsRefuseAHandshakeInASessionlessSession(t *testing.T) {
	var p Pins
	ss, end := session(t)
	defer end()
	if err := p.Check(ss, "tools/list", FirstSessionless, true); err != nil {
		t.Fatal(err)
	}
	p.Pin(ss, "2025-11-25") // not pinned to the handshake era: ignored
	if v, _ := p.Version(ss); v != FirstSessionless {
		t.Errorf("pinned to %q, want %s", v, FirstSessionless)
	}
	err := p.Check(ss, "tools/list", "", true)
	if err == nil || !strings.Contains(err.Error(), FirstSessionless) {
		t.Errorf("a handshake-era request in a sessionless session: %v", err)
	}
	if p.Len() != 1 {
		t.Errorf("%d sessions pinned, want 1", p.Len())
	}
}

func TestPinsIgnoreOtherSessions(t *testing.T) {
	var p Pins
	if err := p.Check(nil, "tools/list", FirstSessionless, true); err != nil || p.Len() != 0 {
		t.Errorf("no server session: %v, %d pinned", err, p.Len())
	}
	if _, ok := p.Version(nil); ok {
		t.Error("an unknown session is pinned")
	}
}

func waitForLen(t *testing.T, p *Pins, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); p.Len() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions pinned, want %d", p.Len(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
