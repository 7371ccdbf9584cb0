// Package access decides which memories a bearer token may read or write
// on an HTTP server (docs/design.md §11): the grants of a tokens file, for
// named memories, or those of a server of one memory, its one token's
// (Single) or, without a token, everyone's (Everyone). A Source hands
// them to the server, read again or not.
//
// A tokens file grants access, one grant a line:
//
//	# token          memories        access   label (optional)
//	3f9a…            team,notes      write    Alice's laptop
//	77c1…            *               read
//
// Memories are named as in the URL /mcp/NAME ("default" is the memory at
// /mcp); "*" is every memory. A token on several lines gets the union of
// its grants. The label, the rest of the line, names the token's holder
// in the history of writes (the client a write is recorded as made by);
// a token on several lines takes its first label. A label holding a
// bidirectional control or a zero-width character, which would make it
// show as another, is refused. Blank lines and lines
// starting with # are ignored.
//
// No error quotes a field of the file: a token pasted into the wrong
// column would reach the log. A file the server's group or other users
// may read is used with a warning. Read again on SIGHUP, a file that does
// not parse, or grants no token at all, leaves the grants in force.
//
// Tokens are compared in constant time (their SHA-256 digests, so a
// token's length leaks nothing either), and a token is never kept in the
// clear after parsing.
package access

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
)

// Level is what a token may do with a memory.
type Level int

const (
	None  Level = iota // the token does not reach the memory
	Read               // read tools and the resource only
	Write              // every tool
)

