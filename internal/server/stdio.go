package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgmemory/mcp-server-memory/internal/protocol"
)

// RunStdio serves one client over in and out (the process's stdin and
// stdout) until the client closes in or ctx ends, watching the memory file
// for other writers meanwhile. Every request read before in closes is
// answered, and has taken effect, when RunStdio returns.
func (s *Server) RunStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	lines := newStdioLines(in, out)
	lines.maxCalls, lines.isWrite = s.limiter.Bounds().Calls, s.IsWrite
	return s.mcp.Run(context.WithValue(ctx, heldKey{}, &lines.held), lines)
}

// stdioLines is the stdio transport: the go-sdk's IOTransport behind a
// check of each line. The go-sdk reads stdin as a stream of JSON values,
// so one bad line ends the connection or swallows the lines after it, and
// it serves stdio as if every request were answered once stdin closes.
// stdioLines reads line by line and hands the go-sdk only lines that are
// JSON-RPC messages it can answer correctly. It answers the others itself:
//
//   - a line that is not JSON: -32700, id null;
//   - a line nested deeper than the go-sdk decodes (it would end the
//     connection, and with it every request in progress): -32600, with the
//     message's id when it has a usable one;
//   - JSON that is not a JSON-RPC message, or a batch the protocol does
//     not allow: -32600, with the message's id when it has a usable one;
//   - an id that is a number with a fraction (the go-sdk would answer it as
//     another id), or the id of a request of this connection still in
//     progress (the go-sdk would never answer it): -32600;
//   - server/discover without the protocol version in _meta: -32602, as
//     for every other request of that protocol.
//
// When stdin ends, it tells the go-sdk only once every request it handed
// over has been answered. Its connection also gives every error response a
// JSON-RPC code (errors.go): the go-sdk sends some of its own refusals,
// made before any middleware runs, with code 0.
type stdioLines struct {
	in  *bufio.Reader
	raw io.Closer
	out *lockedWriter

	mu          sync.Mutex
	changed     *sync.Cond        // signalled when answered or closed change
	inProgress  map[string]string // method by id key, for requests handed over
	batched     map[string]bool   // id keys of calls that came in a batch
	kinds       map[string]kind   // the kind of each call handed over, by id key
	calls       [kindCount]int    // calls handed over and not answered, by kind
	maxCalls    int               // reads and writes in progress allowed, each
	isWrite     func(tool string) bool
	unanswered  int // requests handed over whose answer is not written yet, listens aside
	closed      bool
	initialized bool   // initialize was answered with a result
	version     string // the version initialize negotiated
	next        []byte // the rest of the line being handed over

	held heldResults // tool results written, waiting for their responses
}

func newStdioLines(in io.ReadCloser, out io.WriteCloser) *stdioLines {
	l := &stdioLines{
		in:         bufio.NewReaderSize(in, 64<<10),
		raw:        in,
		out:        &lockedWriter{w: out},
		inProgress: make(map[string]string),
		batched:    make(map[string]bool),
		kinds:      make(map[string]kind),
		maxCalls:   DefaultMaxCalls,
		isWrite:    func(string) bool { return false },
	}
	l.changed = sync.NewCond(&l.mu)
	return l
}

