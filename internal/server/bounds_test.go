package server

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// gatedStore holds every read until its gate opens, so that reads stay in
// progress as long as a test needs.
type gatedStore struct {
	graph.Store
	gate chan struct{}
}

func (g gatedStore) View(fn func(*graph.Graph)) error {
	<-g.gate
	return g.Store.View(fn)
}

func newGatedServer(t *testing.T, b Bounds) (*Server, chan struct{}) {
	t.Helper()
	gate := make(chan struct{})
	store := gatedStore{filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{}), gate}
	s := New(store, Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Limiter: NewLimiter(b)})
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	return s, gate
}

const (
	boundReadCall  = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`
	boundWriteCall = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"W","entityType":"t","observations":[]}]}}}`
)

func msgLine(template, id string) string { return strings.Replace(template, "ID", id, 1) }

// Over stdio, a read past the calls in progress one connection may have
// is refused at once with a JSON-RPC error, and a write is still served:
// reads and writes are counted apart.
func TestStdioCallsInProgressBound(t *testing.T) {
	s, gate := newGatedServer(t, Bounds{Calls: 1})
	c := startStdio(t, s)
	c.send(initialize, initialized)
	c.expectResult("1")
	c.send(msgLine(boundReadCall, "2"))
	c.send(msgLine(boundReadCall, "3"))
	c.expectError("3", rpcCodeBusy, "Too many calls: this connection has 1 reads in progress, the most it may have (MEMORY_MAX_CALLS)")
	c.send(msgLine(boundWriteCall, "4"))
	c.expectResult("4")
	close(gate)
	c.expectResult("2")
	// The answer written, the place is free again.
	c.send(msgLine(boundReadCall, "5"))
	c.expectResult("5")
}

// A read past the reads running at once waits, then is refused with a
// JSON-RPC error; a write meanwhile waits for no read.
func TestStdioReadsRunningBound(t *testing.T) {
	s, gate := newGatedServer(t, Bounds{Reads: 1, ReadWait: 100 * time.Millisecond})
	c := startStdio(t, s)
	c.send(initialize, initialized)
	c.expectResult("1")
	c.send(msgLine(boundReadCall, "2"))
	c.send(msgLine(boundReadCall, "3"))
	c.expectError("3", rpcCodeBusy, "Server busy: 1 reads are running, the most it runs at once (MEMORY_MAX_READS)")
	c.send(msgLine(boundWriteCall, "4"))
	c.expectResult("4")
	close(gate)
	c.expectResult("2")
}

func TestLimiter(t *testing.T) {
	ctx := context.Background()
	l := NewLimiter(Bounds{Reads: 1, AnswerBytes: 100, ReadWait: 50 * time.Millisecond})
	done, err := l.startRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A second read waits, and gets the place when the first ends.
	go func() { time.Sleep(10 * time.Millisecond); done() }()
	done2, err := l.startRead(ctx)
	if err != nil {
		t.Fatalf("waiting read: %v", err)
	}
	// Answers that fill the bound hold every read back until let go.
	release := l.hold(150)
	done2()
	var busy *jsonrpc.Error
	if _, err := l.startRead(ctx); !errors.As(err, &busy) || !strings.Contains(busy.Message, "fill its bound of 0 MB (MEMORY_MAX_ANSWER_MB)") {
		t.Errorf("read with the answers' bound full: %v", err)
	}
	release()
	release() // a second call does nothing
	done3, err := l.startRead(ctx)
	if err != nil {
		t.Fatalf("after the answers were let go: %v", err)
	}
	done3()
	// A cancelled wait ends with the context's error.
	hold, _ := l.startRead(ctx)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.startRead(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	hold()
}

// Past maxWaiting reads waiting, a read is refused at once.
func TestLimiterQueueFull(t *testing.T) {
	l := NewLimiter(Bounds{Reads: 1, ReadWait: time.Minute})
	done, _ := l.startRead(context.Background())
	defer done()
	l.mu.Lock()
	l.waiting = maxWaiting
	l.mu.Unlock()
	start := time.Now()
	if _, err := l.startRead(context.Background()); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("read past a full queue: %v after %v", err, time.Since(start))
	}
	l.mu.Lock()
	l.waiting = 0
	l.mu.Unlock()
}