func (l Level) String() string {
	switch l {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "none"
}

// DefaultMemory names the memory served at /mcp, and the memory in the
// database when --memory is not given (internal/memoryconfig).
const DefaultMemory = "default"

// MinTokenLength is the shortest token a tokens file may grant: shorter
// ones can be guessed.
const MinTokenLength = 16

type grant struct {
	digest   [32]byte
	cookie   [32]byte         // the digest of CookieValue(token)
	pageKey  [32]byte         // the digest of PageKey(token)
	all      Level            // level for every memory ("*")
	memories map[string]Level // level per named memory
	label    string           // the holder's name in the history, or ""
}

// Grants is a parsed tokens file, or the grants of a server of one
// memory. The zero value grants nothing.
type Grants struct {
	grants []grant
	// only is the memory of a server of one memory (Single, Everyone), ""
	// for a tokens file, whose lines name the memories.
	only string
	// everyone: anyone may write only, with a token or without (Everyone).
	everyone bool
}

// Source is where a server's grants come from: fixed grants (*Grants), or
// a tokens file that can be read again (*File).
type Source interface {
	// Grants returns the grants in force.
	Grants() *Grants
	// Reload reads the grants again. On error the grants in force stay as
	// they were.
	Reload() error
}

// invisibleRune returns the first character of s that changes how text
// around it shows without showing itself: a bidirectional embedding,
// override or isolate (U+202A–U+202E, U+2066–U+2069), a zero-width
// character or directional mark (U+200B–U+200F), or U+FEFF.
func invisibleRune(s string) (rune, bool) {
	for _, r := range s {
		switch {
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069,
			r >= 0x200B && r <= 0x200F, r == 0xFEFF:
			return r, true
		}
	}
	return 0, false
}

// Parse reads a tokens file. Errors name the line and what is wrong with
// it; no error quotes a token.
func Parse(r io.Reader) (*Grants, error) {
	byDigest := map[[32]byte]int{}
	g := &Grants{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: want three fields, token, memories and read or write (and optionally a label); got %d", n, len(f))
		}
		token, names, level := f[0], f[1], f[2]
		if len(token) < MinTokenLength {
			return nil, fmt.Errorf("line %d: the token is %d characters long; use at least %d (e.g. openssl rand -hex 32)", n, len(token), MinTokenLength)
		}
		// No message quotes a field: a token pasted into the wrong column
		// would reach the log.
		var lv Level
		switch level {
		case "read":
			lv = Read
		case "write":
			lv = Write
		default:
			return nil, fmt.Errorf("line %d: the access field is neither read nor write (not shown: it may be a token in the wrong column)", n)
		}
		d := sha256.Sum256([]byte(token))
		i, seen := byDigest[d]
		if !seen {
			i = len(g.grants)
			byDigest[d] = i
			g.grants = append(g.grants, newGrant(token))
		}
		label := strings.Join(f[3:], " ")
		if r, ok := invisibleRune(label); ok {
			return nil, fmt.Errorf("line %d: the label holds U+%04X, a bidirectional control or zero-width character, which would make it show as something it is not in the history; remove it", n, r)
		}
		gr := &g.grants[i]
		if gr.label == "" {
			gr.label = label
		}
		for i, name := range strings.Split(names, ",") {
			if name == "*" {
				gr.all = max(gr.all, lv)
				continue
			}
			if problem := nameProblem(name); problem != "" {
				return nil, fmt.Errorf("line %d: memory name %d of the memories field%s (not shown: it may be a token in the wrong column)", n, i+1, problem)
			}
			gr.memories[name] = max(gr.memories[name], lv)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return g, nil
}

func newGrant(token string) grant {
	return grant{
		digest:   sha256.Sum256([]byte(token)),
		cookie:   sha256.Sum256([]byte(CookieValue(token))),
		pageKey:  sha256.Sum256([]byte(PageKey(token))),
		memories: map[string]Level{},
	}
}

// Single grants one token write access to one memory: the --http server of
// a single memory, whose one token reaches it. The token is not checked
// for length (the HTTP server does that).
func Single(token, memory string) *Grants {
	gr := newGrant(token)
	gr.memories[memory] = Write
	return &Grants{grants: []grant{gr}, only: memory}
}

// Everyone grants everyone write access to one memory, with any token or
// none: the --http server of a single memory on a loopback address
// without a token, where whoever passed the Host and Origin checks may
// read and change it.
func Everyone(memory string) *Grants {
	return &Grants{only: memory, everyone: true}
}

// Only returns the one memory of the grants of a server of one memory
// (Single, Everyone), or "" for a tokens file's, whose memories are named
// by the URL.
func (g *Grants) Only() string { return g.only }

// Open reports whether the grants need no credential: everyone may write
// Only() (Everyone).
func (g *Grants) Open() bool { return g.everyone }

// Grants returns g: fixed grants are their own Source.
func (g *Grants) Grants() *Grants { return g }

// Reload refuses: fixed grants are read from no file.
func (g *Grants) Reload() error { return errors.New("no tokens file to read again") }

// Check tells what token may do with memory. Every grant is compared, so
// the time taken does not tell which token nearly matched. A name that
// ValidName refuses is reached by no token, "*" grants included, so a
// caller that forgot to validate a name from a URL still opens nothing.
func (g *Grants) Check(token, memory string) Level {
	return g.check(sha256.Sum256([]byte(token)), func(gr *grant) *[32]byte { return &gr.digest }, memory)
}

// CheckCookie tells what the holder of a cookie whose value is
// CookieValue(token) may do with memory: what token may.
func (g *Grants) CheckCookie(value, memory string) Level {
	return g.check(sha256.Sum256([]byte(value)), func(gr *grant) *[32]byte { return &gr.cookie }, memory)
}

// CheckPageKey tells what the holder of a page's key, PageKey(token), may
// do with memory: what token may.
func (g *Grants) CheckPageKey(key, memory string) Level {
	return g.check(sha256.Sum256([]byte(key)), func(gr *grant) *[32]byte { return &gr.pageKey }, memory)
}

func (g *Grants) check(d [32]byte, of func(*grant) *[32]byte, memory string) Level {
	if g == nil || ValidName(memory) != nil {
		return None
	}
	if g.everyone && memory == g.only {
		return Write
	}
	level := None
	for i := range g.grants {
		gr := &g.grants[i]
		if subtle.ConstantTimeCompare(d[:], of(gr)[:]) == 1 {
			level = max(gr.all, gr.memories[memory])
		}
	}
	return level
}

// Label returns the label the grants give token, or "". Every grant is
// compared, as Check does.
func (g *Grants) Label(token string) string {
	return g.label(sha256.Sum256([]byte(token)), func(gr *grant) *[32]byte { return &gr.digest })
}

// PageKeyLabel returns the label the grants give the token whose page's
// key is key (PageKey(token)), or "".
func (g *Grants) PageKeyLabel(key string) string {
	return g.label(sha256.Sum256([]byte(key)), func(gr *grant) *[32]byte { return &gr.pageKey })
}

func (g *Grants) label(d [32]byte, of func(*grant) *[32]byte) string {
	if g == nil {
		return ""
	}
	label := ""
	for i := range g.grants {
		if subtle.ConstantTimeCompare(d[:], of(&g.grants[i])[:]) == 1 {
			label = g.grants[i].label
		}
	}
	return label
}

// CookieValue is what a web page's cookie holds for token (the page of a
// named memory, docs/design.md §9): a digest, so the cookie never holds the
// token, and not the token's own SHA-256, which Check compares, so
// the cookie stands for the token on the pages only, not as a bearer token.
func CookieValue(token string) string {
	sum := sha256.Sum256([]byte("mcp-server-memory page\x00" + token))
	return hex.EncodeToString(sum[:])
}

// PageKey is the key of a web page opened with token: what the page's own
// script sends with every request (X-Memory-Page-Key), besides the
// cookie, for the page's API to read or change the memory. A browser sends
// a site's cookies to every port of its host, so the cookie may reach
// another service on the same machine; the key never travels in a cookie. The server gives it
// once, to the first visit that carried the token itself, in the address's
// fragment (which no server is sent) and the page keeps it in its origin's
// storage, which no other port's script can read. It is a digest that
// neither the cookie nor the key can be turned back into the token from.
func PageKey(token string) string {
	sum := sha256.Sum256([]byte("mcp-server-memory page edit key\x00" + token))
	return hex.EncodeToString(sum[:])
}

// Len reports how many distinct tokens the file grants.
func (g *Grants) Len() int { return len(g.grants) }

// reserved names cannot be files on Windows, whatever their extension.
var reserved = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true, "CLOCK$": true}

func init() {
	for _, p := range []string{"COM", "LPT"} {
		for i := '1'; i <= '9'; i++ {
			reserved[p+string(i)] = true
		}
	}
}

// ValidName reports whether name may name a memory: 1 to 64 lowercase
// ASCII letters, digits, '-', '_' and '.', starting with a letter or digit
// and not ending with '.', not a name Windows reserves. Such a name is safe
// as a URL segment and a file name: no '/', no "..", no NUL. One spelling
// per memory: on a file system that ignores case (macOS, Windows) "Team"
// and "team" would be one file, and a token granted one would reach the
// other; Windows also drops a trailing dot.
func ValidName(name string) error {
	if problem := nameProblem(name); problem != "" {
		return fmt.Errorf("memory name %q%s", name, problem)
	}
	return nil
}

// nameProblem says what keeps name from naming a memory, to follow the
// words "memory name X", or returns "".
func nameProblem(name string) string {
	if name == "" || len(name) > 64 {
		return ": use 1 to 64 lowercase letters, digits, '-', '_' or '.'"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_' && c != '.') {
			return ": use lowercase letters, digits, '-', '_' or '.', starting with a letter or digit"
		}
	}
	if strings.HasSuffix(name, ".") {
		return " ends with '.'; Windows drops it, so it would name another memory's file"
	}
	base, _, _ := strings.Cut(strings.ToUpper(name), ".")
	if reserved[base] {
		return " is reserved on Windows; choose another"
	}
	return ""
}

