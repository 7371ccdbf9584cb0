package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// recentTime is a time as the memory file holds it.
var recentTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)

// stampTimes writes every time in a memory file that is within a day of
// now (what the test's writes recorded) as "T", so a test can say where the
// times are whatever the clock said. A recent "updatedAt" is left out: it is
// there only when the entity changed in a later second than it was created.
func stampTimes(data []byte) []byte {
	data = recentTime.ReplaceAllFunc(data, func(v []byte) []byte {
		t, err := time.Parse(time.RFC3339, string(v[1:len(v)-1]))
		if err == nil && time.Since(t).Abs() < 24*time.Hour {
			return []byte(`"T"`)
		}
		return v
	})
	return bytes.ReplaceAll(data, []byte(`,"updatedAt":"T"`), nil)
}

// withoutTimes is the memory file data with every time member left out:
// what the reference writes for the same graph.
func withoutTimes(t *testing.T, data []byte) []byte {
	t.Helper()
	f := jsonl.Decode(bytes.Clone(data))
	if len(f.Problems) > 0 {
		t.Fatalf("the memory file has problems: %q", f.Problems)
	}
	for _, e := range f.Graph.Entities() {
		e.Created, e.Updated, e.ObservedAt = 0, 0, nil
		e.SetEncodedLine(nil)
	}
	for _, r := range f.Graph.Relations() {
		r.Created = 0
	}
	var out bytes.Buffer
	if err := jsonl.Write(&out, f.Graph, f.Unreadable); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
