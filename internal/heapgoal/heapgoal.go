// Package heapgoal bounds how far the heap grows past what is live.
//
// The Go runtime collects garbage once the heap is twice what the last
// collection found live (GOGC=100). For a server holding a memory of a
// million facts, over a gigabyte live, that is a gigabyte of garbage held
// before each collection, and a resident size twice what the memory needs:
// most of it while the search indexes are built, which makes garbage as it
// goes. Keep sets the collector's goal after every collection from the
// heap then live: it may grow past the live heap by 256 MB, or a fifth of
// the live heap where that is more, and never by more than the default
// (the live heap again). A memory of up to 256 MB live is collected as it
// always was; a bigger one more often, and its peak is its live heap and
// a fifth, not twice.
//
// The price is collector time: a big heap is marked more often, each time
// its working garbage reaches the headroom. GOGC or GOMEMLIMIT set in the
// environment say the user has chosen, and Keep then changes nothing.
package heapgoal

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

const (
	// minHeadroom is how far any heap may grow past what is live.
	minHeadroom = 256 << 20
	// minPercent is the headroom, as a percent of the live heap, of a
	// heap of more than minHeadroom*100/minPercent bytes live.
	minPercent = 20
)

// Percent returns the GOGC percent that lets a heap of live bytes live
// grow by its headroom: 100 (the default) up to minHeadroom live, then
// less, down to minPercent.
func Percent(live uint64) int {
	if live <= minHeadroom {
		return 100
	}
	return max(minPercent, int(100*minHeadroom/live))
}

// Keep sets the collector's goal now and after every collection (Percent
// of the live heap) until stop is called, which puts back the goal it
// found.
// With GOGC or GOMEMLIMIT in the environment it does nothing.
func Keep() (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	k := &keeper{live: liveHeap, set: debug.SetGCPercent}
	k.adjust() // for the heap the last collection found: a load just ended may be past it already
	k.arm()
	return k.stop
}

// keeper follows the collections: a sentinel, made unreachable at once,
// is finalized after each, and its finalizer sets the goal and makes the
// next sentinel.
type keeper struct {
	live    func() uint64         // the heap the last collection found live
	set     func(percent int) int // debug.SetGCPercent
	mu      sync.Mutex
	percent int // what it set last; 0: nothing yet
	first   int // the percent it found
	stopped atomic.Bool
}

// sentinel holds a pointer, so it is never one of the tiny allocations
// the runtime packs together (which may never be finalized).
type sentinel struct{ _ *int }

func (k *keeper) arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		if k.stopped.Load() {
			return
		}
		k.adjust()
		k.arm()
	})
}

// adjust sets the goal for the heap live now, when it changed.
func (k *keeper) adjust() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped.Load() {
		return
	}
	p := Percent(k.live())
	if p == k.percent {
		return
	}
	if old := k.set(p); k.percent == 0 {
		k.first = old
	}
	k.percent = p
}

func (k *keeper) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped.Swap(true) || k.percent == 0 {
		return
	}
	k.set(k.first)
}

// liveHeap reads the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
