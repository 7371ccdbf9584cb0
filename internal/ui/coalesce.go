package ui

import "sync"

// coalescer runs one read at a time and shares it among the calls that
// wait for it: a call that comes while a read runs waits for the next one,
// which starts after it came (so it never gets a read older than itself),
// and every call that came meanwhile gets that one read. N page opens at
// once cost two reads, not N, and hold one read's memory at a time.
type coalescer[T any] struct {
	mu      sync.Mutex
	waiting map[string]*flight[T] // by key: the next read, not yet started
	running sync.Mutex            // held by the read that runs
}

type flight[T any] struct {
	done    chan struct{}
	joiners int // the calls waiting for it but the one that runs it
	v       T
	err     error
}

// do returns what read returns, run after the call came: by this call, or
// by another one with the same key that came at the same time.
func (c *coalescer[T]) do(key string, read func() (T, error)) (T, error) {
	c.mu.Lock()
	f, joined := c.waiting[key]
	if !joined {
		f = &flight[T]{done: make(chan struct{})}
		if c.waiting == nil {
			c.waiting = map[string]*flight[T]{}
		}
		c.waiting[key] = f
	} else {
		f.joiners++
	}
	c.mu.Unlock()
	if joined {
		<-f.done
		return f.v, f.err
	}
	c.running.Lock()
	c.mu.Lock()
	delete(c.waiting, key) // calls from now on wait for a later read
	c.mu.Unlock()
	f.v, f.err = read()
	c.running.Unlock()
	close(f.done)
	return f.v, f.err
}
