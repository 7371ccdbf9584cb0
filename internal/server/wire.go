package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Big results past the go-sdk: everything in this file pays only for
// results of bigResult bytes or more, which with the default answer limit
// only a whole resources/read reaches, and with MEMORY_ANSWER_LIMIT=0 every
// whole answer of a big memory. Smaller results take the go-sdk's own path
// (docs/performance.md has the measurements both ways).
//
// A big tool result reaches the wire through toolResultJSON: the answer
// package encoded it once (the text item and the structured content), and
// toolResultJSON writes those bytes into the result in one pass. Left to
// itself, the go-sdk would encode each text item with json.Marshal and then
// check and copy the result's JSON again at every level that has its own
// MarshalJSON (the text item, the result): for a whole answer of 100k
// entities, over a hundred megabytes each time. On stdio the written result
// is held past the go-sdk (heldResults) and written in parts
// (stdioConn.write), and a collection follows it (collectAfter).

// bigResult is the size (resultSize) from which a result takes the path of
// this file.
const bigResult = 1 << 20

// toolResultJSON is a tools/call result as the go-sdk would write it, byte
// for byte, written in one pass. Everything the go-sdk adds to a result
// after the tool returns (_meta, resultType) is in the embedded result and
// written by the go-sdk's own encoding.
type toolResultJSON struct {
	*mcp.CallToolResult
	// held, on stdio, takes the written result and gives the go-sdk a
	// token to carry in its place (see heldResults).
	held *heldResults
	// release lets the answer's bytes go (bounds.go) once the held result
	// is written.
	release func()
}

// contentHole is what the go-sdk writes for a result whose content is nil:
// toolResultJSON writes the content and the structured content there. It
// cannot occur inside a JSON string (a quote there is escaped), and the
// result's own member is the last that can have it: "_meta" comes before,
// and what comes after ("isError", "resultType") has no such member. A
// result asking the client for input ("inputRequests", which could) is
// left to the go-sdk; this server's tools ask for none.
const contentHole = `"content":null`

func (r toolResultJSON) MarshalJSON() ([]byte, error) {
	if r.InputRequests != nil {
		return json.Marshal(r.CallToolResult)
	}
	p, err := r.parts()
	if err != nil {
		return nil, err
	}
	r.letGo()
	if r.held != nil {
		p.release = r.release
		return r.held.put(p), nil
	}
	return p.appendTo(make([]byte, 0, p.size)), nil
}

// parts lays the result out as it is written: its JSON, with each text
// item left to be escaped as it is written.
func (r toolResultJSON) parts() (*resultParts, error) {
	rest := *r.CallToolResult
	rest.Content, rest.StructuredContent = nil, nil
	head, err := json.Marshal(&rest)
	if err != nil {
		return nil, err
	}
	p := &resultParts{}
	hole := bytes.LastIndex(head, []byte(contentHole))
	if hole < 0 {
		whole, err := json.Marshal(r.CallToolResult)
		p.add(whole)
		p.flush()
		return p, err
	}
	structured, err := structuredJSON(r.StructuredContent)
	if err != nil {
		return nil, err
	}
	p.add(head[:hole])
	p.add([]byte(`"content":`))
	if r.Content == nil {
		p.add([]byte("null"))
	} else {
		p.add([]byte{'['})
		for i, c := range r.Content {
			if i > 0 {
				p.add([]byte{','})
			}
			if err := p.addContent(c); err != nil {
				return nil, err
			}
		}
		p.add([]byte{']'})
	}
	if structured != nil {
		p.add([]byte(`,"structuredContent":`))
		p.addWhole(structured)
	}
	p.add(head[hole+len(contentHole):])
	p.flush()
	return p, nil
}

// resultParts is a result's JSON in the order it is written: parts written
// as they are, and text items, written escaped as encoding/json escapes a
// string. A whole answer's text item is most of its bytes (at 100k
// entities, about 75 MB before escaping), and is escaped into the pipe a
// piece at a time rather than into a copy of the whole result.
type resultParts struct {
	parts []resultPart
	size  int    // about the bytes written
	small []byte // short parts, joined until the next long one
	// release, when not nil, lets the answer's bytes go once it is written.
	release func()
}

type resultPart struct {
	raw    []byte
	text   string
	escape bool // text, escaped as a JSON string, rather than raw
}

func (p *resultParts) add(b []byte) {
	p.small = append(p.small, b...)
	p.size += len(b)
}

// addWhole adds a long part without copying it.
func (p *resultParts) addWhole(b []byte) {
	p.flush()
	p.parts = append(p.parts, resultPart{raw: b})
	p.size += len(b)
}

func (p *resultParts) addText(s string) {
	p.flush()
	p.parts = append(p.parts, resultPart{text: s, escape: true})
	// Indented JSON: about one quote or new line in eight bytes.
	p.size += len(s) + len(s)/8 + 2
}

