// Package serverproc holds what the measuring programs (cmd/memory-bench,
// cmd/memory-eval) need to run a server command as a child: a process group
// of its own, so that everything `sh -c` starts (npx and the node it spawns)
// ends with it, and the tail of its stderr for error reports.
package serverproc

import "sync"

// TailBuffer keeps the last bytes written to it, at most Max: a server's
// stderr, kept for error reports without growing with a chatty server. It
// is safe for concurrent use.
type TailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTailBuffer returns a TailBuffer that keeps the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
