package httpserver_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/ui"
)

// TestGateRefusals pins every refusal of the one gate, MCP endpoint and
// page alike, on a server of one memory (its token, or none) and on a
// server of named memories: status, body and challenge, exactly, as a
// client sees them.
func TestGateRefusals(t *testing.T) {
	const token = "gate-token-0123456789abcdef"
	wrong := strings.Repeat("x", len(token))
	onePage := func(t *testing.T) httpserver.Page {
		file := filepath.Join(t.TempDir(), "memory.jsonl")
		return ui.NewHandler(filestore.Open(file, filestore.Options{}), file, ui.Options{MayEdit: httpserver.MayEdit, Logf: t.Logf})
	}
	one := startPaged(t, httpserver.Config{Grants: tokenGrants(t, token)}, onePage(t), "")
	open := startPaged(t, httpserver.Config{}, onePage(t), "")
	ns := startNamed(t, teamTokens)

	const (
		oneMCP   = "Unauthorized: send the server's token as Authorization: Bearer <token>\n"
		onePage1 = "Unauthorized. Open /?token=YOUR_TOKEN once (the token the server was started with).\n"
		named401 = "Unauthorized: send a token as Authorization: Bearer <token> (a memory's web page: open /page/NAME/?token=<token> once)\n"
		named403 = "Forbidden: this token does not give access to this memory\n"
		realm    = `Bearer realm="mcp-server-memory"`
		invalid  = realm + `, error="invalid_token"`
	)
	oneAddr, openAddr := strings.TrimPrefix(one.base, "http://"), strings.TrimPrefix(open.base, "http://")
	auth := func(v string) []string { return []string{"Authorization", v} }
	cookie := func(v string) []string { return []string{"Cookie", "mcp_memory_page=" + v} }
	for _, tc := range []struct {
		name      string
		addr      string
		page      bool   // a GET of a page, else an MCP initialize
		path      string // "": /mcp or /
		header    []string
		status    int
		body      string // "" for a request the gate lets through
		challenge string
	}{
		{"one: MCP without a token", oneAddr, false, "", nil, 401, oneMCP, realm},
		{"one: MCP with a wrong token", oneAddr, false, "", auth("Bearer " + wrong), 401, oneMCP, invalid},
		{"one: MCP with another scheme", oneAddr, false, "", auth("Basic " + token), 401, oneMCP, realm},
		{"one: MCP with the token", oneAddr, false, "", auth("Bearer " + token), 200, "", ""},
		{"one: page without a token", oneAddr, true, "", nil, 401, onePage1, ""},
		{"one: page with a wrong token", oneAddr, true, "", auth("Bearer " + wrong), 401, onePage1, ""},
		{"one: page with a wrong cookie", oneAddr, true, "", cookie(wrong), 401, onePage1, ""},
		{"one: page with the token", oneAddr, true, "", auth("Bearer " + token), 200, "", ""},
		{"open: MCP without a token", openAddr, false, "", nil, 200, "", ""},
		{"open: MCP with any token", openAddr, false, "", auth("Bearer " + wrong), 200, "", ""},
		{"open: page", openAddr, true, "", nil, 200, "", ""},
		{"named: MCP without a token", ns.addr, false, "/mcp/alpha", nil, 401, named401, realm},
		{"named: MCP with a wrong token", ns.addr, false, "/mcp/alpha", auth("Bearer " + wrong), 403, named403, ""},
		{"named: MCP of a memory not granted", ns.addr, false, "/mcp/gamma", auth("Bearer " + tokAlpha), 403, named403, ""},
		{"named: MCP with the token", ns.addr, false, "/mcp/alpha", auth("Bearer " + tokAlpha), 200, "", ""},
		{"named: page without a token", ns.addr, true, "/page/alpha/", nil, 401, named401, realm},
		{"named: page with a wrong cookie", ns.addr, true, "/page/alpha/", cookie(wrong), 403, named403, ""},
		{"named: page with the token", ns.addr, true, "/page/alpha/", auth("Bearer " + tokAlpha), 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path, header, body := http.MethodPost, "/mcp", append(tc.header, "Content-Type", "application/json", "Accept", "application/json, text/event-stream"), string(initialize)
			if tc.page {
				method, path, header, body = http.MethodGet, "/", tc.header, ""
			}
			if tc.path != "" {
				path = tc.path
			}
			resp, got := rawRequest(t, tc.addr, method, path, body, header...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %q, want %d", resp.StatusCode, got, tc.status)
			}
			if tc.body != "" && got != tc.body {
				t.Errorf("body %q, want %q", got, tc.body)
			}
			if ch := resp.Header.Get("WWW-Authenticate"); tc.body != "" && ch != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", ch, tc.challenge)
			}
		})
	}
}
