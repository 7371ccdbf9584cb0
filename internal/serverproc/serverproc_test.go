package serverproc

import (
	"fmt"
	"testing"
)

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := NewTailBuffer(10)
	for i := range 7 {
		fmt.Fprintf(b, "line %d\n", i)
	}
	if got, want := b.String(), " 5\nline 6\n"; got != want {
		t.Errorf("tail %q, want %q", got, want)
	}
}

func TestCommandLine(t *testing.T) {
	got := CommandLine("go run ./cmd/x", []string{"/tmp/go-build123/b001/exe/x", "--vs", "npx -y pkg@1", "--sizes", "1k,10k", "it's"})
	if want := `go run ./cmd/x --vs 'npx -y pkg@1' --sizes 1k,10k 'it'\''s'`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
