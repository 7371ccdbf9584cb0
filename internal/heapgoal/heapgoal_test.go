package heapgoal

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{10 * mb, 100},
		{256 * mb, 100},
		{512 * mb, 50},
		{1024 * mb, 25},
		{1280 * mb, 20},
		{4096 * mb, 20},
	} {
		if got := Percent(tt.live); got != tt.want {
			t.Errorf("Percent(%d MB) = %d, want %d", tt.live/mb, got, tt.want)
		}
	}
}

// TestKeepFollowsCollections checks that a keeper sets the goal for the
// live heap it reads after a collection, sets it again only when that
// changes, and puts back the goal it found when stopped.
func TestKeepFollowsCollections(t *testing.T) {
	var live atomic.Uint64
	var mu sync.Mutex
	var set []int
	current := 100
	k := &keeper{
		live: live.Load,
		set: func(p int) int {
			mu.Lock()
			defer mu.Unlock()
			set = append(set, p)
			old := current
			current = p
			return old
		},
	}
	goals := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(set)
	}
	// collect runs collections until the goals set number n.
	collect := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(goals()) < n; {
			if time.Now().After(deadline) {
				t.Fatalf("goals set %v, want %d of them", goals(), n)
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
	live.Store(2 << 30)
	k.arm()
	collect(1)
	for range 3 { // the same heap: nothing to set
		runtime.GC()
	}
	live.Store(100 << 20)
	collect(2)
	k.stop()
	live.Store(2 << 30)
	for range 3 {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if got, want := goals(), []int{20, 100, 100}; !slices.Equal(got, want) {
		t.Fatalf("goals set %v, want %v (20 for 2 GB live, 100 for 100 MB, then the first goal put back)", got, want)
	}
}

func TestKeepLeavesTheUsersChoice(t *testing.T) {
	t.Setenv("GOGC", "300")
	before := debug.SetGCPercent(100)
	debug.SetGCPercent(before)
	stop := Keep()
	runtime.GC()
	runtime.GC()
	stop()
	if after := debug.SetGCPercent(before); after != before {
		t.Errorf("GOGC set: the goal became %d, want %d", after, before)
	}
}

// goal reads the collector's goal and memory limit, without setting
// them: setting the goal and putting it back races with afterCollection
// on the finalizer goroutine, which may set it in between.
func goal() (percent int, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int(int64(s[0].Value.Uint64())), int64(s[1].Value.Uint64()) // off is -1
}

// TestLoadingTurnsTheCollectorOff checks that the collector is off while
// any read runs, with a memory limit that grows with the files being
// read, that what Keep sets meanwhile waits for the last read to end, and
// that the goal and limit found come back then.
func TestLoadingTurnsTheCollectorOff(t *testing.T) {
	const mb = 1 << 20
	percent, limit := goal()
	base := heldMemory()

	doneA := Loading(100 * mb)
	p, l := goal()
	if p != -1 {
		t.Fatalf("while a read runs the goal is %d, want -1 (off)", p)
	}
	// The memory held may have grown a little since base was read.
	if want := base + loadFactor*100*mb + minHeadroom; l < want || l > want+64*mb {
		t.Fatalf("memory limit while reading 100 MB: %d MB, want about %d MB", l/mb, want/mb)
	}
	doneB := Loading(200 * mb)
	if _, l2 := goal(); l2 != l+loadFactor*200*mb {
		t.Fatalf("memory limit while reading 100 and 200 MB: %d MB, want %d MB", l2/mb, (l+loadFactor*200*mb)/mb)
	}
	if old := setPercent(30); old != percent {
		t.Errorf("setPercent during a read returned %d, want the goal found, %d", old, percent)
	}
	doneA()
	doneA() // a second call changes nothing
	if p, l3 := goal(); p != -1 || l3 != l+loadFactor*100*mb {
		t.Fatalf("after the first read ended: goal %d, limit %d MB; want -1 and %d MB", p, l3/mb, (l+loadFactor*100*mb)/mb)
	}
	doneB()
	// The collector stays off until a collection comes, at the memory
	// held and its headroom.
	held := heldMemory()
	if p, l := goal(); p != -1 || l < held || l > held+held*minPercent/100 {
		t.Fatalf("after both reads ended: goal %d, limit %d MB; want -1 and at most %d MB", p, l/mb, held*(100+minPercent)/100/mb)
	}
	if old := setPercent(40); old != 30 {
		t.Errorf("setPercent before the first collection returned %d, want 30", old)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if p, l := goal(); p == 40 && l == limit {
			break
		}
		if time.Now().After(deadline) {
			p, l := goal()
			t.Fatalf("after a collection: goal %d, limit %d; want 40 (set meanwhile) and %d", p, l, limit)
		}
	}
	debug.SetGCPercent(percent)
}

// TestAReadBeforeTheFirstCollection checks that a read beginning after
// another ended, before a collection came, puts back at its end what the
// first read found, not what the first read set.
func TestAReadBeforeTheFirstCollection(t *testing.T) {
	percent, limit := goal()
	Loading(minLoad)()
	done := Loading(minLoad)
	if p, _ := goal(); p != -1 {
		t.Fatalf("while the second read runs the goal is %d, want -1", p)
	}
	done()
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(time.Millisecond)
		if p, l := goal(); p == percent && l == limit {
			break
		}
		if time.Now().After(deadline) {
			p, l := goal()
			t.Fatalf("after the second read and a collection: goal %d, limit %d; want %d and %d", p, l, percent, limit)
		}
	}
}

func TestLoadingLeavesSmallFilesAndTheUsersChoice(t *testing.T) {
	percent, limit := goal()
	done := Loading(minLoad - 1)
	if p, l := goal(); p != percent || l != limit {
		t.Errorf("reading a small file: goal %d, limit %d; want them unchanged (%d, %d)", p, l, percent, limit)
	}
	done()
	t.Setenv("GOMEMLIMIT", "8GiB")
	done = Loading(1 << 30)
	if p, l := goal(); p != percent || l != limit {
		t.Errorf("GOMEMLIMIT set: goal %d, limit %d; want them unchanged (%d, %d)", p, l, percent, limit)
	}
	done()
}
