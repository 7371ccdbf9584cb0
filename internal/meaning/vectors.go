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

// check refuses a vector no quantisation makes: of no length or more
// than maxDims, or a scale that is not a finite number from 0 (a zero
// vector's) to 1/127 (a unit vector's largest).
func (v vector) check() error {
	s := float64(v.scale)
	switch {
	case len(v.q) == 0 || len(v.q) > maxDims:
		return fmt.Errorf("a vector of %d dimensions, at most %d", len(v.q), maxDims)
	case math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > 1.0/127*1.0001:
		return fmt.Errorf("a vector scaled by %v", v.scale)
	}
	return nil
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
	end, _, err = readRecords(path, 0, func(k key, v vector) { vs[k] = v })
	return end, err
}

// recordHead is the length of a record before its values.
const recordHead = 16 + 2 + 4

// damage is where a vectors file stops holding records: a length of 0 or
// above maxDims cannot be a record's, so what follows (a sparse file's
// hole, bytes written over) cannot be framed either. The file is read up
// to it, and the next append cuts it off.
type damage struct {
	at   int64
	dims int
}

func (d *damage) Error() string {
	return fmt.Sprintf("a record of %d dimensions at byte %d (at most %d): the rest of the file is dropped and its vectors are computed again", d.dims, d.at, maxDims)
}

// readRecords calls add for each whole record of the vectors file at path
// from offset from (0: the start, whose magic it checks) and returns the
// offset of the last one's end. A missing file is empty. Reading stops at
// a record cut short (a crash mid-append) and at one that cannot be a
// record (returned as a *damage, with the offset before it); it holds one
// record at a time, so a huge file costs only the records it holds.
func readRecords(path string, from int64, add func(key, vector)) (end int64, bad *damage, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil, nil
	}
	if err != nil {
		return from, nil, err
	}
	defer f.Close()
	end = from
	if from > 0 {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return from, nil, err
		}
	}
	r := bufio.NewReader(f)
	if from == 0 {
		head := make([]byte, len(magic))
		if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
			return 0, nil, fmt.Errorf("%s is not a vectors file; move it away and its vectors are computed again", path)
		}
		end = int64(len(magic))
	}
	var hdr [recordHead]byte
	var buf []byte // one for all records: a vector's values are its own only
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return end, nil, nil
		}
		var k key
		copy(k[:], hdr[:16])
		dims := int(binary.LittleEndian.Uint16(hdr[16:]))
		if dims == 0 || dims > maxDims {
			return end, &damage{end, dims}, nil
		}
		buf = slices.Grow(buf[:0], dims)[:dims]
		if _, err := io.ReadFull(r, buf); err != nil {
			return end, nil, nil
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
