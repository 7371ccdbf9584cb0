package protocol

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The errors of the protocol rules, as JSON-RPC errors with their codes.
// protocol_test.go checks each code and sentence.

// ErrParse answers a message that is not JSON: a stdio line, or what
// names an HTTP request's body.
func ErrParse(what string, err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: the " + what + " is not JSON: " + err.Error()}
}

// ErrBody answers an HTTP request whose body could not be read whole:
// status is the HTTP status it is refused with (413: over limit bytes;
// 408: not sent within the read deadline; 400: the connection failed).
func ErrBody(status int, limit int64) *jsonrpc.Error {
	e := &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the body could not be read"}
	switch status {
	case 413:
		e.Message = fmt.Sprintf("Invalid Request: the body is larger than %d bytes", limit)
	case 408:
		e.Message = "Invalid Request: the body was not sent in time"
	}
	return e
}

// ErrLineTooLong answers a stdio line over the length limit.
func ErrLineTooLong(limit int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the line is longer than %d bytes", limit)}
}

// ErrTooDeep answers a message that nests objects and arrays deeper than
// limit.
func ErrTooDeep(limit int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the message nests objects and arrays more than %d deep", limit)}
}

// ErrNotJSONRPC answers JSON that is not a JSON-RPC message.
func ErrNotJSONRPC(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: not a JSON-RPC 2.0 message: " + err.Error()}
}

// ErrBatch refuses a JSON-RPC batch: an empty one, or one in a protocol
// without batches.
func ErrBatch(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + reason}
}

// ErrBadID refuses a request whose id is a number with a fraction or
// exponent (BadID): it would be answered under another id.
func ErrBadID(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is not an integer or a string", id)}
}

// ErrIDInUse refuses a request whose id is already used by a request of
// this connection that has not been answered.
func ErrIDInUse(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is already used by a request still in progress", id)}
}

// ErrDiscoverWithoutMeta refuses server/discover without the protocol
// version in _meta, like every other request of the sessionless protocol.
func ErrDiscoverWithoutMeta() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("server/discover must carry _meta[%q]", mcp.MetaKeyProtocolVersion)}
}

// Pinned names what a handshake-era client opened: a connection (stdio)
// or a session (HTTP), as the refusal of the other generation says.
type Pinned string

const (
	Connection Pinned = "connection"
	Session    Pinned = "session"
)

// ErrPinnedToHandshake refuses, on a connection or session that opened
// with initialize, a request of a sessionless protocol. pinned is the
// version initialize negotiated ("" before it did).
func ErrPinnedToHandshake(what Pinned, pinned, method, requested string) *jsonrpc.Error {
	if pinned == "" {
		pinned = "of the initialize handshake"
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("this %s is pinned to protocol %s, which it opened with; %s with _meta[%q] %q is not accepted on it", what, pinned, method, mcp.MetaKeyProtocolVersion, requested),
	}
}

// ErrMetaRequired refuses, on a connection of a sessionless protocol, a
// request without the protocol version in _meta.
func ErrMetaRequired(pinned, method string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("this connection speaks protocol %s: every request must carry _meta[%q] (%s did not)", pinned, mcp.MetaKeyProtocolVersion, method),
	}
}

// ErrNoSession refuses, over HTTP, a request that is neither in a 2025
// session nor of a sessionless protocol, nor an initialize: the transport
// specification answers it with 400.
func ErrNoSession() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Bad Request: no Mcp-Session-Id header; open a session with initialize, or send %s requests (Mcp-Protocol-Version and _meta)", FirstSessionless)}
}
