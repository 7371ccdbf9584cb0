package httpserver_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/httpserver"
	"github.com/kgmemory/mcp-server-memory/internal/server"
)

// TestOneShape: New takes one Config whatever it serves. It wants grants
// and memories; the grants of a server of one memory make New open that
// memory, once, before any request, and fail when it cannot be opened;
// a tokens file's open nothing before a request.
func TestOneShape(t *testing.T) {
	mem := httpserver.Memory{Server: server.New(filestore.Open(filepath.Join(t.TempDir(), "m.jsonl"), filestore.Options{}), server.Options{})}
	var asked []string
	memories := func(_ context.Context, name string) (httpserver.Memory, error) {
		asked = append(asked, name)
		return mem, nil
	}
	grants := tokenGrants(t, testToken)
	for _, tc := range []struct {
		cfg  httpserver.Config
		want string
	}{
		{httpserver.Config{Addr: "127.0.0.1:0", Memories: memories}, "no grants"},
		{httpserver.Config{Addr: "127.0.0.1:0", Grants: grants}, "no memory to serve"},
		{httpserver.Config{Addr: "127.0.0.1:0", Grants: grants, Memories: func(context.Context, string) (httpserver.Memory, error) {
			return httpserver.Memory{}, errors.New("the disk is gone")
		}}, "the disk is gone"},
	} {
		if _, err := httpserver.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want an error saying %q", err, tc.want)
		}
	}
	hs, err := httpserver.New(httpserver.Config{Addr: "127.0.0.1:0", Grants: grants, Memories: memories})
	if err != nil {
		t.Fatal(err)
	}
	if open := hs.OpenMemories(); !slices.Equal(asked, []string{"default"}) || !slices.Equal(open, []string{"default"}) {
		t.Errorf("a server of one memory asked for %q and holds %q open, want the memory default", asked, open)
	}
	ns := startNamed(t, teamTokens)
	if open := ns.hs.OpenMemories(); len(open) != 0 {
		t.Errorf("named memories open before any request: %q", open)
	}
}