// Connect implements mcp.Transport.
func (l *stdioLines) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := (&mcp.IOTransport{Reader: (*lineReader)(l), Writer: l.out, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &stdioConn{Connection: inner, l: l}, nil
}

// lineReader is the stdin the go-sdk reads: checked lines only.
type lineReader stdioLines

func (r *lineReader) Close() error { return r.raw.Close() }

func (r *lineReader) Read(p []byte) (int, error) {
	l := (*stdioLines)(r)
	for len(l.next) == 0 {
		line, tooLong, err := l.readLine()
		if tooLong {
			l.reply(nil, protocol.ErrLineTooLong(maxLineLength))
		} else if line = bytes.TrimSpace(line); len(line) > 0 && l.check(line) {
			l.next = append(line, '\n')
		}
		if err != nil && len(l.next) == 0 {
			l.waitForAnswers()
			return 0, err
		}
	}
	n := copy(p, l.next)
	l.next = l.next[n:]
	return n, nil
}

// maxLineLength bounds one line of stdin, as the go-sdk bounds a message.
var maxLineLength = mcp.DefaultMaxLineLength

// readLine reads the next line. A line longer than maxLineLength is read
// to its end and dropped.
func (l *stdioLines) readLine() (line []byte, tooLong bool, err error) {
	for {
		part, err := l.in.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(part) > maxLineLength {
				tooLong, line = true, nil
			} else {
				line = append(line, part...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// waitForAnswers waits until every request handed over has been answered,
// or the connection closed.
func (l *stdioLines) waitForAnswers() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.unanswered > 0 && !l.closed {
		l.changed.Wait()
	}
}

// message is a JSON-RPC message as the checks see it, decoded in one pass.
type message struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	method  string
}

// isCall reports whether m is a request that expects an answer.
func (m *message) isCall() bool { return m.Method != nil && m.ID != nil }

// check decides whether line goes to the go-sdk, answering it if not, and
// records the requests it lets through. Each line is decoded once here
// (the go-sdk decodes it again).
func (l *stdioLines) check(line []byte) bool {
	msgs, ok := l.decode(line)
	if !ok {
		return false
	}
	for i := range msgs {
		if err := l.checkMessage(&msgs[i], line); err != nil {
			l.reply(msgs[i].ID, err)
			return false
		}
	}
	return l.handOver(msgs, line[0] == '[')
}

// decode decodes a line into its messages (one, or a batch's), answering
// it if it is not one or a batch the protocol allows.
func (l *stdioLines) decode(line []byte) ([]message, bool) {
	if protocol.NestingDepth(line) > protocol.MaxNesting {
		l.reply(usableID(line), protocol.ErrTooDeep(protocol.MaxNesting))
		return nil, false
	}
	if line[0] != '[' {
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			l.reply(nil, notJSONOrNotObject(err))
			return nil, false
		}
		return []message{m}, true
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil {
		l.reply(nil, notJSONOrNotObject(err))
		return nil, false
	}
	l.mu.Lock()
	version := l.version
	l.mu.Unlock()
	if !protocol.HasBatches(version) {
		l.reply(nil, protocol.ErrBatch("protocol "+version+" has no JSON-RPC batches; send one message a line"))
		return nil, false
	}
	if len(elems) == 0 {
		l.reply(nil, protocol.ErrBatch("the batch is empty"))
		return nil, false
	}
	msgs := make([]message, len(elems))
	for i, raw := range elems {
		if err := json.Unmarshal(raw, &msgs[i]); err != nil {
			l.reply(nil, protocol.ErrNotJSONRPC(errors.New("not a JSON object")))
			return nil, false
		}
	}
	return msgs, true
}

// handOver records the requests among msgs as handed over to the go-sdk,
// or answers the line if one of them repeats an id of the batch or goes
// past the calls in progress the connection may have.
func (l *stdioLines) handOver(msgs []message, batch bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	type call struct {
		method string
		kind   kind
	}
	calls := map[string]call{} // by id key
	var added [kindCount]int
	for _, m := range msgs {
		if !m.isCall() {
			continue // a notification, or a response to the server
		}
		key := idKey(m.ID)
		if _, dup := calls[key]; dup {
			// A batch that repeats an id.
			l.reply(m.ID, protocol.ErrIDInUse(string(m.ID)))
			return false
		}
		k := l.kindOf(&m)
		if added[k]++; k != other && l.calls[k]+added[k] > l.maxCalls {
			l.reply(m.ID, ErrTooManyCalls("this connection", k == write, l.maxCalls))
			return false
		}
		calls[key] = call{m.method, k}
	}
	for key, c := range calls {
		l.inProgress[key] = c.method
		l.kinds[key] = c.kind
		l.calls[c.kind]++
		if batch {
			l.batched[key] = true
		}
		if c.method != "subscriptions/listen" {
			l.unanswered++
		}
	}
	return true
}

// kind is what the calls in progress of a connection are counted by
// (bounds.go): reads and writes apart, and not the others.
type kind int8

const (
	other kind = iota
	read
	write
	kindCount
)

// kindOf tells whether m reads the memory (a read tool, resources/read),
// writes it (a write tool), or neither.
func (l *stdioLines) kindOf(m *message) kind {
	switch m.method {
	case "resources/read":
		return read
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(m.Params, &p)
		if l.isWrite(p.Name) {
			return write
		}
		return read
	}
	return other
}

// usableID returns the id of the message on line when it has one this
// server can answer under (a string or an integer), or nil.
func usableID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	if m.ID[0] == '"' {
		return m.ID
	}
	if _, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil {
		return m.ID
	}
	return nil
}

// notJSONOrNotObject answers a line that did not decode: -32700 when it is
// not JSON, -32600 when it is JSON of the wrong shape.
func notJSONOrNotObject(err error) *jsonrpc.Error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return protocol.ErrParse("line", err)
	}
	return protocol.ErrNotJSONRPC(errors.New("not a JSON object"))
}

