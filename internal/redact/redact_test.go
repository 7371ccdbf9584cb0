package redact

import (
	"errors"
	"fmt"
	"testing"
)

func TestPaths(t *testing.T) {
	r := Paths("/srv//secret/deeper/memory.jsonl")
	for in, want := range map[string]string{
		"saving /srv/secret/deeper/memory.jsonl: no space left on device":                                "saving memory.jsonl: no space left on device",
		"saving /srv//secret/deeper/memory.jsonl: no space left on device":                               "saving memory.jsonl: no space left on device",
		"rename /srv/secret/deeper/memory.jsonl.0123.tmp /srv/secret/deeper/memory.jsonl: EIO":           "rename memory.jsonl.0123.tmp memory.jsonl: EIO",
		"mkdir /srv/secret/deeper: permission denied":                                                    "mkdir the memory file's directory: permission denied",
		"mkdir /srv/secret: operation not permitted":                                                     "mkdir a directory above the memory file: operation not permitted",
		"Timed out after 60000 ms waiting for the memory file lock /srv/secret/deeper/memory.jsonl.lock": "Timed out after 60000 ms waiting for the memory file lock memory.jsonl.lock",
	} {
		if got := r.Message(in); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Rules{}).Message("saving /srv/memory.jsonl"); got != "saving /srv/memory.jsonl" {
		t.Errorf("the zero Rules changed a path: %q", got)
	}
}

// dbFailure stands for a database driver's error, which names the server.
type dbFailure struct{ err error }

func (e dbFailure) Error() string    { return e.err.Error() }
func (e dbFailure) Unwrap() error    { return e.err }
func (e dbFailure) Redacted() string { return "the database failed" }

func TestDatabaseErrors(t *testing.T) {
	inner := dbFailure{errors.New("failed to connect to `user=memory database=team`: 10.1.2.3:5432 (db.internal): dial error: connection refused")}
	err := fmt.Errorf("writing memory %q in PostgreSQL: %w; nothing was written", "team", inner)
	want := `writing memory "team" in PostgreSQL: the database failed; nothing was written`
	for _, r := range []Rules{{}, Paths("/srv/memory.jsonl")} {
		if got := r.Error(err); got != want {
			t.Errorf("Error = %q, want %q", got, want)
		}
	}
	joined := errors.Join(errors.New("reading /srv/x/memory.jsonl"), inner)
	if got, want := Paths("/srv/x/memory.jsonl").Error(joined), "reading memory.jsonl\nthe database failed"; got != want {
		t.Errorf("Error(joined) = %q, want %q", got, want)
	}
	if got := (Rules{}).Error(nil); got != "" {
		t.Errorf("Error(nil) = %q", got)
	}
}
