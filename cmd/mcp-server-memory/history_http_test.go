//go:build !windows

package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// serveLabelled starts the binary serving named memories in a new
// directory (mem) with a tokens file granting memory alpha to two tokens,
// the first labelled "Alice's laptop", and returns its address.
func serveLabelled(t *testing.T, labelled, plain string) (base, mem string) {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	mem = filepath.Join(dir, "mem")
	if err := os.WriteFile(tokens, []byte(labelled+" alpha write Alice's laptop\n"+plain+" alpha write\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--http", "127.0.0.1:0", "--tokens", tokens, "--memories", mem)
	cmd.Env = append(os.Environ(), "MEMORY_HTTP_TOKEN=", "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=")
	child := startChild(t, cmd)
	base = "http://" + waitLog(t, child.stderr, regexp.MustCompile(`at http://(127\.0\.0\.1:\d+)/mcp/NAME `))[1]
	return base, mem
}

// Over HTTP with a tokens file, a write is recorded as made by the label
// the file gives the request's token, in both protocol generations; a
// token without a label is recorded by the client's own name.
func TestHistoryRecordsTokenLabel(t *testing.T) {
	const labelled, plain = "history-labelled-0123456789abcdef", "history-plain-0123456789abcdef"
	base, mem := serveLabelled(t, labelled, plain)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, token := range []string{labelled, plain} {
			name := version + "-" + token[:14]
			if text, isErr := callTool(t, mcpSession(t, base, "alpha", version, token), "create_entities", entityArgs(name)); isErr {
				t.Fatalf("%s: %s", name, text)
			}
		}
	}
	var got []string
	for _, r := range readHistory(t, filepath.Join(mem, "alpha.jsonl")) {
		got = append(got, r.Changes[0].Entity.Name+": "+r.Client)
	}
	want := []string{
		"2026-07-28-history-plain-: bounds",
		"2026-07-28-history-labell: Alice's laptop",
		"2025-11-25-history-plain-: bounds",
		"2025-11-25-history-labell: Alice's laptop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
}

// An edit on a memory's page under --http with a tokens file is recorded
// as the page's, made by the label the file gives the token that logged
// the request in: the bearer token, or the token whose cookie and key a
// page opened with ?token= sends. A token without a label names no
// client, and neither does the page of the `ui` command.
func TestPageEditsRecordTokenLabel(t *testing.T) {
	const labelled, plain = "page-labelled-0123456789abcdef", "page-plain-0123456789abcdef"
	base, mem := serveLabelled(t, labelled, plain)
	page := base + "/page/alpha/"
	edit := func(entity string, header ...string) {
		t.Helper()
		status, answer, _ := pageCall(t, "POST", page+"api/edit", `{"op":"createEntity","entity":"`+entity+`","entityType":"t"}`, header...)
		if status != http.StatusOK || answer["changed"] != true {
			t.Fatalf("creating %s on the page: %d %v", entity, status, answer)
		}
	}
	edit("by-bearer", "Authorization", "Bearer "+labelled)
	edit("by-plain-bearer", "Authorization", "Bearer "+plain)
	// The page's own login: the first visit sets the cookie and hands the
	// key over in the address's fragment.
	status, _, h := pageCall(t, "GET", page+"?token="+labelled, "")
	_, key, _ := strings.Cut(h.Get("Location"), "#key=")
	cookie := ""
	for _, c := range (&http.Response{Header: h}).Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	if status != http.StatusSeeOther || key == "" || cookie == "" {
		t.Fatalf("the page's first visit: %d %v", status, h)
	}
	edit("by-page-login", "Cookie", cookie, "X-Memory-Page-Key", key)

	var got []string
	for _, r := range readHistory(t, filepath.Join(mem, "alpha.jsonl")) {
		got = append(got, r.Changes[0].Entity.Name+": "+r.Tool+" "+r.Client)
	}
	want := []string{"by-page-login: page Alice's laptop", "by-plain-bearer: page ", "by-bearer: page Alice's laptop"}
	if !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}

	// The `ui` command's page.
	file := filepath.Join(t.TempDir(), "ui.jsonl")
	ui := exec.Command(binary, "ui", "--no-open", "--file", file)
	ui.Env = append(os.Environ(), "MEMORY_DATABASE_URL=", "MEMORY_FILE_PATH=")
	out, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startChild(t, ui)
	page = ""
	for lines := bufio.NewScanner(out); page == "" && lines.Scan(); {
		if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "http://"); ok {
			page = "http://" + u
		}
	}
	edit("by-ui")
	recs := readHistory(t, file)
	if len(recs) != 1 || recs[0].Tool != "page" || recs[0].Client != "" {
		t.Errorf("the ui command's page edit recorded as %+v", recs)
	}
}
