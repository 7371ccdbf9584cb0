// Package protocol holds the MCP protocol rules that this server applies
// on every transport, each defined once: which generation a message
// speaks, the pinning of a connection (stdio) or session (HTTP) to the
// generation it opened with, the checks made before the go-sdk sees a
// message, and the error sentences of all three. internal/server (stdio
// and the middleware every transport shares) and internal/httpserver (the
// router in front of the go-sdk's HTTP handlers) both use it, so a rule
// and its sentence cannot drift apart between them.
package protocol

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FirstSessionless is the first protocol version without the initialize
// handshake: its requests carry their version in
// _meta[mcp.MetaKeyProtocolVersion], and so does every later version.
// Versions are dates, so they compare as strings.
const FirstSessionless = "2026-07-28"

// firstWithoutBatches is the first protocol version without JSON-RPC
// batches.
const firstWithoutBatches = "2025-06-18"

// Sessionless reports whether version is a protocol without the initialize
// handshake. "" stands for a handshake-era version not yet negotiated.
func Sessionless(version string) bool { return version >= FirstSessionless }

// HasBatches reports whether a connection that negotiated version ("" for
// none yet) may send JSON-RPC batches.
func HasBatches(version string) bool { return version < firstWithoutBatches }

// MetaVersion is the sessionless version a request's _meta declares, or
// "" when it declares none (or a handshake-era one); declared reports
// whether it names a version at all.
func MetaVersion(meta map[string]any) (version string, declared bool) {
	v, declared := meta[mcp.MetaKeyProtocolVersion].(string)
	if !Sessionless(v) {
		v = ""
	}
	return v, declared
}

// RequestVersion is the protocol version a message speaks: the version its
// _meta declares for a sessionless protocol, or "" for the handshake era
// (initialize negotiates the exact version). decides is false for
// notifications that every protocol sends, which pin nothing.
func RequestVersion(method string, req mcp.Request) (version string, decides bool) {
	if method == "initialize" || method == "notifications/initialized" {
		return "", true
	}
	if strings.HasPrefix(method, "notifications/") {
		return "", false
	}
	// Params may be a typed nil (ping without params).
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		v, _ := MetaVersion(p.GetMeta())
		return v, true
	}
	return "", true
}

// DiscoverLacksMeta reports whether a message is a server/discover without
// the protocol version in its _meta, which the go-sdk would answer as an
// unknown method (-32601) rather than invalid params (ErrDiscoverWithoutMeta).
func DiscoverLacksMeta(method string, meta map[string]any) bool {
	_, declared := MetaVersion(meta)
	return method == "server/discover" && !declared
}

// BadID reports whether a request id (as JSON) is a number that is not an
// integer, such as 1.5 or 1e2: the go-sdk would answer it under another
// id (ErrBadID). Strings and null are good ids.
func BadID(raw []byte) bool {
	if len(raw) == 0 || raw[0] == '"' || string(raw) == "null" {
		return false
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err != nil
}

// MaxNesting is how deep the go-sdk's decoder lets a message nest (objects
// and arrays, the message as a whole); it refuses deeper ones with an
// error that on stdio ends the connection (ErrTooDeep).
const MaxNesting = 1000

// NestingDepth returns how deeply a message nests objects and arrays,
// counting as the go-sdk's decoder does: brackets outside strings.
func NestingDepth(msg []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range msg {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth = max(0, depth-1)
		}
	}
	return deepest
}
