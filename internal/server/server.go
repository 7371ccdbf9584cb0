// Package server wires the knowledge graph to MCP with the official go-sdk:
// the nine tools, the memory://knowledge-graph resource, change
// notifications for both protocol generations, and the pinning of each
// connection to the generation it opened with. It translates between MCP
// and the graph; the graph and the file store decide.
package server

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// ResourceURI is the knowledge graph as an MCP resource.
const ResourceURI = "memory://knowledge-graph"

// Options tune a Server.
type Options struct {
	// Name and Version identify the server to clients.
	Name, Version string
	// WatchInterval is how often the memory file is checked for changes by
	// other processes; 0 means one second, negative disables watching.
	WatchInterval time.Duration
	// Logf writes diagnostics; nil writes to stderr.
	Logf func(format string, args ...any)
}

// Server is the memory server: one store served to any number of MCP
// sessions.
type Server struct {
	mcp   *mcp.Server
	store *filestore.Store
	opts  Options

	results         results  // pre-encoded results waiting for their response (stdio)
	parkingSessions sync.Map // session IDs of connections that take parked results
}

// New returns a Server for store.
func New(store *filestore.Store, opts Options) *Server {
	if opts.Logf == nil {
		opts.Logf = log.New(os.Stderr, "", log.LstdFlags).Printf
	}
	if opts.WatchInterval == 0 {
		opts.WatchInterval = time.Second
	}
	if opts.Name == "" {
		opts.Name = "mcp-server-memory"
	}
	s := &Server{store: store, opts: opts}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: "Knowledge Graph Memory", Version: opts.Version}, &mcp.ServerOptions{
		// No logging capability: the server never sends log messages. The
		// prompts capability is declared because the SDK answers
		// prompts/list (with no prompts) whatever is declared.
		Capabilities:       &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{}},
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.mcp.AddReceivingMiddleware(pinGeneration())
	s.addTools()
	s.mcp.AddResource(&mcp.Resource{
		URI:         ResourceURI,
		Name:        "knowledge-graph",
		Title:       "Knowledge Graph",
		Description: "The full knowledge graph with all entities and relations",
		MIMEType:    "application/json",
	}, s.readResource)
	return s
}

// MCP returns the underlying go-sdk server, for transports other than stdio.
func (s *Server) MCP() *mcp.Server { return s.mcp }

func (s *Server) logf(format string, args ...any) { s.opts.Logf(format, args...) }

// Run serves one connection over t until the peer goes away or ctx ends,
// watching the memory file for other writers meanwhile. For stdio, use
// RunStdio.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.run(ctx, &transport{inner: t, s: s})
}

func (s *Server) run(ctx context.Context, t *transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	return s.mcp.Run(ctx, t)
}

// Watch tells subscribers when another process changes the memory file,
// until ctx ends.
func (s *Server) Watch(ctx context.Context) {
	if s.opts.WatchInterval < 0 {
		return
	}
	s.store.Watch(ctx, s.opts.WatchInterval, func() { s.graphChanged(ctx) })
}

func (s *Server) graphChanged(ctx context.Context) {
	if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: ResourceURI}); err != nil {
		s.logf("notifying subscribers: %v", err)
	}
}

func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if req.Params.URI != ResourceURI {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown resource %q: the only resource is %s", req.Params.URI, ResourceURI)}
	}
	return nil
}

func (s *Server) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var text []byte
	if err := s.store.View(func(g *graph.Graph) { text = encodeJSON(true, writeSelection(g.All())) }); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      ResourceURI,
		MIMEType: "application/json",
		Text:     string(text),
	}}}, nil
}
