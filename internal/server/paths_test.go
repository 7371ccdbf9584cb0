package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/redact"
)

// Over HTTP (the request carries headers), error messages lose the paths
// the caller asked to hide; over stdio they keep them.
func TestHTTPErrorsNameNoPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret")
	file := filepath.Join(dir, "sub", "memory.jsonl")
	s := New(filestore.Open(file, filestore.Options{}), Options{WatchInterval: -1, Logf: t.Logf, HidePaths: []string{file}})
	failing := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return toolError(fmt.Errorf("mkdir %s: permission denied", dir)), &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "saving " + file}
	}
	handler := s.receive(failing)
	res, err := handler(context.Background(), "tools/call", &mcp.CallToolRequest{Extra: &mcp.RequestExtra{Header: http.Header{}}})
	text := res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text
	if strings.Contains(text, dir) || strings.Contains(err.Error(), dir) {
		t.Errorf("over HTTP: %q, %q", text, err)
	}
	res, err = handler(context.Background(), "tools/call", &mcp.CallToolRequest{})
	text = res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, dir) || !strings.Contains(err.Error(), dir) {
		t.Errorf("over stdio the path should stay: %q, %q", text, err)
	}
}

// A failed request's result is a typed nil: hiding paths in its error must
// not touch it (a tools/call of an unknown tool over HTTP crashed the
// server before).
func TestHideFailedCall(t *testing.T) {
	res, err := hide(redact.Paths("/srv/secret/memory.jsonl"), (*mcp.CallToolResult)(nil), &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool in /srv/secret"})
	if res.(*mcp.CallToolResult) != nil || err.(*jsonrpc.Error).Message != "unknown tool in the memory file's directory" {
		t.Fatalf("hide = %v, %v", res, err)
	}
}

// brokenDatabase is a store whose every call fails as a database that
// cannot be reached does: with its user, host and port in the message.
type brokenDatabase struct{}

type dbError struct{ error }

func (e dbError) Unwrap() error    { return e.error }
func (e dbError) Redacted() string { return "the database failed" }

var errUnreachable = fmt.Errorf("reading memory %q in PostgreSQL: %w", "default",
	dbError{errors.New("failed to connect to `user=memory database=team`: 10.9.8.7:5433 (db.internal): dial error: connection refused")})

func (brokenDatabase) View(context.Context, func(*graph.Graph) error) error { return errUnreachable }
func (brokenDatabase) Update(context.Context, graph.Write) (bool, error) {
	return false, errUnreachable
}
func (brokenDatabase) Watch(ctx context.Context, _ time.Duration, _ func()) { <-ctx.Done() }

// Over HTTP, a database failure says that the database failed and not
// where it is; over stdio the message is whole.
func TestHTTPErrorsNameNoDatabase(t *testing.T) {
	s := New(brokenDatabase{}, Options{WatchInterval: -1, Logf: t.Logf})
	overHTTP := &mcp.RequestExtra{Header: http.Header{}}
	_, err := s.readResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: answer.ResourceURI}, Extra: overHTTP})
	for _, secret := range []string{"10.9.8.7", "5433", "user=memory", "db.internal"} {
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Fatalf("resources/read over HTTP: %v; it names %s", err, secret)
		}
	}
	if want := `reading memory "default" in PostgreSQL: the database failed`; err.Error() != want {
		t.Errorf("resources/read over HTTP: %q, want %q", err, want)
	}
	if err := s.clientError(&mcp.CallToolRequest{Extra: overHTTP}, errUnreachable); !errors.Is(err, errUnreachable) {
		t.Errorf("the redacted error lost its cause: %v", err)
	}
	_, err = s.readResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: answer.ResourceURI}})
	if err == nil || !strings.Contains(err.Error(), "10.9.8.7:5433") {
		t.Errorf("resources/read over stdio: %v, want the whole message", err)
	}
}
