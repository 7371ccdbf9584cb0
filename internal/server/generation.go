package server

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// generation is the protocol generation a connection speaks.
type generation int

const (
	undecided generation = iota
	legacy               // 2024-11-05 … 2025-11-25: initialize handshake
	modern               // 2026-07-28: server/discover, per-request _meta
)

const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	modernVersion       = "2026-07-28"
)

// generationOf tells which generation a message belongs to, or undecided for
// messages both generations send (notifications other than initialized).
func generationOf(method string, req mcp.Request) generation {
	if method == "initialize" || method == "notifications/initialized" {
		return legacy
	}
	if method == "server/discover" {
		return modern
	}
	if strings.HasPrefix(method, "notifications/") {
		return undecided
	}
	// Params may be a typed nil (ping without params).
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if v, ok := p.GetMeta()[metaProtocolVersion].(string); ok && v >= modernVersion {
			return modern
		}
	}
	return legacy
}

// pinGeneration returns middleware that lets the first message of a
// connection decide its protocol generation and refuses, with a JSON-RPC
// error, later messages of the other generation (SPEC §4). The go-sdk serves
// each request by its own _meta and does not do this.
//
// It also makes sure no handler error leaves as a JSON-RPC error with code 0.
func pinGeneration() mcp.Middleware {
	var (
		mu       sync.Mutex
		sessions = make(map[weak.Pointer[mcp.ServerSession]]generation)
	)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if gen := generationOf(method, req); gen != undecided && ss != nil {
				key := weak.Make(ss)
				mu.Lock()
				pinned, seen := sessions[key]
				if !seen {
					sessions[key] = gen
					pinned = gen
					// Forget the session once it is gone.
					runtime.AddCleanup(ss, func(k weak.Pointer[mcp.ServerSession]) {
						mu.Lock()
						delete(sessions, k)
						mu.Unlock()
					}, key)
				}
				mu.Unlock()
				if err := mismatch(pinned, gen, method); err != nil {
					return nil, err
				}
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, wireError(err)
			}
			return res, nil
		}
	}
}

func mismatch(pinned, got generation, method string) error {
	switch {
	case pinned == got:
		return nil
	case pinned == legacy:
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidRequest,
			Message: "this connection opened with initialize and speaks the 2025 protocol; " + method + " with 2026-07-28 _meta is not accepted on it",
		}
	default:
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: "this connection speaks protocol 2026-07-28: every request must carry _meta[\"" + metaProtocolVersion + "\"] (" + method + " did not)",
		}
	}
}

// wireError gives err a JSON-RPC error code. The go-sdk sends a plain Go
// error as code 0, which clients cannot interpret.
func wireError(err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		if we.Code != 0 {
			if we == err {
				return err
			}
			return &jsonrpc.Error{Code: we.Code, Message: err.Error(), Data: we.Data}
		}
		err = errors.New(we.Message)
	}
	msg := err.Error()
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case strings.Contains(msg, "invalid during session initialization"),
		strings.Contains(msg, "duplicate \"initialize\""):
		code = jsonrpc.CodeInvalidRequest
	case strings.HasPrefix(msg, "handling '"), strings.Contains(msg, "unmarshaling"):
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: msg}
}
