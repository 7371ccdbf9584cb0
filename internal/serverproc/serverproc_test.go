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
