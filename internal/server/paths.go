package server

import (
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/redact"
)

// Error messages such as "saving /var/lib/mcp-memory/memory.jsonl: no space
// left on device" or a PostgreSQL driver's "failed to connect to
// `user=… database=…`: host:port" are useful to the person running the
// server, whose log keeps them whole, but a remote client must not learn
// the server's file layout or where its database is from them. Requests
// that arrive over HTTP therefore get error messages without the paths of
// Options.HidePaths and without the database's details (internal/redact).

// overHTTP reports whether req arrived over HTTP: the go-sdk hands an HTTP
// request's headers to the handlers, and only an HTTP request's.
func overHTTP(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && extra.Header != nil
}

// clientError returns err as the client that sent req may read it: whole
// over stdio, redacted over HTTP. The original stays the error's cause, for
// the log and for errors.As.
func (s *Server) clientError(req mcp.Request, err error) error {
	if err == nil || !overHTTP(req) {
		return err
	}
	if msg := s.hide.Error(err); msg != err.Error() {
		s.logf("answered an HTTP client without the details: %v", err)
		return redacted{msg: msg, err: err}
	}
	return err
}

// redacted is an error whose message a remote client may read.
type redacted struct {
	msg string
	err error
}

func (e redacted) Error() string { return e.msg }
func (e redacted) Unwrap() error { return e.err }

// hide takes the paths out of the messages of a JSON-RPC error and of a
// tool error, whatever produced them (the go-sdk's own errors included).
func hide(rules redact.Rules, res mcp.Result, err error) (mcp.Result, error) {
	if we, ok := err.(*jsonrpc.Error); ok {
		err = &jsonrpc.Error{Code: we.Code, Message: rules.Message(we.Message), Data: we.Data}
	}
	if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && tr.IsError {
		for _, c := range tr.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = rules.Message(tc.Text)
			}
		}
	}
	return res, err
}
