// Package testlog collects the output of servers and loggers that tests
// start, and shows it only when the test fails.
package testlog

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Buffer is an io.Writer safe for concurrent use, such as a child process's
// stderr copied by one goroutine while the test reads it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Printf writes one line; it fits a logf option.
func (b *Buffer) Printf(format string, args ...any) {
	fmt.Fprintf(b, format+"\n", args...)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// OnFailure returns a Buffer whose content the test logs, under the heading
// what, if it fails.
func OnFailure(t testing.TB, what string) *Buffer {
	b := &Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s:\n%s", what, b.String())
		}
	})
	return b
}
