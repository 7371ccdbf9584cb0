package meaning

import (
	"context"
	"errors"
	"os"
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
// until Compact drops the others.
func FileStorage(path string) Storage { return &fileStorage{path: path} }

type fileStorage struct {
	path string
	end  int64       // bytes of whole records read or written
	file os.FileInfo // the file they are in; nil before the first
}

// Load reads the records after those read or written before, or the
// whole file again when it is another file (another server compacted it)
// or shorter (it was cut).
func (f *fileStorage) Load(context.Context, string) ([]Record, error) {
	fi, err := os.Stat(f.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		f.end, f.file = 0, nil
		return nil, nil
	case err != nil:
		return nil, err
	case f.file != nil && !os.SameFile(f.file, fi), fi.Size() < f.end:
		f.end = 0
	}
	var out []Record
	end, err := readRecords(f.path, f.end, func(k key, v vector) {
		if out == nil { // as many as records of this one's length fit: not grown append by append
			out = make([]Record, 0, max(1, (fi.Size()-f.end)/int64(16+2+4+len(v.q))))
		}
		out = append(out, record(k, v))
	})
	if err != nil {
		return nil, err
	}
	f.end, f.file = end, fi
	return out, nil
}

// wrote notes the file's length end after this Storage wrote it.
func (f *fileStorage) wrote(end int64) {
	f.end = end
	if fi, err := os.Stat(f.path); err == nil {
		f.file = fi
	}
}

func (f *fileStorage) Append(_ context.Context, _ string, batch []Record) error {
	var b []byte
	for _, r := range batch {
		b = appendRecord(b, r.Key, r.vector())
	}
	end, err := appendFile(f.path, f.end, b)
	if err != nil {
		return err
	}
	f.wrote(end)
	return nil
}

func (f *fileStorage) Compact(_ context.Context, _ string, keep []Record) error {
	end, err := rewrite(f.path, keep)
	if err != nil {
		return err
	}
	f.wrote(end)
	return nil
}

// Exclusive runs fn: one server writes a memory file's vectors.
func (f *fileStorage) Exclusive(_ context.Context, fn func() error) error { return fn() }
