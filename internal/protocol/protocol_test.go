package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRequestVersion(t *testing.T) {
	meta := func(v string) mcp.Meta { return mcp.Meta{mcp.MetaKeyProtocolVersion: v} }
	for _, tc := range []struct {
		method  string
		req     mcp.Request
		version string
		decides bool
	}{
		{"initialize", &mcp.InitializeRequest{}, "", true},
		{"notifications/initialized", &mcp.InitializedRequest{}, "", true},
		{"notifications/cancelled", &mcp.InitializedRequest{}, "", false},
		{"ping", &mcp.ServerRequest[*mcp.PingParams]{}, "", true},
		{"tools/list", &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: meta("2025-11-25")}}, "", true},
		{"tools/list", &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: meta(FirstSessionless)}}, FirstSessionless, true},
		{"tools/list", &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{Meta: meta("2027-01-01")}}, "2027-01-01", true},
	} {
		v, d := RequestVersion(tc.method, tc.req)
		if v != tc.version || d != tc.decides {
			t.Errorf("%s: %q %v, want %q %v", tc.method, v, d, tc.version, tc.decides)
		}
	}
}

func TestChecks(t *testing.T) {
	for id, bad := range map[string]bool{`1`: false, `-3`: false, `"x"`: false, `null`: false, ``: false, `1.5`: true, `1e2`: true, `99999999999999999999`: true} {
		if BadID([]byte(id)) != bad {
			t.Errorf("BadID(%s) = %v", id, !bad)
		}
	}
	if !DiscoverLacksMeta("server/discover", nil) || DiscoverLacksMeta("server/discover", map[string]any{mcp.MetaKeyProtocolVersion: "2025-11-25"}) || DiscoverLacksMeta("ping", nil) {
		t.Error("DiscoverLacksMeta")
	}
	if !HasBatches("") || !HasBatches("2025-03-26") || HasBatches("2025-06-18") || HasBatches(FirstSessionless) {
		t.Error("HasBatches")
	}
	if d := NestingDepth([]byte(`{"a":[{"b":"[[[{"}],"c":"\"{"}`)); d != 3 {
		t.Errorf("NestingDepth = %d, want 3", d)
	}
}

func TestPinsCheck(t *testing.T) {
	var p Pins
	if err := p.Check(nil, "ping", "", true); err != nil {
		t.Errorf("no session: %v", err)
	}
	if err := p.Check(&mcp.ServerSession{}, "notifications/cancelled", "", false); err != nil || p.Len() != 0 {
		t.Errorf("a notification pinned: %v", err)
	}
}

// Every error of the rules, with its code and sentence.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		err  *jsonrpc.Error
		code int64
		text string
	}{
		{ErrParse("line", errors.New("e")), jsonrpc.CodeParseError, "Parse error: the line is not JSON: e"},
		{ErrParse("body", errors.New("e")), jsonrpc.CodeParseError, "Parse error: the body is not JSON: e"},
		{ErrBody(413, 10), jsonrpc.CodeInvalidRequest, "Invalid Request: the body is larger than 10 bytes"},
		{ErrBody(408, 10), jsonrpc.CodeInvalidRequest, "Invalid Request: the body was not sent in time"},
		{ErrBody(400, 10), jsonrpc.CodeInvalidRequest, "Invalid Request: the body could not be read"},
		{ErrNotJSONRPC(errors.New("e")), jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message: e"},
		{ErrTooDeep(1000), jsonrpc.CodeInvalidRequest, "Invalid Request: the message nests objects and arrays more than 1000 deep"},
		{ErrLineTooLong(10), jsonrpc.CodeInvalidRequest, "Invalid Request: the line is longer than 10 bytes"},
		{ErrBatch("the batch is empty"), jsonrpc.CodeInvalidRequest, "Invalid Request: the batch is empty"},
		{ErrBadID("1.5"), jsonrpc.CodeInvalidRequest, "Invalid Request: id 1.5 is not an integer or a string"},
		{ErrIDInUse("7"), jsonrpc.CodeInvalidRequest, "Invalid Request: id 7 is already used by a request still in progress"},
		{ErrDiscoverWithoutMeta(), jsonrpc.CodeInvalidParams, `server/discover must carry _meta["io.modelcontextprotocol/protocolVersion"]`},
		{ErrPinnedToHandshake(Connection, "2025-06-18", "tools/list", FirstSessionless), jsonrpc.CodeInvalidRequest, `this connection is pinned to protocol 2025-06-18, which it opened with; tools/list with _meta["io.modelcontextprotocol/protocolVersion"] "2026-07-28" is not accepted on it`},
		{ErrPinnedToHandshake(Session, "", "tools/list", FirstSessionless), jsonrpc.CodeInvalidRequest, "this session is pinned to protocol of the initialize handshake"},
		{ErrMetaRequired(FirstSessionless, "ping"), jsonrpc.CodeInvalidParams, `this connection speaks protocol 2026-07-28: every request must carry _meta["io.modelcontextprotocol/protocolVersion"] (ping did not)`},
		{ErrNoSession(), jsonrpc.CodeInvalidRequest, "Bad Request: no Mcp-Session-Id header; open a session with initialize, or send 2026-07-28 requests (Mcp-Protocol-Version and _meta)"},
	} {
		if tc.err.Code != tc.code || !strings.Contains(tc.err.Message, tc.text) {
			t.Errorf("%d %q, want %d and %q", tc.err.Code, tc.err.Message, tc.code, tc.text)
		}
	}
}
