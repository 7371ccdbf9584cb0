package server

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nastyText has what json.Marshal escapes and JSON.stringify does not.
const nastyText = "{\n  \"name\": \"<b>Tom & Jerry</b>\",\n  \"x\": \"line\u2028para\u2029 \x01 \x7f bad\xff \\\\ 日本 🧠\"\n}"

// TestToolResultJSONIsTheGoSDKs writes tool results of every shape the
// server makes, and some it does not, through toolResultJSON and through
// the go-sdk's own encoding: the bytes are the same.
func TestToolResultJSONIsTheGoSDKs(t *testing.T) {
	withMeta := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: nastyText}}, StructuredContent: json.RawMessage(`{"a":"<&>"}`)}
	withMeta.SetMeta(map[string]any{"io.modelcontextprotocol/serverInfo": &mcp.Implementation{Name: "n", Version: "1"}, "content": nil})
	big := strings.Repeat(nastyText, 5000)
	for name, r := range map[string]*mcp.CallToolResult{
		"answer":             {Content: []mcp.Content{&mcp.TextContent{Text: nastyText}, &mcp.TextContent{Text: "a note"}}, StructuredContent: json.RawMessage(`{"entities":[{"name":"<b>"}]}`)},
		"big":                {Content: []mcp.Content{&mcp.TextContent{Text: big}}, StructuredContent: json.RawMessage(`{"s":"` + strings.Repeat("x", 100000) + `"}`)},
		"tool error":         toolError(errorString(nastyText)),
		"empty text":         {Content: []mcp.Content{&mcp.TextContent{}}, StructuredContent: json.RawMessage(`{}`)},
		"no content":         {},
		"empty content":      {Content: []mcp.Content{}},
		"nil raw structured": {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(nil)},
		"value structured":   {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"b": "<", "a": 1}},
		"annotated text":     {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}},
		"image":              {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}, &mcp.TextContent{Text: "<"}}},
		"meta":               withMeta,
		//lint:ignore SA1019 a result may still carry sampling requests; the wire must write them as the go-sdk does
		"input requests": {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, InputRequests: mcp.InputRequestMap{"r": &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user"}}}}},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(toolResultJSON{CallToolResult: r})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestSplitMessageIsEncodeMessage checks that the stdio transport writes
// every kind of message as the go-sdk's encoder does.
func TestSplitMessageIsEncodeMessage(t *testing.T) {
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	for name, msg := range map[string]jsonrpc.Message{
		"result":          &jsonrpc.Response{ID: id(float64(7)), Result: json.RawMessage(`{"content":[{"type":"text","text":"\u003c"}]}`)},
		"string id":       &jsonrpc.Response{ID: id("a\"<b"), Result: json.RawMessage(`{}`)},
		"big result":      &jsonrpc.Response{ID: id(float64(1)), Result: json.RawMessage(`{"s":"` + strings.Repeat("y", 200000) + `"}`)},
		"error":           &jsonrpc.Response{ID: id(float64(2)), Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}},
		"no result":       &jsonrpc.Response{ID: id(float64(3))},
		"notification":    &jsonrpc.Request{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"memory://x"}`)},
		"no params":       &jsonrpc.Request{Method: "notifications/tools/list_changed"},
		"request to peer": &jsonrpc.Request{ID: id(float64(9)), Method: "ping", Params: json.RawMessage(`{}`)},
	} {
		want, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		head, payload, err := splitMessage(msg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := string(head)
		if payload != nil {
			got += string(payload) + "}"
		}
		if got != string(want) {
			t.Errorf("%s:\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

// TestWholeAnswerIsNotCopiedOverAndOver sends a whole read_graph over
// stdio and counts the bytes allocated meanwhile. The answer is encoded
// once (the text item and the structured content) and written into the
// result's parts, which go to the pipe as they are, the text item escaped
// a piece at a time: a little more than the line. When the result was
// written whole it was twice; when the go-sdk checked and copied it into
// its response three to six times; when it also encoded the text item and
// the result itself, and encoded the message again on stdio, about ten
// times.
func TestWholeAnswerIsNotCopiedOverAndOver(t *testing.T) {
	s, _, _ := serverOnGraph(t, 2000, 0)
	send, read := stdioSession(t, s)
	send(readGraphCall)
	read() // the memory is loaded
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	send(readGraphCall)
	line := read()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	// The text item (indented, not yet escaped) and the structured
	// content, and the page copied from the graph before it is encoded
	// (answer.Answer.Pick: each entity's and relation's fields and list of
	// observations, about a fifth of the answer here).
	limit := 1.9
	if ratio := float64(allocated) / float64(line); ratio > limit {
		t.Errorf("a whole read_graph of %d bytes allocated %d bytes, %.1f times the answer; want at most %g", line, allocated, ratio, limit)
	} else {
		t.Logf("a whole read_graph of %d bytes allocated %d bytes, %.1f times the answer", line, allocated, ratio)
	}
}

// TestBigAnswerIsCollected turns the collector's own pacing off and sends a
// small answer and then a whole read_graph of more than bigAnswer bytes:
// the server collects once, after the big one.
func TestBigAnswerIsCollected(t *testing.T) {
	s, _, _ := serverOnGraph(t, 20000, 0)
	send, read := stdioSession(t, s)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_nodes","arguments":{"names":["x"]}}}`)
	read() // the memory is loaded
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"open_nodes","arguments":{"names":["x"]}}}`)
	read()
	send(readGraphCall)
	if n := read(); n < bigAnswer {
		t.Fatalf("the whole graph is %d bytes, less than a big answer (%d)", n, bigAnswer)
	}
	collections := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC - before.NumGC
	}
	for deadline := time.Now().Add(10 * time.Second); collections() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if n := collections(); n != 1 {
		t.Errorf("%d collections after a small and a big answer; want 1, after the big one", n)
	}
}

// TestResultWrittenInPiecesIsTheSame writes results with long text items
// a piece at a time, with runes, bytes that are not UTF-8 and characters
// json.Marshal escapes across every piece boundary: the bytes are those of
// the result written whole, which are the go-sdk's.
func TestResultWrittenInPiecesIsTheSame(t *testing.T) {
	for _, tail := range []string{"日本", "🧠", "\u2028", "\xff\xfe", "\xe6\x97", "<&>", "\\\"", "\x01"} {
		for shift := range 8 {
			text := strings.Repeat("a", textPiece-shift) + strings.Repeat(tail+"x", textPiece/4) + tail
			r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: nastyText}}, StructuredContent: json.RawMessage(`{"a":1}`)}
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			p, err := toolResultJSON{CallToolResult: r}.parts()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := p.writeTo(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("tail %q, shift %d: written in pieces, the result differs from json.Marshal's", tail, shift)
			}
			if whole := p.appendTo(nil); !bytes.Equal(whole, want) {
				t.Fatalf("tail %q, shift %d: written whole, the result differs from json.Marshal's", tail, shift)
			}
		}
	}
}

// Only a big result takes this file's path: a smaller one is left to the
// go-sdk as it is, and its release runs at once.
func TestOnlyBigResultsPastTheGoSDK(t *testing.T) {
	ctx := context.WithValue(context.Background(), heldKey{}, &heldResults{})
	small := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	if out, kept := encodedOnce(ctx, small, resultSize(small), func() {}); out != mcp.Result(small) || kept {
		t.Errorf("small result: %T, kept %v; want it as it is", out, kept)
	}
	big := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", bigResult)}}}
	if out, kept := encodedOnce(ctx, big, resultSize(big), func() {}); !kept {
		t.Errorf("big result: %T, not held", out)
	}
	if payloadSize(&jsonrpc.Response{Result: json.RawMessage(`{}`)}) != 2 || payloadSize(&jsonrpc.Request{Params: json.RawMessage(`[]`)}) != 2 {
		t.Error("payloadSize")
	}
}
