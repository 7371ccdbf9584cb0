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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/durable"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
	"github.com/kgmemory/mcp-server-memory/internal/jsonl"
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
func AppendFile(path string, records []graph.Record, perm fs.FileMode) error {
	lines := make([][]byte, len(records))
	for i := range records {
		lines[i] = graph.AppendRecord(nil, &records[i])
	}
	return AppendLines(path, lines, perm)
}

// AppendLines appends record lines (each whole, with its id and final
// newline) to the history file at path, and syncs it (durable.AppendAt).
// Lines whose ids are already at the file's end are skipped: a move from
// the journal that a crash cut short is taken up again without writing a
// record twice. A line that is no record (a garbled journal line) is
// never written. A torn last line (a writer killed mid-append) is cut off
// first. The file takes mode perm, the memory file's current mode, each
// time it is written (and each time it is given no lines). The caller
// holds the memory's lock: there is one appender at a time.
func AppendLines(path string, lines [][]byte, perm fs.FileMode) error {
	lines = slices.DeleteFunc(slices.Clone(lines), func(l []byte) bool { return !isRecordLine(l) })
	if len(lines) == 0 {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != perm {
			return os.Chmod(path, perm)
		}
		return nil
	}
	end, err := durable.CompleteLines(path)
	if err != nil {
		return err
	}
	present, err := tailIDs(path, end, lines)
	if err != nil {
		return err
	}
	var buf []byte
	for _, l := range lines {
		if !present[jsonl.RecordID(l)] {
			buf = append(buf, l...)
		}
	}
	if len(buf) == 0 {
		buf = nil // only the mode and the torn tail
	}
	_, err = durable.AppendAt(path, end, buf, perm)
	return err
}

// tailIDs returns the ids of the records at the end of the first end
// bytes of the file at path that an interrupted move of lines can have
// written: those within the move's length of the end.
func tailIDs(path string, end int64, lines [][]byte) (map[string]bool, error) {
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	present := map[string]bool{}
	if end == 0 {
		return present, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tailLen := min(end, int64(size)+4096)
	tail := make([]byte, tailLen)
	if _, err := f.ReadAt(tail, end-tailLen); err != nil && err != io.EOF {
		return nil, err
	}
	for line := range bytes.Lines(tail) {
		if id := jsonl.RecordID(line); id != "" {
			present[id] = true
		}
	}
	return present, nil
}

// isRecordLine reports whether line is a whole record line: JSON, ending
// in a newline, with an id and a time that read.
func isRecordLine(line []byte) bool {
	if len(line) == 0 || line[len(line)-1] != '\n' || jsonl.RecordID(line) == "" || !json.Valid(line) {
		return false
	}
	_, err := decodeHeader(line)
	return err == nil
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
		if id := jsonl.RecordID(line); id != "" && line[len(line)-1] == '\n' {
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
func ReadFile(path string, f Filter) (records []graph.Record, skipped int, err error) {
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
	for first := true; ; first = false {
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
			continue
		}
		if stopsRead(line, f, sinceMs) {
			break
		}
		rec, chosen, bad := choose(line, f)
		if bad {
			skipped++
		}
		if chosen {
			records = append(records, rec)
			if len(records) == f.Limit {
				break
			}
		}
	}
	slices.Reverse(records)
	return records, skipped, nil
}

// choose reads line as far as f needs and reports whether f chooses it,
// or that it does not parse (bad).
func choose(line []byte, f Filter) (rec graph.Record, chosen, bad bool) {
	if f.DeletesEntity && !bytes.Contains(line, []byte(`deleteEntity`)) {
		// No entity deletion (graph.AppendRecord writes the op as it is): no
		// need to decode the line.
		return graph.Record{}, false, false
	}
	var err error
	match := f
	if f.headerOnly(len(line)) {
		rec, err = decodeHeader(line)
		match.DeletesEntity = false // the line names the op: enough
	} else {
		rec, err = jsonl.DecodeRecord(line)
	}
	if err != nil {
		return graph.Record{}, false, true
	}
	if !match.Match(&rec) {
		return graph.Record{}, false, false
	}
	if f.Headers {
		rec.Changes = nil
	}
	return rec, true, false
}

// stopsRead reports whether line, read backwards, is where a read for f
// stops: its id sorts before f.ID, or is older than f.Since (sinceMs), and
// the id is plausible for the line's time (a forged id stops nothing).
func stopsRead(line []byte, f Filter, sinceMs int64) bool {
	id := jsonl.RecordID(line)
	if len(id) != graph.IDLen {
		return false
	}
	before := f.ID != "" && len(f.ID) == graph.IDLen && id < f.ID
	if ms, err := strconv.ParseInt(id[:12], 16, 64); err == nil && ms < sinceMs {
		before = true
	}
	if !before {
		return false
	}
	h, err := decodeHeader(line)
	return err == nil && graph.PlausibleID(h.ID, h.Time)
}

// decodeHeader reads a record line but its changes: at once a line as
// graph.AppendRecord writes it, else by decoding its JSON.
func decodeHeader(line []byte) (graph.Record, error) {
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
		return graph.Record{}, err
	}
	l := jsonl.RecordLine{ID: h.ID, Time: h.Time, Tool: h.Tool, Client: h.Client}
	return l.Record(line)
}

// quickHeader reads the header of a line as graph.AppendRecord writes it:
// {"id":"…","time":"…"[,"tool":"…"][,"client":"…"],"changes":…, with no
// escape in the tool and the client; ok is false for any other line.
func quickHeader(line []byte) (r graph.Record, ok bool) {
	const idAt, timeAt = len(`{"id":"`), len(`{"id":"`) + graph.IDLen + len(`","time":"`)
	const timeLen = len("2006-01-02T15:04:05Z")
	if len(line) < timeAt+timeLen+1 || string(line[:idAt]) != `{"id":"` || string(line[idAt+graph.IDLen:timeAt]) != `","time":"` || line[timeAt+timeLen] != '"' {
		return graph.Record{}, false
	}
	t, err := time.Parse(time.RFC3339, string(line[timeAt:timeAt+timeLen]))
	if err != nil {
		return graph.Record{}, false
	}
	r = graph.Record{ID: string(line[idAt : idAt+graph.IDLen]), Time: t.UTC()}
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
		return graph.Record{}, false
	}
	return r, true
}

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

