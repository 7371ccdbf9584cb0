package meaning

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/meaning/meaningtest"
)

// logs collects an Index's log lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestSparseVectorsFileIsReadBounded: a vectors file made 1 GiB by a hole
// after its records loads its records, without holding memory for the
// hole, says it is damaged once, and the next append cuts the hole off.
func TestSparseVectorsFileIsReadBounded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.jsonl.vectors")
	st := FileStorage(path)
	rec := Record{Key: Key{1}, Scale: 1.0 / 127, Values: []int8{127, 0, 0}}
	if err := st.Append(ctx, "m", []Record{rec}); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.Stat(path)
	if err := os.Truncate(path, 1<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st = FileStorage(path)
	recs, err := st.Load(ctx, "m")
	runtime.ReadMemStats(&after)
	if len(recs) != 1 || !strings.Contains(fmt.Sprint(err), "damaged") && !strings.Contains(fmt.Sprint(err), "dimensions at byte") {
		t.Fatalf("the sparse file loaded %d records (%v), want 1 and its damage", len(recs), err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Errorf("loading a 1 GiB sparse file allocated %d MiB", grown>>20)
	}
	if _, err := st.Load(ctx, "m"); err != nil {
		t.Errorf("the same damage reported again: %v", err)
	}
	if err := st.Append(ctx, "m", []Record{{Key: Key{2}, Scale: rec.Scale, Values: rec.Values}}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() != whole.Size()+int64(recordHead+3) {
		t.Errorf("after an append the file holds %d bytes, want %d", fi.Size(), whole.Size()+int64(recordHead+3))
	}
}

// TestKeptVectorsAreChecked: records no quantisation makes (a NaN or
// infinite scale, 65,535 dimensions) are refused with a log line, and
// their texts embedded again.
func TestKeptVectorsAreChecked(t *testing.T) {
	stub := meaningtest.New("m")
	defer stub.Close()
	store := newStore(t, people[:1]...)
	path := filepath.Join(t.TempDir(), "memory.jsonl.vectors")
	if err := open(t, path, stub, "m").pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	// The first record's scale becomes NaN, the second's +Inf.
	binary.LittleEndian.PutUint32(b[len(magic)+18:], math.Float32bits(float32(math.NaN())))
	second := len(magic) + recordHead + meaningtest.Dims
	binary.LittleEndian.PutUint32(b[second+18:], math.Float32bits(float32(math.Inf(1))))
	// Then a record claiming 65,535 dimensions.
	huge := make([]byte, recordHead+65535)
	binary.LittleEndian.PutUint16(huge[16:], 65535)
	os.WriteFile(path, append(b, huge...), 0o600)
	var l logs
	ix, err := Open(path, NewClient(stub.BaseURL(), "m", ""), Options{Logf: l.logf})
	if err != nil {
		t.Fatal(err)
	}
	if l.count("2 kept vectors are refused") != 1 || l.count("65535 dimensions") != 1 {
		t.Errorf("log:\n%s\nwant the refused scales and the damage, once each", l.String())
	}
	before := len(stub.Texts("m"))
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if n := len(stub.Texts("m")) - before; n != 2 {
		t.Errorf("%d texts embedded again, want the 2 refused", n)
	}
}

// TestFailedAppendCutsTheTail: an append the file system refuses midway
// (here a file size limit, as a full disk does) leaves no partial record,
// the index keeps its vectors in memory and says so once, and says when
// appends work again.
func TestFailedAppendCutsTheTail(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	stub := meaningtest.New("m")
	defer stub.Close()
	path := filepath.Join(t.TempDir(), "memory.jsonl.vectors")
	// Records of no text, so that the file is larger than any other the
	// test process writes (its log) and the limit stops only its appends;
	// fewer than would make the index compact the file.
	padding := make([]Record, 1000)
	for i := range padding {
		padding[i] = Record{Key: Key{0xff, byte(i), byte(i >> 8)}, Scale: 1.0 / 127, Values: make([]int8, 4096)}
	}
	if err := FileStorage(path).Append(context.Background(), "m", padding); err != nil {
		t.Fatal(err)
	}
	var l logs
	ix, err := Open(path, NewClient(stub.BaseURL(), "m", ""), Options{Logf: l.logf, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	store := newStore(t, people[:1]...) // two texts: one batch
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.Stat(path)
	if whole.Size() < 4e6 {
		t.Fatalf("the file holds %d bytes, want the padding", whole.Size())
	}
	limit := syscall.Rlimit{Cur: uint64(whole.Size()) + 100, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
	store = newStore(t, people...)
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if fi, _ := os.Stat(path); fi.Size() != whole.Size() {
		t.Errorf("after failed appends the file holds %d bytes, want its %d whole ones", fi.Size(), whole.Size())
	}
	if ready, have, want := ix.Status(); !ready || have != want {
		t.Errorf("after failed appends: ready %t, %d of %d", ready, have, want)
	}
	if n := l.count("kept in memory only"); n != 1 {
		t.Errorf("log:\n%s\nwant the failure once", l.String())
	}
	store.Update(context.Background(), graph.Write{Apply: func(g *graph.Graph) error {
		_, err := g.AddObservations([]graph.ObservationAddition{{EntityName: "Bob", Contents: []string{"plays chess"}}})
		return err
	}})
	if err := ix.pass(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if n := l.count("kept again"); n != 1 {
		t.Errorf("log:\n%s\nwant the end of the failure once", l.String())
	}
}

// TestVectorsFileFollowsTheMemoryMode: the vectors file takes the memory
// file's mode, at an append and at a compaction.
func TestVectorsFileFollowsTheMemoryMode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	memory := filepath.Join(dir, "memory.jsonl")
	os.WriteFile(memory, nil, 0o640)
	os.Chmod(memory, 0o640)
	st := FileStorage(VectorsPath(memory))
	rec := Record{Key: Key{1}, Scale: 1.0 / 127, Values: []int8{127}}
	if err := st.Append(ctx, "m", []Record{rec}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(VectorsPath(memory)); fi.Mode().Perm() != 0o640 {
		t.Errorf("appended: mode %v, want the memory file's 0640", fi.Mode().Perm())
	}
	os.Chmod(memory, 0o600)
	if err := st.Compact(ctx, "m", []Record{rec}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(VectorsPath(memory)); fi.Mode().Perm() != 0o600 {
		t.Errorf("compacted: mode %v, want the memory file's 0600", fi.Mode().Perm())
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) != 0 {
		t.Errorf("a compaction left %v", m)
	}
}
