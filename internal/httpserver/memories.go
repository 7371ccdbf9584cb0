package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Open named memories. A memory is opened (Config.Memories) when the first
// request granted it arrives, and closed again when nothing uses it: no
// request in progress (an event stream of a session or of a page is one),
// no 2025 session, no tool call still running.
//
//   - A memory that holds nothing stored (Memory.Exists reports false: no
//     file, no database row) is closed as soon as its last request ends, so
//     reads of names nobody wrote keep nothing open, however many.
//   - Any other memory is closed after MemoryIdleTimeout unused.
//   - At most MaxOpenMemories are open at once. A request for one more
//     first closes the memory unused for longest; when every open memory is
//     in use, it is refused with 503 (errTooManyMemories).
//
// Opening runs outside the Server's lock: only requests for the memory
// being opened wait for it (single flight), so a database that hangs while
// one memory opens stalls no other memory.

// Defaults for the limits on open memories.
const (
	DefaultMaxOpenMemories   = 1000
	DefaultMemoryIdleTimeout = 5 * time.Minute
)

// errTooManyMemories refuses a request for a memory that is not open when
// MaxOpenMemories are open and all in use.
type errTooManyMemories int

func (n errTooManyMemories) Error() string {
	return fmt.Sprintf("Service Unavailable: this server has %d memories open, all in use, which is its limit (--max-open-memories); try again later", int(n))
}

// opening is a memory being opened; requests for it wait on done.
type opening struct {
	done chan struct{}
	err  error
}

// acquire returns the endpoint of memory name, opening it if it is not
// open, and counts the caller as its user until release is called.
func (s *Server) acquire(ctx context.Context, name string) (ep *endpoint, release func(), err error) {
	s.mu.Lock()
	for {
		if ep := s.endpoints[name]; ep != nil {
			ep.users++
			s.mu.Unlock()
			return ep, func() { s.release(ep) }, nil
		}
		if op := s.opening[name]; op != nil {
			s.mu.Unlock()
			select {
			case <-op.done:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			// The request that opened it went away: try again ourselves.
			if op.err != nil && !errors.Is(op.err, context.Canceled) {
				return nil, nil, op.err
			}
			s.mu.Lock()
			continue
		}
		if len(s.endpoints)+len(s.opening) >= s.cfg.MaxOpenMemories && !s.closeLeastUsedLocked() {
			s.mu.Unlock()
			return nil, nil, errTooManyMemories(s.cfg.MaxOpenMemories)
		}
		op := &opening{done: make(chan struct{})}
		s.opening[name] = op
		s.mu.Unlock()

		ep, err := s.openMemory(ctx, name)

		s.mu.Lock()
		delete(s.opening, name)
		op.err = err
		close(op.done)
		if err != nil {
			s.mu.Unlock()
			return nil, nil, err
		}
		ep.lastUsed = time.Now()
		s.endpoints[name] = ep
		s.startWatchLocked(ep)
	}
}

// openMemory opens memory name with Config.Memories and builds its endpoint.
func (s *Server) openMemory(ctx context.Context, name string) (*endpoint, error) {
	mem, err := s.cfg.Memories(ctx, name)
	if err == nil && mem.Server == nil {
		err = errors.New("Config.Memories returned no server")
	}
	if err != nil {
		return nil, err
	}
	ep := s.newEndpoint(mem.Server)
	ep.name, ep.page, ep.exists = name, mem.Page, mem.Exists
	return ep, nil
}

// release ends a use of ep that acquire counted. The last use of a memory
// that holds nothing stored closes it.
func (s *Server) release(ep *endpoint) {
	stored := ep.exists == nil || ep.exists() // a stat or a flag: outside the lock
	s.mu.Lock()
	defer s.mu.Unlock()
	ep.users--
	ep.lastUsed = time.Now()
	if !stored && s.unusedLocked(ep) {
		s.closeLocked(ep)
	}
}

// unusedLocked reports whether nothing uses ep: no request, no 2025
// session, no tool call (which may outlive its request).
func (s *Server) unusedLocked(ep *endpoint) bool {
	if ep.pinned || ep.users > 0 || ep.mem.ToolCalls() > 0 || s.endpoints[ep.name] != ep {
		return false
	}
	for ss := range ep.mem.MCP().Sessions() {
		if ss.ID() != "" {
			return false
		}
	}
	return true
}

// closeLocked closes ep: its watch stops, its page's streams end (it has
// none), and the next request opens the memory again.
func (s *Server) closeLocked(ep *endpoint) {
	delete(s.endpoints, ep.name)
	if ep.stopWatch != nil {
		ep.stopWatch()
	}
	if ep.page != nil {
		ep.page.Close()
	}
	ep.mem.CancelToolCalls()
}

// closeLeastUsedLocked closes the unused memory unused for longest, and
// reports whether there was one.
func (s *Server) closeLeastUsedLocked() bool {
	var oldest *endpoint
	for _, ep := range s.endpoints {
		if s.unusedLocked(ep) && (oldest == nil || ep.lastUsed.Before(oldest.lastUsed)) {
			oldest = ep
		}
	}
	if oldest == nil {
		return false
	}
	s.closeLocked(oldest)
	return true
}

// closeIdleMemories closes the memories unused for MemoryIdleTimeout, and
// those unused that hold nothing stored (a 2025 session on a memory nobody
// wrote kept it open until it ended).
func (s *Server) closeIdleMemories(now time.Time) {
	empty := map[*endpoint]bool{}
	for _, ep := range s.all() { // a stat each: outside the lock
		if ep.exists != nil && !ep.exists() {
			empty[ep] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ep := range s.endpoints {
		idle := now.Sub(ep.lastUsed) > s.cfg.MemoryIdleTimeout
		if (idle || empty[ep]) && s.unusedLocked(ep) {
			s.closeLocked(ep)
			if idle && !empty[ep] {
				s.cfg.Logf("memory %s closed: unused for %v; the next request opens it again", ep.name, s.cfg.MemoryIdleTimeout)
			}
		}
	}
}

// startWatchLocked starts ep's Watch, once Serve runs, until ep closes.
func (s *Server) startWatchLocked(ep *endpoint) {
	if s.background == nil || ep.stopWatch != nil {
		return
	}
	ctx, cancel := context.WithCancel(s.background)
	ep.stopWatch = cancel
	go ep.mem.Watch(ctx)
}

// OpenMemories returns the names of the memories open now, for tests and
// diagnostics.
func (s *Server) OpenMemories() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.endpoints))
	for name := range s.endpoints {
		names = append(names, name)
	}
	return names
}

// writeUnavailable refuses a request with 503 and message: a JSON-RPC
// error (id null: the body is not read) for an MCP request, plain text for
// a page.
func writeUnavailable(w http.ResponseWriter, r *http.Request, status int, message string) {
	w.Header().Set("Retry-After", "60")
	if isPagePath(r) {
		writeFixed(w, status, message+"\n")
		return
	}
	writeRPCStatus(w, status, "null", rpcCodeUnavailable, message)
}
