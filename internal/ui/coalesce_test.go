package ui

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestCoalescerNeverSharesAnOlderRead: calls made while a read runs share
// the next read, which starts after them, and never get the running one.
func TestCoalescerNeverSharesAnOlderRead(t *testing.T) {
	var c coalescer[int64]
	var reads, version atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	read := func() (int64, error) {
		n := reads.Add(1)
		if n == 1 {
			close(started)
			<-release
		}
		return version.Load(), nil
	}
	first := make(chan int64)
	go func() { v, _ := c.do("k", read); first <- v }()
	<-started
	version.Store(1) // a write the first read may not see
	var wg sync.WaitGroup
	got := make([]int64, 10)
	for i := range got {
		wg.Go(func() { got[i], _ = c.do("k", read) })
	}
	// Let the ten calls queue before the first read ends.
	for queued := false; !queued; {
		c.mu.Lock()
		f := c.waiting["k"]
		queued = f != nil && f.joiners == len(got)-1
		c.mu.Unlock()
		runtime.Gosched()
	}
	close(release)
	<-first
	wg.Wait()
	for i, v := range got {
		if v != 1 {
			t.Errorf("call %d, made after the write, got version %d", i, v)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads for 11 calls, want 2 (the running one and one shared)", n)
	}
}
