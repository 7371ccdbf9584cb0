package server

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Error messages such as "saving /var/lib/mcp-memory/memory.jsonl: no space
// left on device" or "mkdir /srv/private: permission denied" are useful to
// the person running the server, whose log keeps them whole, but a remote
// client must not learn the server's file layout from them. Requests that
// arrive over HTTP therefore get error messages that name the memory file
// by its base name only and no directory.

// overHTTP reports whether req arrived over HTTP: the go-sdk hands an HTTP
// request's headers to the handlers, and only an HTTP request's.
func overHTTP(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && extra.Header != nil
}

// pathNames are the spellings of the memory file's path and of its
// directories that error messages may contain, longest first.
type pathNames struct {
	files []string // the memory file, as given and in clean form
	dirs  []string // its directory and the directories above it
}

func newPathNames(path string) pathNames {
	var p pathNames
	for _, f := range []string{path, filepath.Clean(path)} {
		if f == "" || slices.Contains(p.files, f) {
			continue
		}
		p.files = append(p.files, f)
		for d := filepath.Dir(f); d != filepath.Dir(d); d = filepath.Dir(d) {
			if !slices.Contains(p.dirs, d) {
				p.dirs = append(p.dirs, d)
			}
		}
	}
	byLength := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(p.files, byLength)
	slices.SortStableFunc(p.dirs, byLength)
	return p
}

// scrub takes paths out of msg: the memory file becomes its base name, a
// path under one of its directories loses that directory (longest first),
// and a directory alone becomes "the memory file's directory" or "a
// directory above the memory file".
func (p pathNames) scrub(msg string) string {
	for _, f := range p.files {
		msg = strings.ReplaceAll(msg, f, filepath.Base(f))
	}
	for _, d := range p.dirs {
		name := "a directory above the memory file"
		if slices.ContainsFunc(p.files, func(f string) bool { return filepath.Dir(f) == d }) {
			name = "the memory file's directory"
		}
		msg = strings.ReplaceAll(msg, d+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, d, name)
	}
	return msg
}

// hide scrubs the messages of a JSON-RPC error and of a tool error.
func (p pathNames) hide(res mcp.Result, err error) (mcp.Result, error) {
	if we, ok := err.(*jsonrpc.Error); ok {
		err = &jsonrpc.Error{Code: we.Code, Message: p.scrub(we.Message), Data: we.Data}
	}
	if tr, ok := res.(*mcp.CallToolResult); ok && tr != nil && tr.IsError {
		for _, c := range tr.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				tc.Text = p.scrub(tc.Text)
			}
		}
	}
	return res, err
}
