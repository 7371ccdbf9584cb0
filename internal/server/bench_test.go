package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// BenchmarkGoClientAlone times the go-sdk client (v1.8.0, stdio, the
// client memory-bench uses) receiving a whole answer from a server that
// answers at once: the line this server writes for a whole read_graph and
// a common search, captured first, then sent back to each call as it
// arrives. What it measures is the client's own reading and decoding, which
// memory-bench's client-seen latency includes for every server: no server
// can be seen answering faster than this.
//
//	go test ./internal/server -run XXX -bench GoClientAlone/10k
func BenchmarkGoClientAlone(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			s, q, _ := serverOnGraph(b, n, 0)
			for _, c := range []struct{ name, call string }{
				{"read_graph", readGraphCall},
				{"search_common", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_nodes","arguments":{"query":"` + q.Common + `"}}}`},
			} {
				result := capturedResult(b, s, c.call)
				b.Run(c.name, func(b *testing.B) {
					session := instantServer(b, result)
					b.SetBytes(int64(len(result)))
					for b.Loop() {
						if _, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_graph", Arguments: map[string]any{}}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// capturedResult returns the result s answers call with, as written.
func capturedResult(tb testing.TB, s *Server, call string) json.RawMessage {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go s.RunStdio(context.Background(), inR, outW)
	defer inW.Close()
	out := bufio.NewReaderSize(outR, 1<<20)
	for _, l := range []string{initialize, initialized, call} {
		io.WriteString(inW, l+"\n")
		if l == initialized {
			continue
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			tb.Fatal(err)
		}
		if l == call {
			var m struct{ Result json.RawMessage }
			if err := json.Unmarshal(line, &m); err != nil || m.Result == nil {
				tb.Fatalf("no result: %v %.200s", err, line)
			}
			return m.Result
		}
	}
	return nil
}

// instantServer connects a go-sdk client to a server that answers every
// tools/call with result at once, and returns the session.
func instantServer(tb testing.TB, result json.RawMessage) *mcp.ClientSession {
	toClientR, toClientW := io.Pipe()
	toServerR, toServerW := io.Pipe()
	go func() {
		in := bufio.NewReader(toServerR)
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(line, &m)
			head := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":`
			switch m.Method {
			case "initialize":
				io.WriteString(toClientW, head+`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"instant","version":"1"}}}`+"\n")
			case "tools/call":
				io.WriteString(toClientW, head)
				toClientW.Write(result)
				io.WriteString(toClientW, "}\n")
			}
		}
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: toClientR, Writer: toServerW, MaxLineLength: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { session.Close() })
	return session
}
