package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Limits bound a history: records older than MaxAge go, and when the
// history passes MaxBytes the oldest go until it holds 90 % of it.
// MaxAge 0 keeps no history.
type Limits struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// Default is what a history keeps unless configured otherwise: 90 days
// or 50 MB, whichever comes first.
var Default = Limits{MaxAge: 90 * 24 * time.Hour, MaxBytes: 50 << 20}

// Off reports whether the limits keep no history at all.
func (l Limits) Off() bool { return l.MaxAge <= 0 || l.MaxBytes <= 0 }

// ageSlack is how much older than MaxAge the oldest record may grow before
// a trim: a tenth of MaxAge (at least an hour), so that a history trimmed
// by age is rewritten every few days, not on every write.
func (l Limits) ageSlack() time.Duration { return max(l.MaxAge/10, time.Hour) }

// Suffix is the history file's name after the memory file's.
const Suffix = ".history"

// AppendFile appends records to the history file at path (created with
// mode perm), and syncs it; see AppendLines.
func AppendFile(path string, records []Record, perm fs.FileMode) error {
	lines := make([][]byte, len(records))
	for i := range records {
		lines[i] = AppendLine(nil, &records[i])
	}
	return AppendLines(path, lines, perm)
}

// AppendLines appends record lines (each whole, with its id and final
// newline) to the history file at path (created with mode perm), and
// syncs it. Lines whose ids are already at the file's end are skipped: a
// move from the journal that a crash cut short is taken up again without
// writing a record twice. A torn last line (a writer killed mid-append)
// is cut off first. The caller holds the memory's lock: there is one
// appender at a time.
func AppendLines(path string, lines [][]byte, perm fs.FileMode) error {
	if len(lines) == 0 {
		return nil
	}
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	created := fi.Size() == 0
	// The records of an interrupted move are at most as long as the move.
	tailLen := min(fi.Size(), int64(size)+4096)
	tail := make([]byte, tailLen)
	if _, err := f.ReadAt(tail, fi.Size()-tailLen); err != nil && err != io.EOF {
		return err
	}
	end := fi.Size()
	if i := bytes.LastIndexByte(tail, '\n'); i+1 < len(tail) {
		// A torn line, or (tail without any newline) a torn first line.
		end = fi.Size() - tailLen + int64(i+1)
		if err := f.Truncate(end); err != nil {
			return err
		}
		tail = tail[:i+1]
	}
	present := map[string]bool{}
	for line := range bytes.Lines(tail) {
		if id := lineID(line); id != "" {
			present[id] = true
		}
	}
	buf := make([]byte, 0, size)
	for _, l := range lines {
		if !present[lineID(l)] {
			buf = append(buf, l...)
		}
	}
	if len(buf) == 0 {
		return nil
	}
	if _, err := f.WriteAt(buf, end); err != nil {
		f.Truncate(end)
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if created {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return f.Close()
}

// LastID returns the id of the last complete record of the history file
// at path, or "".
func LastID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	n := min(fi.Size(), 64<<10)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, fi.Size()-n); err != nil && err != io.EOF {
		return ""
	}
	last := ""
	for line := range bytes.Lines(tail) {
		if id := lineID(line); id != "" && line[len(line)-1] == '\n' {
			last = id
		}
	}
	return last
}

// ReadFile returns the records of the history file at path that f
// chooses, oldest first (with f.Limit, the newest f.Limit of them); a
// missing file has none. Lines that do not parse (a torn last line) are
// skipped and counted, of those read.
//
// It reads the file backwards from its end, in blocks, and stops as soon
// as no earlier line can be chosen: past f.Limit records, at the first
// record whose id (which sorts by time, and after the ids before it:
// NewID) is older than f.Since, or sorts before f.ID. A record's time is
// never after its id's, so a record older than f.Since by its id is by
// its time too, and so is every one before it. So a read of the last
// days costs what it returns, not the whole file.
func ReadFile(path string, f Filter) (records []Record, skipped int, err error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := backward{f: file, pos: fi.Size()}
	sinceMs := int64(math.MinInt64)
	if !f.Since.IsZero() {
		sinceMs = f.Since.UnixMilli()
	}
	first := true
	for {
		line, err := b.line()
		if err != nil {
			return nil, 0, err
		}
		if line == nil {
			break
		}
		if first && line[len(line)-1] != '\n' {
			// A torn last line.
			if len(bytes.TrimSpace(line)) > 0 {
				skipped++
			}
			first = false
			continue
		}
		first = false
		if id := lineID(line); len(id) == idLen {
			if f.ID != "" && len(f.ID) == idLen && id < f.ID {
				break
			}
			if ms, err := strconv.ParseInt(id[:12], 16, 64); err == nil && ms < sinceMs {
				break
			}
		}
		if f.DeletesEntity && !bytes.Contains(line, []byte(`deleteEntity`)) {
			// No entity deletion (AppendLine writes the op as it is):
			// no need to decode the line.
			continue
		}
		var rec Record
		var derr error
		match := f
		if f.headerOnly(len(line)) {
			rec, derr = decodeHeader(line)
			match.DeletesEntity = false // the line names the op: enough
		} else {
			rec, derr = Decode(line)
		}
		if derr != nil {
			skipped++
			continue
		}
		if match.Match(&rec) {
			if f.Headers {
				rec.Changes = nil
			}
			records = append(records, rec)
			if len(records) == f.Limit {
				break
			}
		}
	}
	slices.Reverse(records)
	return records, skipped, nil
}

