package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"
)

// stdioSession runs s over stdio pipes, initialized, for a test or a
// benchmark that sends lines and reads whole answer lines (their size).
func stdioSession(tb testing.TB, s *Server) (send func(string), read func() int) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go s.RunStdio(context.Background(), inR, outW)
	tb.Cleanup(func() { inW.Close() })
	out := bufio.NewReaderSize(outR, 1<<20)
	send = func(l string) {
		if _, err := io.WriteString(inW, l+"\n"); err != nil {
			tb.Fatal(err)
		}
	}
	read = func() int {
		n := 0
		for {
			line, err := out.ReadSlice('\n')
			n += len(line)
			if err == nil {
				return n
			}
			if err != bufio.ErrBufferFull {
				tb.Fatal(err)
			}
		}
	}
	send(initialize)
	read()
	send(initialized)
	return send, read
}

const readGraphCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`

// BenchmarkWholeAnswer times a whole read_graph and a search matching
// thousands of entities (no answer limit, 10k and 100k entities) over
// stdio, to the answer's last byte: the server's work and the go-sdk's
// encoding, without a client decoding it.
//
//	go test ./internal/server -run XXX -bench WholeAnswer/10k -benchmem
func BenchmarkWholeAnswer(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) { benchmarkWholeAnswer(b, n) })
	}
}

func benchmarkWholeAnswer(b *testing.B, n int) {
	s, q, _ := serverOnGraph(b, n, 0)
	send, read := stdioSession(b, s)
	for _, c := range []struct{ name, call string }{
		{"read_graph", readGraphCall},
		{"search_common", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_nodes","arguments":{"query":"` + q.Common + `"}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				send(c.call)
				size = read()
			}
			b.SetBytes(int64(size))
		})
	}
}
