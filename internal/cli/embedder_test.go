package cli

import (
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// embedder drives a stand-in embeddings endpoint (meaningtest) for a
// script:
//
//	embedder start MODEL   start one; MEMORY_EMBEDDINGS_URL and _MODEL name it
//	embedder key KEY       require KEY as the bearer token
//	embedder down|up       make it fail every request, or answer again
//	embedder texts N       it has embedded N texts of the model, in all
func embedder(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: embedder start MODEL | key KEY | down | up | texts N")
	}
	stub, _ := ts.Value("embedder").(*embedderState)
	switch {
	case args[0] == "start" && len(args) == 2:
		stub.model = args[1]
		stub.s = meaningtest.New(args[1])
		ts.Defer(stub.s.Close)
		ts.Setenv("MEMORY_EMBEDDINGS_URL", stub.s.BaseURL())
		ts.Setenv("MEMORY_EMBEDDINGS_MODEL", args[1])
	case stub.s == nil:
		ts.Fatalf("embedder start first")
	case args[0] == "key" && len(args) == 2:
		stub.s.SetKey(args[1])
	case args[0] == "down" || args[0] == "up":
		stub.s.SetDown(args[0] == "down")
	case args[0] == "texts" && len(args) == 2:
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		if got := len(stub.s.Texts(stub.model)); got != want {
			ts.Fatalf("the stand-in embedded %d texts, want %d", got, want)
		}
	default:
		ts.Fatalf("usage: embedder start MODEL | key KEY | down | up | texts N")
	}
}

type embedderState struct {
	s     *meaningtest.Server
	model string
}