func (p *resultParts) flush() {
	if len(p.small) > 0 {
		p.parts = append(p.parts, resultPart{raw: p.small})
		p.small = nil
	}
}

// addContent adds one content item as the go-sdk writes it.
func (p *resultParts) addContent(c mcp.Content) error {
	t, ok := c.(*mcp.TextContent)
	if !ok || t.Meta != nil || t.Annotations != nil {
		b, err := json.Marshal(c)
		p.add(b)
		return err
	}
	p.add([]byte(`{"type":"text","text":`))
	if len(t.Text) < 4<<10 {
		p.add(graph.AppendGoString(nil, t.Text))
	} else {
		p.addText(t.Text)
	}
	p.add([]byte{'}'})
	return nil
}

// appendTo appends the result's JSON to out.
func (p *resultParts) appendTo(out []byte) []byte {
	for _, part := range p.parts {
		if part.escape {
			out = graph.AppendGoString(out, part.text)
		} else {
			out = append(out, part.raw...)
		}
	}
	return out
}

// textPiece is how much of a text item is escaped at a time when written.
const textPiece = 64 << 10

// writeTo writes the result's JSON to w, escaping each text item a piece
// at a time.
func (p *resultParts) writeTo(w io.Writer) error {
	var buf []byte
	for _, part := range p.parts {
		if !part.escape {
			if _, err := w.Write(part.raw); err != nil {
				return err
			}
			continue
		}
		buf = append(buf[:0], '"')
		for s := part.text; ; {
			n := min(len(s), textPiece)
			// A piece ends where a rune starts, so no rune is split
			// (bytes that are not UTF-8 are escaped one by one anyway).
			for back := 0; n < len(s) && back < utf8.UTFMax && !utf8.RuneStart(s[n]); back++ {
				n--
			}
			buf = graph.AppendGoStringBody(buf, s[:n])
			if s = s[n:]; len(s) == 0 {
				buf = append(buf, '"')
			}
			if len(buf) >= textPiece || len(s) == 0 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			if len(s) == 0 {
				break
			}
		}
	}
	return nil
}

// letGo drops the result's text items and structured content once they
// are written: a result is written once, and the go-sdk then makes two more
// copies of what MarshalJSON returns while the result is still held (for a
// whole answer of 100k entities, 85 MB that can be collected meanwhile).
func (r toolResultJSON) letGo() {
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = ""
		}
	}
	r.StructuredContent = nil
}

// structuredJSON returns the structured content's JSON, nil when it is
// left out. The answer package's is compact JSON already, as encoding/json
// would make it.
func structuredJSON(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(v) > 0 {
			return v, nil
		}
	}
	return json.Marshal(v)
}

// encodedOnce gives a big tool result (size bytes) its one-pass encoding,
// and on stdio has it skip the go-sdk's check and copy; a smaller one is
// left as it is. kept reports whether release
// is left to run when the result is written (a result held on stdio);
// otherwise the caller runs it.
func encodedOnce(ctx context.Context, res mcp.Result, size int64, release func()) (out mcp.Result, kept bool) {
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && size >= bigResult {
		held, _ := ctx.Value(heldKey{}).(*heldResults)
		kept = held != nil && r.InputRequests == nil
		return toolResultJSON{r, held, release}, kept
	}
	return res, false
}

// resultSize is about the bytes a result holds: its texts and its
// structured content.
func resultSize(res mcp.Result) int64 {
	var n int64
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r == nil {
			return 0
		}
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				n += int64(len(t.Text))
			}
		}
		if raw, ok := r.StructuredContent.(json.RawMessage); ok {
			n += int64(len(raw))
		}
	case *mcp.ReadResourceResult:
		for _, c := range r.Contents {
			n += int64(len(c.Text) + len(c.Blob))
		}
	}
	return n
}

// heldResults carries tool results past the go-sdk on stdio. The go-sdk
// encodes a result with encoding/json, which checks and copies whatever a
// MarshalJSON returns: for a whole answer that is most of the server's
// time (a 12 MB line at 10k entities, 120 MB at 100k). So on stdio,
// toolResultJSON leaves the written result here and returns a token, a
// JSON string; the stdio connection takes the result back when the go-sdk
// writes the response carrying the token, and writes the result as it is.
// A result is an object, never a string, so no other response can carry a
// token. Each stdio connection has its own, and a result is held only
// between its encoding and the writing of its response.
type heldResults struct {
	mu   sync.Mutex
	next uint64
	m    map[string]*resultParts
}

// heldKey is the context key under which RunStdio passes a connection's
// heldResults to the tool calls it serves.
type heldKey struct{}

const heldPrefix = `"held result `

// put holds result and returns its token.
func (h *heldResults) put(result *resultParts) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	token := heldPrefix + strconv.FormatUint(h.next, 10) + `"`
	if h.m == nil {
		h.m = make(map[string]*resultParts)
	}
	h.m[token] = result
	return []byte(token)
}

