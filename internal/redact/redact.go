// Package redact keeps out of the error messages a remote client is sent
// what it must not learn about the server: the directories its memory
// files live in, and where its database is (user, host, port). Messages
// such as "saving /var/lib/mcp-memory/memory.jsonl: no space left on
// device" or "failed to connect to `user=memory database=memory`:
// 10.0.0.5:5432" are useful to the person running the server, whose log
// keeps them whole; a client over HTTP reads "saving memory.jsonl: no space
// left on device" and "the database failed".
//
// What to hide is given explicitly by whoever wires the server (Rules),
// never guessed from the store, so that a store wrapped for sharing hides
// as much as a bare one.
package redact

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// Rules say what a message to a remote client leaves out. The zero Rules
// hides no path, and still hides where the database is.
type Rules struct {
	files []string // the memory files, as given and in clean form, longest first
	dirs  []string // their directories and the directories above them, longest first
}

// Paths returns Rules that hide the paths of the memory files given and of
// every directory above them: a file becomes its base name ("memory.jsonl"),
// a path under one of the directories loses that directory (the lock file
// becomes "memory.jsonl.lock"), and a directory alone becomes "the memory
// file's directory" or "a directory above the memory file". A file may be
// given by several spellings (the path as configured, the file a link
// points to): give them all.
func Paths(files ...string) Rules {
	var r Rules
	for _, path := range files {
		for _, f := range []string{path, filepath.Clean(path)} {
			if f == "" || f == "." || slices.Contains(r.files, f) {
				continue
			}
			r.files = append(r.files, f)
			for d := filepath.Dir(f); d != filepath.Dir(d); d = filepath.Dir(d) {
				if !slices.Contains(r.dirs, d) {
					r.dirs = append(r.dirs, d)
				}
			}
		}
	}
	byLength := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(r.files, byLength)
	slices.SortStableFunc(r.dirs, byLength)
	return r
}

// Message takes the paths of the Rules out of msg.
func (r Rules) Message(msg string) string {
	for _, f := range r.files {
		msg = strings.ReplaceAll(msg, f, filepath.Base(f))
	}
	for _, d := range r.dirs {
		name := "a directory above the memory file"
		if slices.ContainsFunc(r.files, func(f string) bool { return filepath.Dir(f) == d }) {
			name = "the memory file's directory"
		}
		msg = strings.ReplaceAll(msg, d+string(filepath.Separator), "")
		msg = strings.ReplaceAll(msg, d, name)
	}
	return msg
}

// Error returns err's message for a remote client: the text of a database
// failure in it (an error with a Redacted method, as the PostgreSQL
// store's failures have) replaced by what that method says, and the paths
// of the Rules taken out.
func (r Rules) Error(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, e := range chain(err) {
		if d, ok := e.(interface{ Redacted() string }); ok {
			if detail := e.Error(); detail != "" {
				msg = strings.ReplaceAll(msg, detail, d.Redacted())
			}
		}
	}
	return r.Message(msg)
}

// chain lists err and every error it wraps, outermost first.
func chain(err error) []error {
	var all []error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		all = append(all, e)
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		default:
			walk(errors.Unwrap(e))
		}
	}
	walk(err)
	return all
}
