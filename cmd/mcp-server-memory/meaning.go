package main

import (
	"context"

	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

// startMeaning starts search by meaning for the memory m when
// MEMORY_EMBEDDINGS_URL is set, and returns its index, until ctx ends;
// nil, with nothing started, when it is not set or cannot apply.
func startMeaning(ctx context.Context, cfg memoryconfig.Config, m *memoryconfig.Memory, logf func(string, ...any)) *meaning.Index {
	e := cfg.Embeddings
	if !e.On() {
		return nil
	}
	if m.File == nil {
		logf("search by meaning keeps its vectors beside a memory file, and not yet in PostgreSQL: MEMORY_EMBEDDINGS_URL is not used")
		return nil
	}
	ix, err := meaning.Open(meaning.VectorsPath(m.File.Path()), meaning.NewClient(e.URL, e.Model, e.APIKey()), meaning.Options{Logf: logf})
	if err != nil {
		logf("search by meaning is off: %v", err)
		return nil
	}
	logf("search by meaning: %s", e)
	go ix.Run(ctx, m.Store)
	return ix
}
