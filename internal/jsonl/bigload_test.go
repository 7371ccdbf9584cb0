package jsonl

import (
	"crypto/sha256"
	"os"
	"runtime"
	"testing"
	"time"
)

// BenchmarkLoadFile measures what a server does with a big memory file
// before and after its first answer: Read, then the search indexes built
// a step at a time. It reads the file named by MEMORY_BENCH_FILE (written
// by memory-bench --write-graph) and reports the seconds of each phase and
// the live heap after each, in MB, beside the file's size. Profile it with
// -cpuprofile or -memprofile and -benchtime 1x.
func BenchmarkLoadFile(b *testing.B) {
	path := os.Getenv("MEMORY_BENCH_FILE")
	if path == "" {
		b.Skip("MEMORY_BENCH_FILE names no file")
	}
	for b.Loop() {
		start := time.Now()
		f, size := readBenchFile(b, path)
		decoded := time.Since(start)
		graphHeap := liveHeapMB()
		start = time.Now()
		for !f.Graph.IndexStep(64) {
		}
		indexed := time.Since(start)
		b.ReportMetric(float64(size)/(1<<20), "file-MB")
		b.ReportMetric(decoded.Seconds(), "read-decode-s")
		b.ReportMetric(graphHeap, "graph-heap-MB")
		b.ReportMetric(indexed.Seconds(), "index-s")
		b.ReportMetric(liveHeapMB(), "indexed-heap-MB")
		runtime.KeepAlive(f)
	}
}

// readBenchFile reads, decodes and sums the file at path, as a server
// does, and returns the File and the file's size.
func readBenchFile(b *testing.B, path string) (*File, int64) {
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		b.Fatal(err)
	}
	f, err := Read(fh, fi.Size(), sha256.New())
	if err != nil {
		b.Fatal(err)
	}
	return f, fi.Size()
}

// liveHeapMB is the heap in use after two collections, in MB.
func liveHeapMB() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}
