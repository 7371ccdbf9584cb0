package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/protocol"
)

// Caching hints (ttlMs, cacheScope) exist from protocol 2026-07-28 on. The
// go-sdk fills them in on server/discover, the list methods and
// resources/read, as "public" unless told otherwise, and in every protocol.

// setCacheable marks results that carry memory content as private: the
// memory is about a person, and no shared cache may keep it. The tool and
// resource lists are the same for everyone and stay public, but for the
// tool list a read-only token sees.
func setCacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ReadResourceRequest:
		c.CacheScope = "private"
	case *mcp.ListToolsRequest:
		// A read-only token's list is its own (readToolsOnly).
		if !mayWrite(req) {
			c.CacheScope = "private"
		}
	}
}

// withoutCacheHints drops the caching hints from a result of a protocol
// version that has none.
func withoutCacheHints(res mcp.Result, version string) mcp.Result {
	if protocol.Sessionless(version) {
		return res
	}
	switch r := res.(type) {
	case *mcp.ReadResourceResult:
		return resourceWithoutHints{r}
	case *mcp.ListToolsResult, *mcp.ListResourcesResult, *mcp.ListResourceTemplatesResult, *mcp.ListPromptsResult:
		return listWithoutHints{r}
	}
	return res
}

// resourceWithoutHints is a resources/read result as the handshake-era
// protocols define it.
type resourceWithoutHints struct{ *mcp.ReadResourceResult }

func (r resourceWithoutHints) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Meta     mcp.Meta                `json:"_meta,omitempty"`
		Contents []*mcp.ResourceContents `json:"contents"`
	}{r.Meta, r.Contents})
}

// listWithoutHints is a list result as the handshake-era protocols define
// it (lists are small).
type listWithoutHints struct{ mcp.Result }

func (r listWithoutHints) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}