// File is a tokens file that can be read again (on SIGHUP) while in use.
// It is safe for concurrent use.
type File struct {
	path string
	logf func(format string, args ...any)
	cur  atomic.Pointer[Grants]
}

// Options tune a File.
type Options struct {
	// Logf reports warnings: a file that others may read. nil logs
	// through the standard log package.
	Logf func(format string, args ...any)
}

// ErrNoGrants is wrapped by the error Reload returns for a file that
// grants no token at all.
var ErrNoGrants = errors.New("grants no token")

// Open reads the tokens file at path, warning through the standard log
// package; see OpenWith.
func Open(path string) (*File, error) { return OpenWith(path, Options{}) }

// OpenWith reads the tokens file at path. A file that grants no token is
// accepted here (the server then refuses every request until a SIGHUP
// brings grants), but not by Reload.
func OpenWith(path string, opts Options) (*File, error) {
	f := &File{path: path, logf: opts.Logf}
	if f.logf == nil {
		f.logf = log.Printf
	}
	g, err := f.read()
	if err != nil {
		return nil, err
	}
	f.cur.Store(g)
	return f, nil
}

// Reload reads the file again. On error the grants in force stay as they
// were. A file that grants no token (empty, only comments, or caught
// half-written by an editor) is refused with an error wrapping ErrNoGrants:
// a mistake must never lock everyone out. To revoke every token, stop the
// server.
func (f *File) Reload() error {
	g, err := f.read()
	if err != nil {
		return err
	}
	if g.Len() == 0 {
		return fmt.Errorf("tokens file %s %w (to revoke every token, stop the server)", f.path, ErrNoGrants)
	}
	f.cur.Store(g)
	return nil
}

// read parses the file, warning when others may read it.
func (f *File) read() (*Grants, error) {
	r, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	defer r.Close()
	if fi, err := r.Stat(); err == nil && openPermissions(fi.Mode()) {
		f.logf("warning: tokens file %s has mode %04o: users other than the server's may read (or change) the tokens in it; make it readable by the server only: chmod 600 %s",
			f.path, fi.Mode().Perm(), f.path)
	}
	g, err := Parse(r)
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", f.path, err)
	}
	return g, nil
}

// openPermissions reports whether mode lets the file's group or others
// read or write it. Windows has no such bits: its ACLs are not shown in
// the mode.
func openPermissions(mode fs.FileMode) bool {
	return runtime.GOOS != "windows" && mode.Perm()&0o077 != 0
}

// Grants returns the grants in force.
func (f *File) Grants() *Grants { return f.cur.Load() }

// Check tells what token may do with memory under the grants in force.
func (f *File) Check(token, memory string) Level { return f.cur.Load().Check(token, memory) }

// CheckCookie tells what the holder of a page cookie (CookieValue) may do
// with memory under the grants in force.
func (f *File) CheckCookie(value, memory string) Level {
	return f.cur.Load().CheckCookie(value, memory)
}

// CheckPageKey tells what the holder of a page's key (PageKey) may do with
// memory under the grants in force.
func (f *File) CheckPageKey(key, memory string) Level {
	return f.cur.Load().CheckPageKey(key, memory)
}

// Label returns the label the grants in force give token, or "".
func (f *File) Label(token string) string { return f.cur.Load().Label(token) }

// PageKeyLabel returns the label the grants in force give the token whose
// page's key is key, or "".
func (f *File) PageKeyLabel(key string) string { return f.cur.Load().PageKeyLabel(key) }

// Len reports how many distinct tokens the grants in force name.
func (f *File) Len() int { return f.cur.Load().Len() }
