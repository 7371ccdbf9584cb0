package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

// memoryBackend is where a server under test keeps its memory: a file
// (MEMORY_FILE_PATH) or a PostgreSQL database (MEMORY_DATABASE_URL).
type memoryBackend interface {
	// fresh puts a fresh copy of the memory file graphFile ("" for an
	// empty memory) where a server will find it; dir is scratch space of
	// this run alone.
	fresh(ctx context.Context, graphFile, dir string) (*memoryCopy, error)
}

// memoryCopy is one fresh memory, used by one run of one server.
type memoryCopy struct {
	// env is what the server's environment gains: the last value of a
	// repeated key wins, so it overrides the caller's.
	env []string
	// bytes is how much the memory takes now: the file's size, or the
	// memory's tables and indexes in the database.
	bytes func(ctx context.Context) int64
	// database names the database the memory is in, whose backends the
	// run watches; "" for a file.
	database string
	// describe says where the memory is and what preparing it took, for
	// the notes under the table; "" for nothing to say.
	describe string
	remove   func()
}

// fileBackend keeps each run's memory in a copy of the generated file.
type fileBackend struct{}

func (fileBackend) fresh(_ context.Context, graphFile, dir string) (*memoryCopy, error) {
	path := filepath.Join(dir, "memory.jsonl")
	if graphFile != "" {
		if err := serverproc.CopyFile(graphFile, path); err != nil {
			return nil, err
		}
	}
	return &memoryCopy{
		// MEMORY_DATABASE_URL set in the caller's environment would
		// take the server to a database, and MEMORY_EMBEDDINGS_URL turn
		// search by meaning on: empty them.
		env: []string{"MEMORY_FILE_PATH=" + path, "MEMORY_DATABASE_URL=", "MEMORY_EMBEDDINGS_URL=", "MEMORY_EMBEDDINGS_MODEL=", "MEMORY_EMBEDDINGS_API_KEY=", "MEMORY_EMBEDDINGS_API_KEY_FILE="},
		bytes: func(context.Context) int64 {
			if fi, err := os.Stat(path); err == nil {
				return fi.Size()
			}
			return 0
		},
		remove: func() { os.Remove(path) },
	}, nil
}