// decodeHeader reads a record line but its changes: at once a line as
// AppendLine writes it, else by decoding its JSON.
func decodeHeader(line []byte) (Record, error) {
	if r, ok := quickHeader(line); ok {
		return r, nil
	}
	var h struct {
		ID     string `json:"id"`
		Time   string `json:"time"`
		Tool   string `json:"tool"`
		Client string `json:"client"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return Record{}, err
	}
	l := Line{ID: h.ID, Time: h.Time, Tool: h.Tool, Client: h.Client}
	return l.Record(line)
}

// quickHeader reads the header of a line as AppendLine writes it:
// {"id":"…","time":"…"[,"tool":"…"][,"client":"…"],"changes":…, with no
// escape in the tool and the client; ok is false for any other line.
func quickHeader(line []byte) (r Record, ok bool) {
	const idAt, timeAt = len(`{"id":"`), len(`{"id":"`) + idLen + len(`","time":"`)
	const timeLen = len("2006-01-02T15:04:05Z")
	if len(line) < timeAt+timeLen+1 || string(line[:idAt]) != `{"id":"` || string(line[idAt+idLen:timeAt]) != `","time":"` || line[timeAt+timeLen] != '"' {
		return Record{}, false
	}
	t, err := time.Parse(time.RFC3339, string(line[timeAt:timeAt+timeLen]))
	if err != nil {
		return Record{}, false
	}
	r = Record{ID: string(line[idAt : idAt+idLen]), Time: t.UTC()}
	rest := line[timeAt+timeLen+1:]
	member := func(name string, into *string) bool {
		prefix := `,"` + name + `":"`
		if !bytes.HasPrefix(rest, []byte(prefix)) {
			return true
		}
		rest = rest[len(prefix):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
			return false
		}
		*into, rest = string(rest[:end]), rest[end+1:]
		return true
	}
	if !member("tool", &r.Tool) || !member("client", &r.Client) || !bytes.HasPrefix(rest, []byte(`,"changes":`)) {
		return Record{}, false
	}
	return r, true
}

// idLen is the length of a record id: 12 hex digits of Unix milliseconds
// and 6 random ones.
const idLen = 18

// readBlock is how much backward reads at a time (more for a longer line).
const readBlock = 64 << 10

// backward reads a file's lines from its end.
type backward struct {
	f   *os.File
	pos int64  // buf holds the file from pos on, up to what line returned
	buf []byte // whose first line may begin before pos
}

// line returns the file's line before those it returned, with its
// newline (the file's last line may have none), or nil at the start of
// the file. The line is good until the next call.
func (b *backward) line() ([]byte, error) {
	for {
		if len(b.buf) > 0 {
			i := bytes.LastIndexByte(b.buf[:len(b.buf)-1], '\n')
			if i >= 0 || b.pos == 0 {
				line := b.buf[i+1:]
				b.buf = b.buf[:i+1]
				return line, nil
			}
		} else if b.pos == 0 {
			return nil, nil
		}
		n := min(b.pos, max(readBlock, int64(len(b.buf))))
		grown := make([]byte, int(n)+len(b.buf))
		if _, err := b.f.ReadAt(grown[:n], b.pos-n); err != nil {
			return nil, err
		}
		copy(grown[n:], b.buf)
		b.buf, b.pos = grown, b.pos-n
	}
}

// Newest sorts records newest first (by id, which sorts by time) and
// drops repeated ids: records read from the history file and from a
// journal not yet removed may be the same.
func Newest(records []Record) []Record {
	slices.SortStableFunc(records, func(a, b Record) int {
		if a.ID > b.ID {
			return -1
		}
		if a.ID < b.ID {
			return 1
		}
		return 0
	})
	return slices.CompactFunc(records, func(a, b Record) bool { return a.ID == b.ID })
}

// Trim bounds the history file at path by lim, as of now: with the limits
// Off it removes the file; when the oldest record is older than MaxAge (by
// a slack) or the file is bigger than MaxBytes, it rewrites the file
// without the records older than MaxAge and without the oldest ones past
// 90 % of MaxBytes. It reports whether it rewrote or removed the file. The
// caller holds the memory's lock.
func Trim(path string, lim Limits, now time.Time) (bool, error) {
	if lim.Off() {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	first, _ := r.ReadBytes('\n')
	oldest := lineTime(first)
	cutoff := now.Add(-lim.MaxAge)
	if fi.Size() <= lim.MaxBytes && (oldest.IsZero() || !oldest.Before(cutoff.Add(-lim.ageSlack()))) {
		return false, nil
	}
	target := lim.MaxBytes * 9 / 10
	remaining := fi.Size()
	line := first
	for len(line) > 0 {
		if remaining <= target && !lineTime(line).Before(cutoff) {
			break
		}
		remaining -= int64(len(line))
		line, _ = r.ReadBytes('\n')
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return false, err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	w.Write(line)
	_, err = io.Copy(w, r)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}
