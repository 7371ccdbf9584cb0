package server

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
)

// The JSON-RPC errors this server sends, and how an error gets its code.
// Everything that decides a code is in this file; TestErrorCodes in
// server_test.go checks the mappings.

// wireError gives err a JSON-RPC code. An error that carries one (a
// *jsonrpc.Error anywhere in its chain, as the go-sdk's own errors do) keeps
// it. The go-sdk sends any other error as code 0, which clients cannot
// interpret; those are classified by where they arise, never by their text:
// a failed initialize is a duplicate initialize, an invalid request; an
// error before the session is initialized is the go-sdk refusing a request
// that must wait for initialize, also an invalid request; anything else is
// an internal error.
func wireError(method string, err error) *jsonrpc.Error {
	return classify(method, true, err)
}

// classify is wireError for a connection that knows whether its session has
// been initialized (stdio sees the go-sdk's errors before any middleware).
func classify(method string, initialized bool, err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		if we == err {
			return we
		}
		return &jsonrpc.Error{Code: we.Code, Message: err.Error(), Data: we.Data}
	}
	code := int64(jsonrpc.CodeInternalError)
	if method == "initialize" || !initialized {
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// errParse answers a stdio line that is not JSON.
func errParse(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: the line is not JSON: " + err.Error()}
}

// errLineTooLong answers a stdio line over the length limit.
func errLineTooLong(limit int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the line is longer than %d bytes", limit)}
}

// errTooDeep answers a stdio line that nests objects and arrays deeper
// than limit.
func errTooDeep(limit int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the message nests objects and arrays more than %d deep", limit)}
}

// errNotJSONRPC answers a stdio line that is JSON but not a JSON-RPC
// message.
func errNotJSONRPC(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: not a JSON-RPC 2.0 message: " + err.Error()}
}

// errBatch refuses a JSON-RPC batch: an empty one, or one in a protocol
// without batches.
func errBatch(reason string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + reason}
}

// errBadID refuses a request whose id is a number with a fraction or
// exponent: it would be answered under another id.
func errBadID(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is not an integer or a string", id)}
}

// errIDInUse refuses a request whose id is already used by a request of
// this connection that has not been answered.
func errIDInUse(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is already used by a request still in progress", id)}
}

// errDiscoverWithoutMeta refuses server/discover without the protocol
// version in _meta, like every other request of the sessionless protocol.
func errDiscoverWithoutMeta() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("server/discover must carry _meta[%q]", mcp.MetaKeyProtocolVersion)}
}

// errPinnedToHandshake refuses, on a connection that opened with
// initialize, a request of a sessionless protocol. pinned is the version
// initialize negotiated ("" before it did).
func errPinnedToHandshake(pinned, method, requested string) *jsonrpc.Error {
	if pinned == "" {
		pinned = "of the initialize handshake"
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("this connection is pinned to protocol %s, which it opened with; %s with _meta[%q] %q is not accepted on it", pinned, method, mcp.MetaKeyProtocolVersion, requested),
	}
}

// errMetaRequired refuses, on a connection of a sessionless protocol, a
// request without the protocol version in _meta.
func errMetaRequired(pinned, method string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("this connection speaks protocol %s: every request must carry _meta[%q] (%s did not)", pinned, mcp.MetaKeyProtocolVersion, method),
	}
}

func errUnknownResource(uri string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown resource %q: the resources are %s and %s", uri, answer.ResourceURI, StandingURI)}
}

func errInternal(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
