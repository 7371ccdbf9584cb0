package pgstore_test

import (
	"os"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore"
	"github.com/kgmemory/mcp-server-memory/internal/pgstore/pgtest"
	"github.com/kgmemory/mcp-server-memory/internal/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openMemory returns an opener of a new memory: each call connects anew, as
// another replica would.
func openMemory(t *testing.T) func(t *testing.T) *pgstore.Store {
	url, name := pgtest.URL(t), pgtest.MemoryName(t)
	return func(t *testing.T) *pgstore.Store {
		t.Helper()
		return pgtest.Open(t, url, name, pgstore.Options{})
	}
}

func TestContract(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) storetest.Memory {
		open := openMemory(t)
		return func(t *testing.T) graph.Store { return open(t) }
	})
}
