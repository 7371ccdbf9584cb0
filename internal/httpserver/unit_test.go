package httpserver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestResolveAddr(t *testing.T) {
	for _, tc := range []struct {
		in                 string
		hostPort           string
		loopback, wildcard bool
		err                bool
	}{
		{in: "8080", hostPort: "127.0.0.1:8080", loopback: true},
		{in: ":8080", hostPort: "127.0.0.1:8080", loopback: true},
		{in: "127.0.0.1:0", hostPort: "127.0.0.1:0", loopback: true},
		{in: "127.1.2.3:9", hostPort: "127.1.2.3:9", loopback: true},
		{in: "localhost:8080", hostPort: "localhost:8080", loopback: true},
		{in: "[::1]:8080", hostPort: "[::1]:8080", loopback: true},
		{in: "0.0.0.0:8080", hostPort: "0.0.0.0:8080", wildcard: true},
		{in: "[::]:8080", hostPort: "[::]:8080", wildcard: true},
		{in: "192.168.1.5:8080", hostPort: "192.168.1.5:8080"},
		{in: "Memory.Example.com:443", hostPort: "memory.example.com:443"},
		{in: "", err: true},
		{in: "localhost", err: true},
		{in: "host:port", err: true},
		{in: "70000", err: true},
		{in: "1.2.3.4:70000", err: true},
	} {
		got, err := resolveAddr(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("resolveAddr(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("resolveAddr(%q): %v", tc.in, err)
			continue
		}
		if got.hostPort != tc.hostPort || got.loopback != tc.loopback || got.wildcard != tc.wildcard {
			t.Errorf("resolveAddr(%q) = %+v, want hostPort %s loopback %v wildcard %v", tc.in, got, tc.hostPort, tc.loopback, tc.wildcard)
		}
	}
}

func TestHostPolicy(t *testing.T) {
	policy := func(addr string, allowed ...string) hostPolicy {
		la, err := resolveAddr(addr)
		if err != nil {
			t.Fatal(err)
		}
		return newHostPolicy(la, allowed)
	}
	loop := policy("8080")
	loopAllowed := policy("8080", "memory.example.com:443")
	wild := policy("0.0.0.0:8080")
	wildAllowed := policy("0.0.0.0:8080", "memory.example.com")
	bound := policy("192.168.1.5:8080")
	for _, tc := range []struct {
		name   string
		p      hostPolicy
		host   string
		origin string
		want   bool
	}{
		{"loopback ip", loop, "127.0.0.1:8080", "", true},
		{"localhost", loop, "localhost:8080", "", true},
		{"ipv6 loopback", loop, "[::1]:8080", "", true},
		{"localhost with trailing dot", loop, "LOCALHOST.:8080", "", true},
		{"rebinding name", loop, "evil.example.com:8080", "", false},
		{"empty host", loop, "", "", false},
		{"lan ip on loopback bind", loop, "192.168.1.5:8080", "", false},
		{"allowed name", loopAllowed, "memory.example.com", "", true},
		{"same-host origin", loop, "127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"loopback origin other port", loop, "127.0.0.1:8080", "http://localhost:3000", true},
		{"foreign origin", loop, "127.0.0.1:8080", "http://evil.example.com", false},
		{"null origin", loop, "127.0.0.1:8080", "null", false},
		{"non-http origin", loop, "127.0.0.1:8080", "file://", false},
		{"allowed origin", loopAllowed, "127.0.0.1:8080", "https://memory.example.com", true},
		{"wildcard any host", wild, "nas.local:8080", "", true},
		{"wildcard same-host origin", wild, "nas.local:8080", "http://nas.local:8080", true},
		{"wildcard foreign origin", wild, "nas.local:8080", "http://evil.example.com", false},
		{"wildcard with list: listed", wildAllowed, "memory.example.com", "", true},
		{"wildcard with list: unlisted", wildAllowed, "evil.example.com", "", false},
		{"bound host", bound, "192.168.1.5:8080", "", true},
		{"bound host: other name", bound, "evil.example.com:8080", "", false},
	} {
		got := tc.p.hostOK(tc.host) && tc.p.originOK(tc.origin, tc.host)
		if got != tc.want {
			t.Errorf("%s: Host %q Origin %q allowed = %v, want %v", tc.name, tc.host, tc.origin, got, tc.want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer  abc ", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"", "", false},
	} {
		token, ok := bearerToken(tc.header)
		if token != tc.token || ok != tc.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
	}
}

func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		body string
		want peeked
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, peeked{method: "initialize", firstID: "1", initialize: true, messages: 1}},
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, peeked{method: "server/discover", firstID: "1", sessionless: true, discoverWithoutMeta: true, messages: 1}},
		{`{"jsonrpc":"2.0","id":"a","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, peeked{method: "server/discover", firstID: `"a"`, sessionless: true, version: "2026-07-28", messages: 1}},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, peeked{method: "tools/list", firstID: "1", sessionless: true, version: "2026-07-28", messages: 1}},
		{`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, peeked{method: "subscriptions/listen", firstID: "1", sessionless: true, version: "2026-07-28", listen: true, messages: 1}},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, peeked{method: "ping", firstID: "1", messages: 2}},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, peeked{method: "ping", firstID: "1.5", badID: "1.5", messages: 1}},
		{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, peeked{method: "ping", firstID: "1e2", badID: "1e2", messages: 1}},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, peeked{method: "ping", firstID: "null", messages: 1}},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`, peeked{}},
		{`[]`, peeked{firstID: "null"}},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_graph"}},{"jsonrpc":"2.0","id":2,"method":"resources/read"}]`, peeked{method: "tools/call", firstID: "1", calls: []string{"read_graph", ""}, messages: 2}},
	} {
		if got := peek([]byte(tc.body)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("peek(%s) = %+v, want %+v", tc.body, got, tc.want)
		}
	}
	for _, body := range []string{`not json`, ``, `{"jsonrpc":"2.0"`} {
		if got := peek([]byte(body)); got.notJSON == nil || got.messages != 0 {
			t.Errorf("peek(%s) = %+v, want notJSON set", body, got)
		}
	}
}

