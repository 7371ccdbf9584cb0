package main

import (
	"log"

	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

// openMeaning opens search by meaning for the memory m when
// MEMORY_EMBEDDINGS_URL is set, and returns its index, which the memory's
// server runs while the memory is open (server.Server.Watch); nil, with
// nothing opened, when it is not set or cannot apply. A memory file's
// vectors file is read now, so that one that is not a vectors file turns
// search by meaning off at once; a database's vectors are read by the
// index's first pass. The indexes of named memories share one
// meaning.Shared (nil: the index's own).
func openMeaning(cfg memoryconfig.Config, m *memoryconfig.Memory, shared *meaning.Shared, logf func(string, ...any)) *meaning.Index {
	e := cfg.Embeddings
	if !e.On() {
		return nil
	}
	c := meaning.NewClient(e.URL, e.Model, e.APIKey())
	opts := meaning.Options{Logf: logf, Shared: shared}
	if m.File == nil {
		return meaning.OpenStorage(m.Vectors(), c, opts)
	}
	ix, err := meaning.Open(meaning.VectorsPath(m.File.Path()), c, opts)
	if err != nil {
		logf("search by meaning is off for %s: %v", m.Where, err)
		return nil
	}
	return ix
}

// logMeaning says that search by meaning is on, and through what, when
// on.
func (o options) logMeaning(logger *log.Logger, on bool) {
	if on {
		logger.Printf("search by meaning: %s", o.env.Embeddings)
	}
}
