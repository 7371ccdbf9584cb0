package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// readForward is the whole read ReadFile replaces: every line parsed,
// oldest first; the model the backward reader is held to.
func readForward(path string, f Filter) (records []graph.Record, err error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	r := bufio.NewReader(file)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if rec, derr := jsonl.DecodeRecord(line); derr == nil && f.Match(&rec) {
				if f.Headers {
					rec.Changes = nil
				}
				records = append(records, rec)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if f.Limit > 0 && len(records) > f.Limit {
		records = records[len(records)-f.Limit:]
	}
	return records, nil
}

// randomHistory writes a history file as the appenders do (ids from NewID,
// after the last), with a clock that sometimes goes back, records of
// every size (some longer than a read block), unreadable lines, blank
// lines, and sometimes a torn last line. It returns the records' times
// and ids.
func randomHistory(t *testing.T, rng *rand.Rand, path string) (times []time.Time, ids []string) {
	var buf bytes.Buffer
	clock := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	last := ""
	n := rng.IntN(200)
	clients := []string{"", "a", "b", `Claude "Desktop"`, "Кир\\x"}
	names := []string{"A", "B", "C"}
	for range n {
		switch rng.IntN(20) {
		case 0:
			buf.WriteString("not a record\n")
			continue
		case 1:
			buf.WriteString("\n")
			continue
		case 2:
			buf.WriteString(`{"id":"` + graph.NewID(clock, last) + `","time":"garbage"}` + "\n")
			continue
		}
		if rng.IntN(10) == 0 {
			clock = clock.Add(-time.Duration(rng.IntN(7200)) * time.Second) // a clock set back
		} else {
			clock = clock.Add(time.Duration(rng.IntN(3*24*3600)) * time.Second)
		}
		obs := []string{"o"}
		if rng.IntN(50) == 0 {
			obs[0] = string(bytes.Repeat([]byte("x"), readBlock+rng.IntN(readBlock))) // longer than a block
		}
		r := graph.Record{ID: graph.NewID(clock, last), Time: clock.Truncate(time.Second), Tool: "t", Client: clients[rng.IntN(len(clients))],
			Changes: []graph.Change{{Kind: []graph.ChangeKind{graph.EntityCreated, graph.EntityDeleted}[rng.IntN(2)], Entity: graph.Entity{Name: names[rng.IntN(3)], EntityType: "p", Observations: obs}}}}
		last = r.ID
		buf.Write(graph.AppendRecord(nil, &r))
		times, ids = append(times, r.Time), append(ids, r.ID)
	}
	if rng.IntN(3) == 0 {
		buf.WriteString(`{"id":"` + graph.NewID(clock, last) + `","time":"2026-`) // torn
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return times, ids
}

// The backward reader returns what a whole read returns for every filter:
// since (at a record's time, between, before all, after all), client,
// entity, id, entity deletions, limit and headers only, on random files with unreadable and torn lines.
func TestReadFileAsWholeRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	for i := range 60 {
		times, ids := randomHistory(t, rng, path)
		var filters []Filter
		for range 12 {
			var f Filter
			if len(times) > 0 && rng.IntN(4) > 0 {
				f.Since = times[rng.IntN(len(times))].Add(time.Duration(rng.IntN(3)-1) * time.Duration(rng.IntN(3600)) * time.Second)
			} else if rng.IntN(2) == 0 {
				f.Since = time.Date(2026, 8, 1+rng.IntN(200), 0, 0, 0, 0, time.UTC)
			}
			if rng.IntN(3) == 0 {
				f.Client = []string{"a", "b", "z"}[rng.IntN(3)]
			}
			if rng.IntN(3) == 0 {
				f.Entity = []string{"A", "B", "Z"}[rng.IntN(3)]
			}
			if len(ids) > 0 && rng.IntN(4) == 0 {
				f.ID = ids[rng.IntN(len(ids))]
			}
			if rng.IntN(2) == 0 {
				f.Limit = 1 + rng.IntN(20)
			}
			f.DeletesEntity = rng.IntN(3) == 0
			f.Headers = rng.IntN(3) == 0
			filters = append(filters, f)
		}
		filters = append(filters, Filter{})
		for _, f := range filters {
			want, err := readForward(path, f)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := ReadFile(path, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
				data, _ := os.ReadFile(path)
				t.Fatalf("file %d (%d bytes), filter %+v: %d records, want %d:\n%s", i, len(data), f, len(got), len(want), summary(got, want))
			}
		}
	}
}

func summary(got, want []graph.Record) string {
	s := ""
	for _, r := range got {
		s += fmt.Sprintf("got  %s %s\n", r.ID, r.Time)
	}
	for _, r := range want {
		s += fmt.Sprintf("want %s %s\n", r.ID, r.Time)
	}
	return s
}

// The skipped lines ReadFile counts are the unreadable ones it read: a
// torn last line, a blank line and a line that is no record.
func TestReadFileCountsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl"+Suffix)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a, b := record(now, "a"), record(now.Add(time.Hour), "b")
	data := string(graph.AppendRecord(nil, &a)) + "junk\n\n" + string(graph.AppendRecord(nil, &b)) + `{"id":"01`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	recs, skipped, err := ReadFile(path, Filter{})
	if err != nil || tools(recs) != "a b" || skipped != 3 {
		t.Errorf("read %q, skipped %d, %v; want a b, 3", tools(recs), skipped, err)
	}
	recs, skipped, err = ReadFile(path, Filter{Since: now.Add(30 * time.Minute)})
	if err != nil || tools(recs) != "b" || skipped != 3 {
		t.Errorf("since: read %q, skipped %d, %v; want b, 3", tools(recs), skipped, err)
	}
}
