package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/meaning"
	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

var cmdEmbed = &command{
	name:    "embed",
	summary: "compute the vectors search by meaning uses, showing progress",
	help: `Asks the embeddings endpoint (MEMORY_EMBEDDINGS_URL, MEMORY_EMBEDDINGS_MODEL
and the API key, set as for the server) for the vector of every text of the
memory that has none yet, in batches, and keeps them where the server
does: the vectors file beside the memory file (MEMORY_FILE.vectors), or
for a memory in PostgreSQL (MEMORY_DATABASE_URL, --memory NAME) the table
its replicas share. The server does the same in the
background; this shows a big memory's progress and finishes it before the
server searches. Ctrl-C stops after the batch in flight (a second Ctrl-C at
once); run embed again to continue: stored vectors are not computed again.
Exit codes: 0 every text has a vector, 1 the endpoint or the memory failed
(the batches done are kept), 2 bad usage, 130 stopped by Ctrl-C.

  --batch N     texts per request (default 64): lower it for an endpoint
                that takes fewer inputs at once
`,
	run: runEmbed,
}

// Embedded is what embed prints with --json.
type Embedded struct {
	VectorCount
	// Computed is how many vectors this run asked for.
	Computed int `json:"computed"`
}

// errInterrupted is a command stopped by Ctrl-C after saying how far it
// got (exit 130).
var errInterrupted = errors.New("interrupted")

func runEmbed(c *context_, args []string) error {
	batch := c.flags.Int("batch", 64, "")
	args, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("embed takes no arguments")
	}
	e, err := c.embeddings(*batch)
	if err != nil {
		return err
	}
	s, err := c.open(false)
	if err != nil {
		return err
	}
	defer s.close()
	ix := meaning.OpenStorage(s.vectors(), meaning.NewClient(e.URL, e.Model, e.APIKey()), meaning.Options{Logf: c.logf, BatchSize: *batch})

	// The first Ctrl-C stops between batches; after it, Ctrl-C has its
	// usual effect again, for an endpoint that does not answer.
	ctx, stop := interruptible()
	defer stop()
	bar := c.progress("texts have a vector")
	defer stopOnInterrupt(ctx, stop, bar)()
	start, have := -1, 0
	err = ix.Backfill(context.Background(), s, func(h, w int) error {
		if start < 0 {
			start = h
			sayAsking(bar, e, h, w)
		}
		have = h
		bar.show(h, w)
		return ctx.Err()
	})
	bar.end()
	return c.reportEmbedded(s, e, max(0, have-start), ctx.Err() != nil, err)
}

// embeddings checks embed's settings: the batch size and the endpoint.
func (c *context_) embeddings(batch int) (memoryconfig.Embeddings, error) {
	e := c.config.Embeddings
	if batch < 1 || batch > 2048 {
		return e, usagef("--batch must be 1..2048")
	}
	if err := c.config.EmbeddingsErr(); err != nil {
		return e, usageError{err.Error()}
	}
	if !e.On() {
		return e, usagef("search by meaning is off: set MEMORY_EMBEDDINGS_URL to an OpenAI-compatible API (such as http://127.0.0.1:11434/v1 for Ollama) and MEMORY_EMBEDDINGS_MODEL to the model, as for the server")
	}
	return e, nil
}

// stopOnInterrupt says, on the first Ctrl-C, that embed stops after the
// batch in flight, and gives Ctrl-C its usual effect back. The function
// it returns ends the watch.
func stopOnInterrupt(ctx context.Context, stop func(), bar *progress) (done func()) {
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop()
			bar.say("stopping after the batch in flight (Ctrl-C again stops at once)")
		case <-finished:
		}
	}()
	return func() { close(finished) }
}

// sayAsking says how many vectors embed asks e for, when it asks for any:
// h of w texts have one.
func sayAsking(bar *progress, e memoryconfig.Embeddings, h, w int) {
	if h >= w {
		return
	}
	n := "vectors"
	if w-h == 1 {
		n = "vector"
	}
	bar.say("asking %s for %s %s", e, thousands(w-h), n)
}

// reportEmbedded says what the file holds now, not what was asked for:
// computed vectors came in this run; interrupted by Ctrl-C, or stopped by
// err, it says how to continue.
func (c *context_) reportEmbedded(s *memory, e memoryconfig.Embeddings, computed int, interrupted bool, err error) error {
	stored, want, cerr := meaning.Count(s.vectors(), e.Model, s.View)
	if cerr != nil {
		return cerr
	}
	left := fmt.Sprintf("%s of %s texts have a vector (%s computed now); run embed again to continue", thousands(stored), thousands(want), thousands(computed))
	switch {
	case interrupted && stored < want:
		c.logf("stopped by Ctrl-C: %s", left)
		return errInterrupted
	case err != nil:
		c.logf("%v; %s", err, left)
		return errReported
	}
	if c.json {
		return c.printJSON(Embedded{VectorCount{Model: e.Model, Ready: stored, Texts: want}, computed})
	}
	c.printf("Vectors         %d of %d texts, by model %q (%d computed now)\n", stored, want, e.Model, computed)
	return nil
}
