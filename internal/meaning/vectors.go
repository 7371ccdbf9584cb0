package meaning

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// key is a Key: a text keeps its vector for as long as it and the model
// are unchanged, and a new model misses every key.
type key = Key

func keyOf(model, text string) key {
	b := append([]byte(model), 0)
	return keyOfBytes(append(b, text...))
}

// keyOfBytes is the key of b, the model's name, a zero byte and the text.
func keyOfBytes(b []byte) key {
	sum := sha256.Sum256(b)
	return key(sum[:16])
}

// maxDims bounds the length of a vector (the file writes it in 16 bits).
const maxDims = 1 << 14

// vector is an embedding quantised to int8: the i-th value is
// q[i]*scale. Cosine similarity needs only the direction, so vectors are
// normalised to length 1 first and scale is max|x|/127.
type vector struct {
	scale float32
	q     []int8
}

func quantise(v []float32) vector {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		return vector{q: make([]int8, len(v))}
	}
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(float64(x)/norm))
	}
	out := vector{scale: float32(peak / 127), q: make([]int8, len(v))}
	for i, x := range v {
		out.q[i] = int8(math.Round(float64(x) / norm / peak * 127))
	}
	return out
}

// cosine is the similarity of two quantised unit vectors; 0 when their
// lengths differ (vectors of another model).
func cosine(a, b vector) float32 {
	if len(a.q) != len(b.q) {
		return 0
	}
	var dot int32
	for i, x := range a.q {
		dot += int32(x) * int32(b.q[i])
	}
	return float32(dot) * a.scale * b.scale
}

// The vectors file (docs/embeddings.md) is magic, then records appended
// one batch at a time:
//
//	key    16 bytes
//	dims   uint16, little-endian
//	scale  float32, little-endian
//	values dims int8
//
// A record cut short (a crash mid-append) ends the file: it is dropped
// at the next load, and cut off before the next append.
const magic = "MSMVEC1\n"

// VectorsPath is the vectors file beside the memory file at memoryFile.
func VectorsPath(memoryFile string) string { return memoryFile + ".vectors" }

// load reads the vectors file at path into vs and returns the offset of
// its last whole record's end. A missing file is empty.
func load(path string, vs map[key]vector) (end int64, err error) {
	return readRecords(path, 0, func(k key, v vector) { vs[k] = v })
}

// readRecords calls add for each whole record of the vectors file at path
// from offset from (0: the start, whose magic it checks) and returns the
// offset of the last one's end. A missing file is empty.
func readRecords(path string, from int64, add func(key, vector)) (end int64, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer f.Close()
	end = from
	if from > 0 {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return from, err
		}
	}
	r := bufio.NewReader(f)
	if from == 0 {
		head := make([]byte, len(magic))
		if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
			return 0, fmt.Errorf("%s is not a vectors file; move it away and its vectors are computed again", path)
		}
		end = int64(len(magic))
	}
	var hdr [16 + 2 + 4]byte
	var buf []byte // one for all records: a vector's values are its own only
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return end, nil
		}
		var k key
		copy(k[:], hdr[:16])
		dims := int(binary.LittleEndian.Uint16(hdr[16:]))
		buf = slices.Grow(buf[:0], dims)[:dims]
		if _, err := io.ReadFull(r, buf); err != nil {
			return end, nil
		}
		v := vector{scale: math.Float32frombits(binary.LittleEndian.Uint32(hdr[18:])), q: make([]int8, dims)}
		for i, b := range buf {
			v.q[i] = int8(b)
		}
		add(k, v)
		end += int64(len(hdr) + dims)
	}
}

// appendRecord encodes one record onto b.
func appendRecord(b []byte, k key, v vector) []byte {
	b = append(b, k[:]...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v.q)))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v.scale))
	for _, x := range v.q {
		b = append(b, byte(x))
	}
	return b
}

// appendFile appends records to the file at path, which holds end bytes
// of whole records (a fresh file gets the magic first), in one write.
func appendFile(path string, end int64, records []byte) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return end, err
	}
	defer f.Close()
	if end == 0 {
		records = append([]byte(magic), records...)
	}
	if err := f.Truncate(end); err != nil {
		return end, err
	}
	if _, err := f.WriteAt(records, end); err != nil {
		return end, err
	}
	return end + int64(len(records)), f.Close()
}

// rewrite replaces the file at path with the vectors keep, through a
// temporary file renamed over it, and returns its length.
func rewrite(path string, keep []Record) (int64, error) {
	b := []byte(magic)
	for _, r := range keep {
		b = appendRecord(b, r.Key, r.vector())
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return int64(len(b)), os.Rename(tmp.Name(), path)
}
