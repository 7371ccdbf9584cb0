package server

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kgmemory/mcp-server-memory/internal/filestore"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// gatedStore holds every read until its gate opens, so that reads stay in
// progress as long as a test needs, and says when one arrives.
type gatedStore struct {
	graph.Store
	entered, gate chan struct{}
}

func (g gatedStore) View(ctx context.Context, fn func(*graph.Graph) error) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	return g.Store.View(ctx, fn)
}

func newGatedServer(t *testing.T, b Bounds) (*Server, gatedStore) {
	t.Helper()
	gate := make(chan struct{})
	store := gatedStore{filestore.Open(filepath.Join(t.TempDir(), "memory.jsonl"), filestore.Options{}), make(chan struct{}, 1), gate}
	s := New(store, Options{Version: "test", WatchInterval: -1, Logf: t.Logf, Limiter: NewLimiter(b)})
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	return s, store
}

const (
	boundReadCall  = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`
	boundWriteCall = `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"create_entities","arguments":{"entities":[{"name":"W","entityType":"t","observations":[]}]}}}`
)

func msgLine(template, id string) string { return strings.Replace(template, "ID", id, 1) }

// Over stdio, a read past the calls in progress one connection may have
// is refused at once with a JSON-RPC error, and one past the reads running
// at once after its wait; a write is still served meanwhile: reads and
// writes are counted apart, and a write takes no read's place. Once the
// first read is answered, reads are served again.
func TestStdioBounds(t *testing.T) {
	for _, tc := range []struct {
		bounds  Bounds
		refusal string
	}{
		{Bounds{Calls: 1}, "Too many calls: this connection has 1 reads in progress, the most it may have (MEMORY_MAX_CALLS)"},
		{Bounds{Reads: 1, ReadWait: 100 * time.Millisecond}, "Server busy: 1 reads are running, the most it runs at once (MEMORY_MAX_READS)"},
	} {
		s, store := newGatedServer(t, tc.bounds)
		c := startStdio(t, s)
		c.send(initialize, initialized)
		c.expectResult("1")
		c.send(msgLine(boundReadCall, "2"))
		<-store.entered // read 2 is running
		c.send(msgLine(boundReadCall, "3"))
		c.expectError("3", rpcCodeBusy, tc.refusal)
		c.send(msgLine(boundWriteCall, "4"))
		c.expectResult("4")
		close(store.gate)
		c.expectResult("2")
		// The place is free again a moment after the client has the answer.
		for id := 5; ; id++ {
			if id > 1000 {
				t.Fatalf("%+v: the place never came free", tc.bounds)
			}
			c.send(msgLine(boundReadCall, strconv.Itoa(id)))
			if a := c.next(); a.Error == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func TestLimiter(t *testing.T) {
	ctx := context.Background()
	l := NewLimiter(Bounds{Reads: 1, AnswerBytes: 100, ReadWait: time.Second})
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

// An HTTP request's answers stay held until its scope closes; a release
// left to a scope already closed is the caller's to run.
func TestLimiterScopes(t *testing.T) {
	l := NewLimiter(Bounds{AnswerBytes: 100})
	id := l.OpenScope()
	if !l.keepUntilClosed(id, l.hold(150)) {
		t.Fatal("open scope refused the answer")
	}
	if l.held != 150 {
		t.Errorf("held %d, want 150", l.held)
	}
	l.CloseScope(id)
	if l.held != 0 {
		t.Errorf("held %d after the scope closed", l.held)
	}
	if l.keepUntilClosed(id, func() {}) || l.keepUntilClosed("nope", func() {}) {
		t.Error("a closed or unknown scope kept a release")
	}
}
