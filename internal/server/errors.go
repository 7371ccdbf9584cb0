package server

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
)

// How an error gets its JSON-RPC code, and the errors of the server's own
// (the protocol rules' errors are internal/protocol's). Everything that
// decides a code is in this file; TestErrorCodes (server_test.go) checks
// every mapping.

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

func errUnknownResource(uri string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown resource %q: the resources are %s and %s", uri, answer.ResourceURI, StandingURI)}
}

func errInternal(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
