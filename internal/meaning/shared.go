package meaning

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Shared is what the indexes of one server's memories share
// (Options.Shared): whether the endpoint is down, so that an outage is
// logged once whichever memories meet it, and the vectors of recent
// queries, at most maxQueries for all of them together (a query's vector
// depends on the model and the text, not on the memory).
type Shared struct {
	down atomic.Bool            // the endpoint's last answer was a failure
	why  atomic.Pointer[string] // and what it was, while down
	// asking holds a token per query being embedded: at most
	// maxAsking at once, for all the memories together.
	asking chan struct{}

	mu      sync.Mutex
	queries map[string]cachedQuery // by model, a zero byte and the text
}

type cachedQuery struct {
	v  vector
	at time.Time
}

// queryTTL is how long a query's vector is kept, and maxQueries how many.
const (
	queryTTL   = 10 * time.Minute
	maxQueries = 1024
	maxAsking  = 4
)

// NewShared returns what indexes will share.
func NewShared() *Shared {
	return &Shared{queries: make(map[string]cachedQuery), asking: make(chan struct{}, maxAsking)}
}

// ask waits for a turn to embed a query, until ctx ends; done ends the
// turn.
func (s *Shared) ask(ctx context.Context) (done func(), err error) {
	select {
	case s.asking <- struct{}{}:
		return func() { <-s.asking }, nil
	case <-ctx.Done():
		return nil, ErrBusy
	}
}

// ErrBusy is the error of a query whose vector was not asked for within QueryTimeout
// because maxAsking others were being asked for.
var ErrBusy = errors.New("search by meaning is busy: other queries are being embedded")

// query returns the vector of text by model kept since less than
// queryTTL before now.
func (s *Shared) query(model, text string, now time.Time) (vector, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.queries[model+"\x00"+text]
	if !ok || now.Sub(c.at) >= queryTTL {
		return vector{}, false
	}
	return c.v, true
}

// keepQuery keeps the vector of text by model, dropping every other when
// maxQueries are kept.
func (s *Shared) keepQuery(model, text string, v vector, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queries) >= maxQueries {
		clear(s.queries)
	}
	s.queries[model+"\x00"+text] = cachedQuery{v, now}
}
