package meaning

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
)

// Storage keeps an Index's vectors across restarts: the vectors file
// beside a memory file (FileStorage), or a table in PostgreSQL shared by
// the replicas of a memory (pgstore). Only the Index's background
// goroutine calls it, one call at a time.
type Storage interface {
	// Load returns the vectors kept for model that this Storage has not
	// returned or appended before: all of them at the first call, then
	// those another server added since.
	Load(ctx context.Context, model string) ([]Record, error)
	// Append keeps a batch of new vectors of model. The Index calls it
	// within Exclusive, after Load.
	Append(ctx context.Context, model string, batch []Record) error
	// Compact drops every vector kept that is of another model or not in
	// keep, among those Load returned, and keeps those of keep. The Index
	// calls it within Exclusive, after Load.
	Compact(ctx context.Context, model string, keep []Record) error
	// Exclusive runs fn while no other Index on the same vectors runs fn
	// of its own, so that two replicas never embed the same text: each
	// loads what the other added first.
	Exclusive(ctx context.Context, fn func() error) error
}

// Key names a vector: the first 16 bytes of SHA-256 of the model's name,
// a zero byte and the text (KeyOf).
type Key [16]byte

// KeyOf is the key of text's vector by model.
func KeyOf(model, text string) Key { return keyOf(model, text) }

// A Record is one kept vector: the text's key, and the embedding
// normalised to length 1 and quantised to int8, the i-th value being
// Values[i]*Scale.
type Record struct {
	Key    Key
	Scale  float32
	Values []int8
}

func (r Record) vector() vector { return vector{scale: r.Scale, q: r.Values} }

func record(k key, v vector) Record { return Record{Key: k, Scale: v.scale, Values: v.q} }

// FileStorage is the vectors file at path (VectorsPath), created at the
// first Append. It holds the vectors of any model (Load returns them all)
// until Compact drops the others. Appends are synced and cut back on
// failure, a compaction replaces the file atomically, and the file takes
// the memory file's mode (internal/durable).
func FileStorage(path string) Storage { return &fileStorage{path: path} }

type fileStorage struct {
	path   string
	end    int64       // bytes of whole records read or written
	file   os.FileInfo // the file they are in; nil before the first
	damage int64       // where the last damage reported is, so that it is reported once
}

// mode is the memory file's mode, which the vectors file beside it takes.
func (f *fileStorage) mode() fs.FileMode {
	return durable.Mode(strings.TrimSuffix(f.path, ".vectors"))
}

// diskReserve is the free space the vectors file never takes: on a disk
// nearly full the memory's writes keep it, and the vectors stay in memory
// only (computed again after a restart).
const diskReserve = 16 << 20

// firstRecords is how many records Load makes room for at first: the
// file's size only says how many it may hold (a sparse file says a lot).
const firstRecords = 1 << 12

// Load reads the records after those read or written before, or the
// whole file again when it is another file (another server compacted it)
// or shorter (it was cut). A file damaged past its last whole record
// loads up to there, with an error that says so (Damaged).
func (f *fileStorage) Load(context.Context, string) ([]Record, error) {
	fi, err := os.Stat(f.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.end, f.file = 0, nil
		return nil, nil
	case err != nil:
		return nil, err
	case f.file != nil && !os.SameFile(f.file, fi), fi.Size() < f.end:
		f.end, f.damage = 0, 0
	}
	var out []Record
	end, bad, err := readRecords(f.path, f.end, func(k key, v vector) {
		if out == nil {
			out = make([]Record, 0, min(firstRecords, max(1, (fi.Size()-f.end)/int64(recordHead+len(v.q)))))
		}
		out = append(out, record(k, v))
	})
	if err != nil {
		return nil, err
	}
	f.end, f.file = end, fi
	if bad != nil && bad.at != f.damage {
		f.damage = bad.at
		return out, &Damaged{What: f.path, Err: bad}
	}
	return out, nil
}

// Damaged is a Storage's Load that returned what it could read, and
// could not read the rest.
type Damaged struct {
	What string
	Err  error
}

func (d *Damaged) Error() string { return d.What + ": " + d.Err.Error() }
func (d *Damaged) Unwrap() error { return d.Err }

func (f *fileStorage) Append(_ context.Context, _ string, batch []Record) error {
	var b []byte
	if f.end == 0 {
		b = []byte(magic)
	}
	for _, r := range batch {
		b = appendRecord(b, r.Key, r.vector())
	}
	if err := roomFor(f.path, int64(len(b))); err != nil {
		return err
	}
	fi, err := durable.AppendAt(f.path, f.end, b, f.mode())
	if err != nil {
		return err
	}
	f.end, f.file = f.end+int64(len(b)), fi
	return nil
}

func (f *fileStorage) Compact(_ context.Context, _ string, keep []Record) error {
	b := []byte(magic)
	for _, r := range keep {
		b = appendRecord(b, r.Key, r.vector())
	}
	fi, err := durable.WriteFile(f.path, f.mode(), func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	f.end, f.file, f.damage = int64(len(b)), fi, 0
	return nil
}

// Exclusive runs fn: one server writes a memory file's vectors.
func (f *fileStorage) Exclusive(_ context.Context, fn func() error) error { return fn() }