func TestSessionActivity(t *testing.T) {
	a := &sessionActivity{sessions: map[string]*activity{}}
	t0 := time.Now()
	const timeout = time.Minute
	// First sight counts as activity.
	if idle := a.idle([]string{"quiet", "streaming"}, timeout, timeout, t0); len(idle) != 0 {
		t.Fatalf("idle at first sight: %v", idle)
	}
	done := a.open("streaming") // a GET event stream stays open
	if idle := a.idle([]string{"quiet", "streaming"}, timeout, timeout, t0.Add(2*timeout)); len(idle) != 1 || idle[0] != "quiet" {
		t.Fatalf("idle = %v, want [quiet]: an open stream keeps its session", idle)
	}
	done()
	if idle := a.idle([]string{"streaming"}, timeout, timeout, time.Now().Add(2*timeout)); len(idle) != 1 || idle[0] != "streaming" {
		t.Fatalf("idle = %v, want [streaming] once its stream ended long ago", idle)
	}
	if _, ok := a.sessions["quiet"]; ok {
		t.Error("a session no longer live is still tracked")
	}
}

// A session that makes no request after its initialize is closed after
// the start timeout, long before the idle timeout; one that did is not.
func TestSessionActivitySilentAfterInitialize(t *testing.T) {
	a := &sessionActivity{sessions: map[string]*activity{}}
	t0 := time.Now()
	const idleTimeout, startTimeout = time.Hour, time.Minute
	a.started("silent", t0)
	a.started("talking", t0)
	a.open("talking")()
	live := []string{"silent", "talking"}
	if idle := a.idle(live, idleTimeout, startTimeout, t0.Add(startTimeout/2)); len(idle) != 0 {
		t.Fatalf("idle before the start timeout: %v", idle)
	}
	if idle := a.idle(live, idleTimeout, startTimeout, t0.Add(2*startTimeout)); len(idle) != 1 || idle[0] != "silent" {
		t.Fatalf("idle = %v, want [silent]", idle)
	}
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, file, want, errText string
	}{
		{env: "", file: "", want: ""},
		{env: " from-env ", file: "", want: "from-env"},
		{env: "", file: file, want: "0123456789abcdef0123"},
		{env: "x", file: file, errText: "both"},
		{env: "", file: empty, errText: "empty"},
		{env: "", file: filepath.Join(dir, "missing"), errText: "reading"},
	} {
		got, err := Token(tc.env, tc.file)
		if tc.errText != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("Token(%q, %q) error = %v, want one mentioning %q", tc.env, tc.file, err, tc.errText)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Token(%q, %q) = %q, %v; want %q", tc.env, tc.file, got, err, tc.want)
		}
	}
}
