package history

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
)

// Purger is a memory whose history can forget an entity: both stores.
type Purger interface {
	// PurgeHistory removes from the history, for good, every change
	// naming the entity (as Filter.Entity chooses them), and every record
	// left with no change; it returns how many records it changed or
	// removed.
	PurgeHistory(ctx context.Context, entity string) (int, error)
}

// Purge returns r without its changes that name entity (the entity's own
// changes and its relations'), and whether it had any.
func Purge(r graph.Record, entity string) (graph.Record, bool) {
	kept := make([]graph.Change, 0, len(r.Changes))
	for _, c := range r.Changes {
		if !names(c, entity) {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(r.Changes) {
		return r, false
	}
	r.Changes = kept
	return r, true
}

// names reports whether c names entity.
func names(c graph.Change, entity string) bool {
	return c.Entity.Name == entity || c.Relation.From == entity || c.Relation.To == entity
}

// PurgeFile purges the history file at path of entity (Purge on each
// record; a record left with no change goes whole, and so does a line
// that does not read but holds the name), rewriting it as one durable
// step with mode perm. It returns how many records it changed or removed;
// with none, it leaves the file alone. The caller holds the memory's lock.
func PurgeFile(path, entity string, perm fs.FileMode) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := purgeLines(f, io.Discard, entity)
	if err != nil || n == 0 {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	_, err = durable.WriteFile(path, perm, func(w io.Writer) error {
		_, err := purgeLines(f, w, entity)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// purgeLines copies the record lines of r to w, purged of entity, and
// returns how many it changed or dropped.
func purgeLines(r io.Reader, w io.Writer, entity string) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	raw := []byte(entity)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			out, changed := purgeLine(line, entity, raw)
			if changed {
				n++
			}
			bw.Write(out)
		}
		if err == io.EOF {
			return n, bw.Flush()
		}
		if err != nil {
			return 0, err
		}
	}
}

// purgeLine returns line purged of entity (nil: dropped), and whether
// that changed it. A line that does not hold the name's text is not read.
func purgeLine(line []byte, entity string, raw []byte) ([]byte, bool) {
	if !bytes.Contains(line, raw) && !bytes.Contains(line, []byte(`\u`)) {
		return line, false
	}
	rec, err := jsonl.DecodeRecord(bytes.TrimRight(line, "\n"))
	if err != nil {
		// Unreadable: kept, unless it holds the name.
		if bytes.Contains(line, raw) {
			return nil, true
		}
		return line, false
	}
	rec, changed := Purge(rec, entity)
	switch {
	case !changed:
		return line, false
	case len(rec.Changes) == 0:
		return nil, true
	}
	return graph.AppendRecord(nil, &rec), true
}
