package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/kgmemory/mcp-server-memory/internal/testlog"
)

var update = flag.Bool("update", false, "rewrite the server sections of testdata/transcripts/*.txtar")

// TestTranscripts replays recorded JSON-RPC conversations against the real
// binary over stdio and compares every message the server sends, like the
// go-sdk's own conformance tests. Each file in testdata/transcripts has a
// "client" section (the messages sent, in order; the runner waits for the
// answer to each request before sending the next; one message a line, and a
// line that is not JSON is sent as it is and waits for an answer with id
// null) and a "server" section (everything the server wrote). Run with
// -update to record.
//
// Optional sections: "memory.jsonl" seeds the memory file; "after.jsonl" is
// the memory file expected at the end, each time written in it by the
// transcript's calls written "T".
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
	}
	client := bytes.Split(bytes.TrimSpace(sections["client"]), []byte("\n"))

	memory := filepath.Join(t.TempDir(), "memory.jsonl")
	if seed, ok := sections["memory.jsonl"]; ok {
		if err := os.WriteFile(memory, seed, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := serverCmd(memory)
	cmd.Stderr = testlog.OnFailure(t, "server stderr")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	lines := make(chan json.RawMessage)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			lines <- json.RawMessage(bytes.Clone(sc.Bytes()))
		}
	}()

	var got []json.RawMessage
	// next waits for the server's next message; ok is false on timeout.
	next := func(timeout time.Duration) (json.RawMessage, bool) {
		select {
		case l, ok := <-lines:
			return l, ok
		case <-time.After(timeout):
			return nil, false
		}
	}
	for _, msg := range client {
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Valid(msg) {
			json.Unmarshal(msg, &head)
			msg = compact(t, msg)
		} else {
			head.ID = json.RawMessage("null") // a parse error answers with id null
		}
		if _, err := stdin.Write(append(msg, '\n')); err != nil {
			t.Fatal(err)
		}
		if head.ID == nil {
			continue // a notification: nothing to wait for
		}
		if head.Method == "subscriptions/listen" {
			// The stream stays open; wait for its acknowledgement.
			l, ok := next(10 * time.Second)
			if !ok {
				t.Fatalf("no acknowledgement of %s", msg)
			}
			got = append(got, l)
			continue
		}
		for {
			l, ok := next(10 * time.Second)
			if !ok {
				t.Fatalf("no answer to %s", msg)
			}
			got = append(got, l)
			var resp struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(l, &resp)
			if bytes.Equal(resp.ID, head.ID) {
				break
			}
		}
	}
	// Anything else the server says shortly after the last answer counts too.
	for {
		l, ok := next(200 * time.Millisecond)
		if !ok {
			break
		}
		got = append(got, l)
	}
	// A clean exit folds the journal into the memory file, which the
	// after.jsonl section checks.
	stdin.Close()
	for range lines {
	}
	cmd.Wait()

	var rendered bytes.Buffer
	for _, m := range got {
		rendered.Write(normalize(t, m))
		rendered.WriteByte('\n')
	}
	if *update {
		for i, f := range ar.Files {
			if f.Name == "server" {
				ar.Files[i].Data = rendered.Bytes()
			}
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := decodeAll(sections["server"])
	if err != nil {
		t.Fatalf("server section: %v", err)
	}
	var wantRendered bytes.Buffer
	for _, m := range want {
		wantRendered.Write(normalize(t, m))
		wantRendered.WriteByte('\n')
	}
	if rendered.String() != wantRendered.String() {
		t.Errorf("server messages differ (run with -update to record)\ngot:\n%s\nwant:\n%s", rendered.String(), wantRendered.String())
	}
	if after, ok := sections["after.jsonl"]; ok {
		data, err := os.ReadFile(memory)
		if err != nil {
			t.Fatal(err)
		}
		if data = stampTimes(data); !bytes.Equal(data, after) {
			t.Errorf("memory file:\n%s\nwant:\n%s", data, after)
		}
	}
}

func decodeAll(data []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []json.RawMessage
	for {
		var m json.RawMessage
		if err := dec.Decode(&m); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

func compact(t *testing.T, m json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// versionPattern matches the server's version, which depends on the build.
var versionPattern = regexp.MustCompile(`"version":\s*"devel[^"]*"`)

// normalize renders a message with sorted keys and tab indents, and the
// build-dependent server version replaced.
func normalize(t *testing.T, m json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		t.Fatalf("server wrote invalid JSON %q: %v", m, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return versionPattern.ReplaceAll(bytes.TrimSuffix(b.Bytes(), []byte("\n")), []byte(`"version": "VERSION"`))
}
