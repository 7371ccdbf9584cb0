package meaning

import (
	"context"
	"fmt"
	"time"
)

// checkDims refuses vectors of another length than the model's: that of
// the kept vectors of the memory's texts, or else of the first answer. A
// model changed under the same name would otherwise mix vectors that
// cannot be compared.
func (ix *Index) checkDims(got int) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.dims == 0 {
		ix.dims = got
	search:
		for _, ks := range ix.entities {
			for _, k := range ks {
				if v, ok := ix.vectors[k]; ok {
					ix.dims = len(v.q)
					break search
				}
			}
		}
	}
	if got != ix.dims {
		return fmt.Errorf("the embeddings endpoint answered vectors of %d dimensions for model %q, whose kept vectors have %d: "+
			"if the model changed, remove the kept vectors (the .vectors file beside the memory file, or the memory's rows in PostgreSQL) to embed everything again, or name the new model",
			got, ix.client.Model(), ix.dims)
	}
	return nil
}

// failed logs an outage of the endpoint once, at its start.
func (ix *Index) failed(err error) {
	why := err.Error()
	ix.shared.why.Store(&why)
	if !ix.shared.down.Swap(true) {
		ix.opts.Logf("search by meaning: %v; searching by words only until the endpoint answers again", err)
	}
}

// answered logs the end of an outage.
func (ix *Index) answered() {
	if ix.shared.down.Swap(false) {
		ix.opts.Logf("search by meaning: the embeddings endpoint answers again")
	}
}

// Down reports whether the endpoint's last answer, to any memory sharing
// this Index's Shared, was a failure, and what it was.
func (ix *Index) Down() (down bool, why string) {
	if !ix.shared.down.Load() {
		return false, ""
	}
	if p := ix.shared.why.Load(); p != nil {
		why = *p
	}
	return true, why
}

// Endpoint is the endpoint's base URL, without any user or password it
// holds, to name it in a note.
func (ix *Index) Endpoint() string { return ix.client.Endpoint() }

// A Query is a search's text as a vector.
type Query struct{ v vector }

// Query returns the vector of a search's text, from the cache of recent
// queries or from the endpoint within QueryTimeout. Its error says why
// there is none.
func (ix *Index) Query(ctx context.Context, text string) (Query, error) {
	now := time.Now()
	model := ix.client.Model()
	if v, ok := ix.shared.query(model, text, now); ok {
		return Query{v}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	done, err := ix.shared.ask(ctx)
	if err != nil {
		return Query{}, err
	}
	vs, err := ix.client.Embed(ctx, []string{text})
	done()
	if err == nil {
		err = ix.checkDims(len(vs[0]))
	}
	if err != nil {
		ix.failed(err)
		return Query{}, err
	}
	ix.answered()
	v := quantise(vs[0])
	ix.shared.keepQuery(model, text, v, now)
	return Query{v}, nil
}
