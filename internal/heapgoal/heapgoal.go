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
// its working garbage reaches the headroom.
//
// Reading a memory makes almost no garbage: what it allocates is the
// graph, which stays. Collections while it grows mark the graph read so
// far again and again, for nothing to free (at a million entities, a
// second of the start). Loading turns the collector off while a big file
// is read, with a memory limit a little past what the file can make, so
// that a reading the estimate is wrong for, or the garbage of other work
// meanwhile, still collects at the limit.
//
// GOGC or GOMEMLIMIT set in the environment say the user has chosen, and
// Keep and Loading then change nothing.
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
	if usersChoice() {
		return func() {}
	}
	k := &keeper{live: liveHeap, set: setPercent}
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

// usersChoice reports whether GOGC or GOMEMLIMIT is set in the
// environment.
func usersChoice() bool {
	return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != ""
}

const (
	// minLoad is the smallest file Loading turns the collector off for: a
	// smaller one reads in a fraction of a second either way.
	minLoad = 16 << 20
	// loadFactor bounds the heap a read allocates per byte of its file:
	// at a million entities the graph is 1.7 times its file, and the
	// read's garbage a tenth more.
	loadFactor = 3
)

// loads are the reads under way that Loading was told of.
var loads struct {
	sync.Mutex
	n       int   // reads under way
	bytes   int64 // their files' sizes summed
	base    int64 // memory the runtime held when the first began
	after   bool  // the last read ended, and no collection came since
	percent int   // the goal to put back after
	limit   int64 // the memory limit to put back after
}

// Loading turns the collector off while a memory file of size bytes is
// read, and returns the function to call when the read ends. Meanwhile
// the runtime collects only when the memory it holds passes what it held
// when the read began, plus loadFactor times the size of every file being
// read, plus minHeadroom. Reads may overlap. When the last ends, the
// collector stays off until the memory held grows by a fifth (minPercent):
// the first collection would find almost everything live, so it comes
// when there is some garbage to find, not at once, in the middle of the
// first answers (at a million entities, marking a gigabyte). After that
// collection the goal and memory limit Loading found come back (or the
// goal Keep set since). A file of less than minLoad bytes, or GOGC or
// GOMEMLIMIT in the environment, changes nothing.
func Loading(size int64) (done func()) {
	if size < minLoad || usersChoice() {
		return func() {}
	}
	loads.Lock()
	defer loads.Unlock()
	if loads.n == 0 {
		loads.base = heldMemory()
		if !loads.after {
			loads.limit = debug.SetMemoryLimit(-1)
			loads.percent = debug.SetGCPercent(-1)
		}
		loads.after = false
	}
	loads.n++
	loads.bytes += size
	setLoadLimit()
	var once sync.Once
	return func() {
		once.Do(func() {
			loads.Lock()
			defer loads.Unlock()
			loads.n--
			loads.bytes -= size
			if loads.n > 0 {
				setLoadLimit()
				return
			}
			loads.after = true
			held := heldMemory()
			debug.SetMemoryLimit(min(loads.limit, held+held*minPercent/100))
			runtime.SetFinalizer(new(sentinel), func(*sentinel) { afterCollection() })
		})
	}
}

// afterCollection puts back the goal and memory limit Loading found,
// once a collection came after the last read ended.
func afterCollection() {
	loads.Lock()
	defer loads.Unlock()
	if loads.n > 0 || !loads.after {
		return // a read began since, or this was done already
	}
	loads.after = false
	debug.SetMemoryLimit(loads.limit)
	debug.SetGCPercent(loads.percent)
}

// setLoadLimit sets the memory limit for the reads under way; loads is
// locked.
func setLoadLimit() {
	debug.SetMemoryLimit(min(loads.limit, loads.base+loadFactor*loads.bytes+minHeadroom))
}

// setPercent sets the collector's goal as debug.SetGCPercent does, or,
// while Loading keeps the collector off, has it set when Loading puts
// back what it found.
func setPercent(p int) (old int) {
	loads.Lock()
	defer loads.Unlock()
	if loads.n > 0 || loads.after {
		old, loads.percent = loads.percent, p
		return old
	}
	return debug.SetGCPercent(p)
}

// heldMemory is the memory the runtime holds, as its memory limit counts
// it.
func heldMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