// Newest sorts records newest first (by id, which sorts by time; a forged
// id, far from its record's time, by that time) and drops repeated ids:
// records read from the history file and from a journal not yet removed
// may be the same.
func Newest(records []graph.Record) []graph.Record {
	slices.SortStableFunc(records, func(a, b graph.Record) int {
		if c := strings.Compare(b.SortKey(), a.SortKey()); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return slices.CompactFunc(records, func(a, b graph.Record) bool { return a.ID == b.ID })
}

// OverBoundError says that a history is bigger than its bound after a
// trim, because its newest record alone is: the trim keeps the newest
// record whatever its size, so that the write it records (a mass
// deletion) can still be undone. The history is kept; this is for the log.
type OverBoundError struct {
	Size, Bound int64
}

func (e *OverBoundError) Error() string {
	return fmt.Sprintf("the history holds %s, over its bound of %s (MEMORY_HISTORY_MAX_MB), because its newest record alone is that big: it is kept, so that write can be undone, until a newer record replaces it",
		megabytes(e.Size), megabytes(e.Bound))
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// Trim bounds the history file at path by lim, as of now: with the limits
// Off it removes the file; when the oldest record is older than MaxAge (by
// a slack) or the file is bigger than MaxBytes, it rewrites the file
// (durable.WriteFile) without the records older than MaxAge and without
// the oldest ones past 90 % of MaxBytes, oldest first, never the newest
// record for its size: a history whose newest record alone is past
// MaxBytes keeps it, and Trim then returns an *OverBoundError with the
// trim done. It reports whether it rewrote or removed the file. The caller
// holds the memory's lock.
func Trim(path string, lim Limits, now time.Time) (bool, error) {
	if lim.Off() {
		err := os.Remove(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	removeOldTemps(path)
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
	line, remaining, err := dropOldest(r, first, fi.Size(), lim.MaxBytes*9/10, cutoff)
	if err != nil {
		return false, err
	}
	var over error
	if remaining > lim.MaxBytes {
		over = &OverBoundError{Size: remaining, Bound: lim.MaxBytes}
	}
	if remaining == fi.Size() {
		return false, over
	}
	_, err = durable.WriteFile(path, fi.Mode().Perm(), func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.Write(line)
		if _, err := io.Copy(bw, r); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return false, err
	}
	return true, over
}

// dropOldest reads r, the history after its first line, up to the first
// line to keep: one not older than cutoff with the lines from it on
// holding at most target bytes, or else the newest line when it is not
// older than cutoff. It returns that line (nil: none is kept) and the size
// of what is kept.
func dropOldest(r *bufio.Reader, first []byte, size, target int64, cutoff time.Time) (line []byte, remaining int64, err error) {
	line, remaining = first, size
	for len(line) > 0 {
		fresh := !lineTime(line).Before(cutoff)
		if remaining <= target && fresh {
			break
		}
		next, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if len(next) == 0 && fresh {
			break // the newest record, whatever its size
		}
		remaining -= int64(len(line))
		line = next
	}
	return line, remaining, nil
}

// oldTemp is the name of the temporary files the trim of earlier versions
// wrote (<history>.<pid>.tmp), which a killed trim left behind.
var oldTemp = regexp.MustCompile(`^\.[0-9]+\.tmp$`)

// removeOldTemps removes the temporary files of the history at path that
// a trim of an earlier version, killed, left more than
// durable.StaleTempAge ago. (durable removes its own.)
func removeOldTemps(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base)
		if !ok || !oldTemp.MatchString(rest) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > durable.StaleTempAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
