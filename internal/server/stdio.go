package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Big results on stdio skip the go-sdk's encoding. The SDK marshals a tool
// result with reflection, escapes the text item and compacts the structured
// content, then compacts the whole response again: for a read_graph of a
// large memory that was most of the server's time. On stdio the tool
// handler therefore parks its pre-encoded result and gives the SDK a small
// placeholder; the connection writes the real result in the placeholder's
// place, keeping every field the SDK added (resultType, _meta).
//
// Other transports (HTTP, in-memory) get ordinary results.

// placeholderKey marks a result whose content waits in preencoded.
const placeholderKey = "io.github.kgmemory/preencoded"

type placeholder struct {
	Token string `json:"io.github.kgmemory/preencoded"`
}

// preencodedResult is a tool result's content and structuredContent, as JSON.
type preencodedResult struct {
	content, structured []byte
	parked              time.Time
}

// results holds parked results by token until their response is written.
type results struct {
	mu     sync.Mutex
	parked map[string]preencodedResult
}

// park stores r and returns its token. Results whose response never came
// (a cancelled call) are dropped after a minute.
func (rs *results) park(r preencodedResult) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.parked == nil {
		rs.parked = make(map[string]preencodedResult)
	}
	now := time.Now()
	for tok, p := range rs.parked {
		if now.Sub(p.parked) > time.Minute {
			delete(rs.parked, tok)
		}
	}
	r.parked = now
	tok := rand.Text()
	rs.parked[tok] = r
	return tok
}

func (rs *results) take(tok string) (preencodedResult, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.parked[tok]
	delete(rs.parked, tok)
	return r, ok
}

// RunStdio serves one client over in and out (the process's stdin and
// stdout) until the client closes in or ctx ends, watching the memory file
// for other writers meanwhile.
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	sniffer := &batchSniffer{r: in}
	return s.run(ctx, &transport{
		inner: &mcp.IOTransport{Reader: sniffer, Writer: out},
		s:     s,
		out:   out,
		batch: sniffer,
	})
}

// transport wraps the connections of another: every error response gets a
// JSON-RPC code (wireError), including those the go-sdk produces before any
// middleware runs; and, when out is set (stdio), parked results are written
// in place of their placeholders.
type transport struct {
	inner mcp.Transport
	s     *Server
	out   io.Writer     // where inner writes; nil: no parked results
	batch *batchSniffer // with out
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if t.out == nil {
		return &conn{Connection: c, t: t}, nil
	}
	sc := &conn{Connection: c, t: t, id: "stdio-" + rand.Text()}
	t.s.parkingSessions.Store(sc.id, true)
	return sc, nil
}

// conn is a connection of transport. All writes pass through it, so its
// mutex also orders its direct writes with the SDK's.
type conn struct {
	mcp.Connection
	t  *transport
	id string // set when the session takes parked results
	mu sync.Mutex
}

// SessionID names a connection that takes parked results, so tool handlers
// can tell.
func (c *conn) SessionID() string {
	if c.id != "" {
		return c.id
	}
	return c.Connection.SessionID()
}

func (c *conn) Close() error {
	if c.id != "" {
		c.t.s.parkingSessions.Delete(c.id)
	}
	return c.Connection.Close()
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if resp.Error != nil {
			r := *resp
			r.Error = wireError(resp.Error)
			msg = &r
		} else if e, ok := c.t.s.expand(resp); ok {
			if c.t.batch.seen.Load() {
				// Responses to a batch go out together; let the SDK
				// collect this one with the real result.
				r := *resp
				r.Result = e.result()
				return c.Connection.Write(ctx, &r)
			}
			return e.writeTo(c.t.out)
		}
	}
	return c.Connection.Write(ctx, msg)
}

// expanded is a response rebuilt around a parked result, in pieces so the
// megabytes of content and structured result are not copied again.
type expanded struct {
	pieces [][]byte // the whole response line, "\n" included
}

// result joins the pieces of the tool result alone, for a batch.
func (e expanded) result() json.RawMessage {
	return json.RawMessage(bytes.Join(e.pieces[1:len(e.pieces)-1], nil))
}

// writeTo writes the response line piece by piece.
func (e expanded) writeTo(w io.Writer) error {
	for _, p := range e.pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// expand rebuilds a response whose result is a placeholder.
func (s *Server) expand(resp *jsonrpc.Response) (expanded, bool) {
	if !bytes.Contains(resp.Result, []byte(placeholderKey)) {
		return expanded{}, false
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result, &fields); err != nil {
		return expanded{}, false
	}
	var p placeholder
	if err := json.Unmarshal(fields["structuredContent"], &p); err != nil || p.Token == "" {
		return expanded{}, false
	}
	r, ok := s.results.take(p.Token)
	if !ok {
		return expanded{}, false
	}
	delete(fields, "structuredContent")
	delete(fields, "content")
	id, err := json.Marshal(resp.ID.Raw())
	if err != nil {
		return expanded{}, false
	}
	head := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	head = append(head, `,"result":`...)
	// The pieces between the first and the last are the result.
	var tail []byte
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		tail = append(append(append(tail, ','), kb...), ':')
		tail = append(tail, fields[k]...)
	}
	tail = append(tail, '}')
	return expanded{pieces: [][]byte{
		head,
		[]byte(`{"content":`), r.content, []byte(`,"structuredContent":`), r.structured, tail,
		[]byte("}\n"),
	}}, true
}

// batchSniffer watches the client's input for a JSON-RPC batch (an array at
// the top level), which makes the SDK send the responses of a batch
// together; direct writes would break that up.
type batchSniffer struct {
	r        io.ReadCloser
	seen     atomic.Bool
	depth    int
	inString bool
	escaped  bool
}

func (b *batchSniffer) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if !b.seen.Load() {
		for _, c := range p[:n] {
			switch {
			case b.inString:
				switch {
				case b.escaped:
					b.escaped = false
				case c == '\\':
					b.escaped = true
				case c == '"':
					b.inString = false
				}
			case c == '"':
				b.inString = true
			case c == '{' || c == '[':
				if c == '[' && b.depth == 0 {
					b.seen.Store(true)
				}
				b.depth++
			case c == '}' || c == ']':
				b.depth--
			}
		}
	}
	return n, err
}

func (b *batchSniffer) Close() error { return b.r.Close() }
