package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// embeddingsStub is --embeddings' value that starts the project's
// stand-in endpoint in this process, and stubModel the model it serves.
const (
	embeddingsStub = "stub"
	stubModel      = "stand-in"
)

// meaningBackend keeps each run's memory in a copy of the generated file,
// as fileBackend does, with search by meaning on through the endpoint at
// url. Before the server starts, the command's embed computes the vector
// of every text, so the timed server starts as a user's does after the
// first background pass: its writes cost what they cost with the
// vectors ready.
type meaningBackend struct {
	command, url, model string
}

// startStub starts the stand-in endpoint: vectors of hashed words, no
// model. The caller closes it.
func startStub() *meaningtest.Server { return meaningtest.New(stubModel) }

func (b meaningBackend) fresh(ctx context.Context, graphFile, dir string) (*memoryCopy, error) {
	mem, err := fileBackend{}.fresh(ctx, graphFile, dir)
	if err != nil {
		return nil, err
	}
	mem.env = append(mem.env, "MEMORY_EMBEDDINGS_URL="+b.url, "MEMORY_EMBEDDINGS_MODEL="+b.model)
	if graphFile == "" {
		return mem, nil
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", b.command+" embed")
	cmd.Env = append(os.Environ(), mem.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		mem.remove()
		return nil, fmt.Errorf("computing the vectors first (%s embed): %v\n%s", b.command, err, strings.TrimSpace(string(out)))
	}
	mem.describe = fmt.Sprintf("search by meaning on (model %q); every text's vector computed by `embed` before the run, in %s", b.model, fmtDuration(time.Since(start)))
	return mem, nil
}