// take returns the result a response's token stands for, and lets go of
// it; ok is false for a response that carries no token.
func (h *heldResults) take(result json.RawMessage) (held *resultParts, ok bool) {
	if !bytes.HasPrefix(result, []byte(heldPrefix)) {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	held, ok = h.m[string(result)]
	delete(h.m, string(result))
	return held, ok
}

// releaseAll lets go of every result still held, when the connection
// closes: their responses will never be written.
func (h *heldResults) releaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for token, p := range h.m {
		if p.release != nil {
			p.release()
		}
		delete(h.m, token)
	}
}

// A whole answer's buffers are garbage once its line is written, but the
// Go runtime collects only when the heap has grown by as much as was live
// at the last collection (GOGC=100). A collection that ran while a big
// answer was being encoded counted its buffers as live, so the heap may
// then grow to twice the memory plus the answer before the next one: at
// 100k entities, a server of 260 MB grew past 1.1 GB over a few whole
// answers. So after a big answer is written the server collects at once,
// in the background (the client is still reading the answer), and the
// heap grows from what is really live.

// bigAnswer is the size of a written message past which the server
// collects.
const bigAnswer = 4 << 20

var collecting atomic.Bool

// collectAfter starts a collection after a message of n bytes was written,
// when n is big and no collection it started is still running.
func collectAfter(n int) {
	if n < bigAnswer || !collecting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer collecting.Store(false)
		runtime.GC()
	}()
}

// write sends one message as a line. A message whose payload is under
// bigResult, and the answers to a batch, go through the go-sdk (which sends
// a batch's answers together as one array). A bigger one is written here,
// as the go-sdk would write it, but without encoding its payload (a
// result, or a request's params) again: the go-sdk encoded it already, and
// would check and copy it twice more (for a whole answer of 100k entities,
// over a hundred megabytes each time). held, when not nil, is the result
// the go-sdk carried a token for.
func (c *stdioConn) write(ctx context.Context, msg jsonrpc.Message, batched bool, held *resultParts) error {
	if held == nil && payloadSize(msg) < bigResult {
		return c.Connection.Write(ctx, msg) // the go-sdk's own path
	}
	if batched {
		if held != nil {
			r := *msg.(*jsonrpc.Response)
			r.Result = held.appendTo(make([]byte, 0, held.size))
			msg = &r
		}
		return c.Connection.Write(ctx, msg)
	}
	if err := ctx.Err(); err != nil {
		return err // as the go-sdk's connection does
	}
	head, payload, err := splitMessage(msg)
	if err != nil {
		return err
	}
	if held == nil && payload != nil {
		held = &resultParts{parts: []resultPart{{raw: payload}}, size: len(payload)}
	}
	err = c.l.out.writeLine(head, held)
	if held != nil {
		collectAfter(held.size)
	}
	return err
}

// payloadSize is the bytes of a message's params or result.
func payloadSize(msg jsonrpc.Message) int {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return len(m.Params)
	case *jsonrpc.Response:
		return len(m.Result)
	}
	return 0
}

// splitMessage encodes msg as the go-sdk's jsonrpc.EncodeMessage does, but
// leaves the payload out: the line is head, then payload and "}" when
// payload is not nil. The payload is the message's last member (a
// request's params, or a response's result when it has no error), JSON the
// go-sdk encoded compactly, which EncodeMessage would copy as it is.
func splitMessage(msg jsonrpc.Message) (head, payload []byte, err error) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if len(m.Params) > 0 {
			bare := *m
			bare.Params, payload = nil, m.Params
			head, err = jsonrpc.EncodeMessage(&bare)
			head = append(head[:len(head)-1], `,"params":`...)
		}
	case *jsonrpc.Response:
		if len(m.Result) > 0 && m.Error == nil {
			bare := *m
			bare.Result, payload = nil, m.Result
			head, err = jsonrpc.EncodeMessage(&bare)
			head = append(head[:len(head)-1], `,"result":`...)
		}
	}
	if payload == nil {
		head, err = jsonrpc.EncodeMessage(msg)
	}
	return head, payload, err
}

// writeLine writes head, then payload and "}" when payload is not nil,
// then a new line, as one line. A big payload is written a part at a time
// (its text items escaped a piece at a time), never copied whole.
func (w *lockedWriter) writeLine(head []byte, payload *resultParts) error {
	if payload == nil {
		_, err := w.Write(append(head, '\n'))
		return err
	}
	if payload.size <= 64<<10 {
		_, err := w.Write(append(payload.appendTo(head), '}', '\n'))
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(head); err != nil {
		return err
	}
	if err := payload.writeTo(w.w); err != nil {
		return err
	}
	_, err := w.w.Write([]byte("}\n"))
	return err
}
