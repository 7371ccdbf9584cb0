package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memoryPeak is the peak resident memory of a server's process tree: the
// started `sh -c` and every descendant (npx, node, the server binary).
type memoryPeak struct {
	// ServerKB is the VmHWM of the server process: the largest process
	// that started no other (wrappers such as sh and npx have children).
	ServerKB int64 `json:"serverKB"`
	// ServerProcess names that process (its comm).
	ServerProcess string `json:"serverProcess"`
	// SumKB adds every process's VmHWM: an upper bound on the tree's peak,
	// and what a machine running this server pays, wrappers included.
	SumKB int64 `json:"sumKB"`
	// Processes lists every process seen in the tree, as "comm kB", in the
	// order they were found (parents before children).
	Processes []string `json:"processes"`
}

type procPeak struct {
	comm        string
	kb          int64
	hasChildren bool
	order       int // when the pid was first seen, for listing
}

// treeMemory samples the VmHWM (peak resident set) of every process in the
// tree rooted at one pid, read from /proc. VmHWM is a high-water mark kept by
// the kernel, so sampling once a second loses no peak of a process that is
// still alive when sampled; the last sample is taken just before the server
// is closed. Where /proc does not exist the peak stays zero.
type treeMemory struct {
	root int

	mu    sync.Mutex
	peaks map[int]procPeak

	sampling *sampler
}

func watchTreeMemory(root int, every time.Duration) *treeMemory {
	t := &treeMemory{root: root, peaks: map[int]procPeak{}}
	t.sampling = sampleEvery(every, t.sampleNow)
	return t
}

// sampler calls a function now and then periodically until halted.
type sampler struct {
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

func sampleEvery(every time.Duration, sample func()) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			sample()
			select {
			case <-s.stop:
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

// halt stops the sampling and waits for a sample in progress to end.
func (s *sampler) halt() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
}

// sampleNow reads the VmHWM of every process now in the tree.
func (t *treeMemory) sampleNow() {
	tree, children := processTree(t.root)
	for _, pid := range tree {
		kb, ok := readVmHWM(pid)
		if !ok {
			continue
		}
		comm := readComm(pid)
		t.mu.Lock()
		p, seen := t.peaks[pid]
		if !seen {
			p.order = len(t.peaks)
		}
		p.comm, p.kb = comm, max(p.kb, kb)
		p.hasChildren = len(children[pid]) > 0
		t.peaks[pid] = p
		t.mu.Unlock()
	}
}

// stopWatching ends the periodic sampling and returns the peak seen.
func (t *treeMemory) stopWatching() memoryPeak {
	t.sampling.halt()
	t.mu.Lock()
	defer t.mu.Unlock()
	var m memoryPeak
	var largest procPeak
	listed := make([]procPeak, len(t.peaks))
	for _, p := range t.peaks {
		m.SumKB += p.kb
		listed[p.order] = p
		if !p.hasChildren && p.kb > m.ServerKB {
			m.ServerKB, m.ServerProcess = p.kb, p.comm
		}
		largest = maxPeak(largest, p)
	}
	if m.ServerKB == 0 { // every process had children: take the largest
		m.ServerKB, m.ServerProcess = largest.kb, largest.comm
	}
	for _, p := range listed {
		m.Processes = append(m.Processes, fmt.Sprintf("%s %d kB", p.comm, p.kb))
	}
	return m
}

func maxPeak(a, b procPeak) procPeak {
	if b.kb > a.kb {
		return b
	}
	return a
}

// processTree lists root and its descendants, found through the parent pid
// in each /proc/<pid>/stat, and the children of every process.
func processTree(root int) (tree []int, children map[int][]int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	children = map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := readPPID(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	tree = []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree, children
}

// readPPID parses the parent pid from /proc/<pid>/stat: the fourth field,
// counted after the command name, which is in parentheses and may itself
// hold spaces and parentheses.
func readPPID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// readVmHWM reads the peak resident set size in kB from /proc/<pid>/status.
// Kernel threads and zombies have none.
func readVmHWM(pid int) (int64, bool) { return readStatusKB(pid, "VmHWM:") }

func readComm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