// checkMessage checks one decoded message against the rules of the go-sdk's
// decoder (jsonrpc.DecodeMessage), and ours. On error, m.ID is the id to
// answer with, or nil. line is the whole line, for the go-sdk's decoder in
// the rare case of a response from the client.
func (l *stdioLines) checkMessage(m *message, line []byte) *jsonrpc.Error {
	e, badID := checkID(m)
	if e != nil {
		return e
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		v := ""
		if m.JSONRPC != nil {
			v = *m.JSONRPC
		}
		return protocol.ErrNotJSONRPC(fmt.Errorf("invalid message version tag %q; expected %q", v, "2.0"))
	case badID != nil:
		return protocol.ErrNotJSONRPC(badID)
	case m.Method == nil:
		// A response to the server: the go-sdk's decoder decides.
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return protocol.ErrNotJSONRPC(err)
		}
		return nil
	}
	if err := json.Unmarshal(m.Method, &m.method); err != nil {
		return protocol.ErrNotJSONRPC(errors.New("method is not a string"))
	}
	if !m.isCall() {
		return nil
	}
	return l.checkCall(m)
}

// checkID looks at m's id: a null id is no id; a number out of range is
// answered at once (e); an id of another type is dropped and reported
// (badID), to be answered once the version tag is known to be right.
func checkID(m *message) (e *jsonrpc.Error, badID error) {
	if string(m.ID) == "null" {
		m.ID = nil
	}
	switch {
	case m.ID == nil, m.ID[0] == '"':
	case m.ID[0] == '-' || ('0' <= m.ID[0] && m.ID[0] <= '9'):
		if protocol.BadID(m.ID) {
			return protocol.ErrBadID(string(m.ID)), nil
		}
	default:
		badID = fmt.Errorf("invalid ID type %s", m.ID)
		m.ID = nil
	}
	return nil, badID
}

// checkCall checks a well-formed call: its id is not one still being
// answered, and server/discover carries _meta.
func (l *stdioLines) checkCall(m *message) *jsonrpc.Error {
	l.mu.Lock()
	_, dup := l.inProgress[idKey(m.ID)]
	l.mu.Unlock()
	if dup {
		return protocol.ErrIDInUse(string(m.ID))
	}
	if m.method == "server/discover" {
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		if protocol.DiscoverLacksMeta(m.method, p.Meta) {
			return protocol.ErrDiscoverWithoutMeta()
		}
	}
	return nil
}

// idKey names a request id the same way from the wire and from a
// jsonrpc.ID: integers by value, strings by content.
func idKey(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return "s" + s
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64) // checked before
	return "n" + strconv.FormatInt(n, 10)
}

func idKeyOf(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return ""
}

// reply writes an error response the go-sdk never sees.
func (l *stdioLines) reply(id json.RawMessage, e *jsonrpc.Error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	l.out.Write(append(data, '\n'))
}

// stdioConn is the go-sdk's connection over stdioLines.
type stdioConn struct {
	mcp.Connection
	l *stdioLines
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.write(ctx, msg, false, nil)
	}
	l := c.l
	held, _ := l.held.take(resp.Result)
	l.mu.Lock()
	key := idKeyOf(resp.ID)
	method, handedOver := l.inProgress[key]
	batched := l.batched[key]
	// The client may reuse the id as soon as it reads this answer.
	delete(l.inProgress, key)
	delete(l.batched, key)
	k, counted := l.kinds[key]
	delete(l.kinds, key)
	initialized := l.initialized
	if method == "initialize" && resp.Error == nil {
		l.initialized = true
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(resp.Result, &r)
		l.version = r.ProtocolVersion
	}
	l.mu.Unlock()
	if resp.Error != nil {
		r := *resp
		r.Error = classify(method, initialized, resp.Error)
		resp = &r
	}
	err := c.write(ctx, resp, batched, held)
	if held != nil && held.release != nil {
		held.release()
	}
	// The call counts as in progress until its answer is written: a client
	// that does not read its answers cannot make the server hold more.
	l.mu.Lock()
	if counted {
		l.calls[k]--
	}
	if handedOver && method != "subscriptions/listen" {
		l.unanswered--
		l.changed.Broadcast()
	}
	l.mu.Unlock()
	return err
}

func (c *stdioConn) Close() error {
	c.l.mu.Lock()
	c.l.closed = true
	c.l.changed.Broadcast()
	c.l.mu.Unlock()
	c.l.held.releaseAll()
	return c.Connection.Close()
}

// lockedWriter lets the go-sdk and stdioLines write whole lines to one
// stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lockedWriter) Close() error { return w.w.Close() }
