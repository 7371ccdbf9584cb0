package storetest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/storetest"
)

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Memory {
		path := filepath.Join(t.TempDir(), "memory.jsonl")
		return func(t *testing.T) graph.Store {
			return filestore.Open(path, filestore.Options{
				Logf: t.Logf,
				Lock: filestore.LockOptions{Timeout: 20 * time.Second},
			})
		}
	})
}
