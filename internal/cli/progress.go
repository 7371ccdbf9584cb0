package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows how far a long command has come on stderr: a bar
// redrawn in place on a terminal; otherwise, for a log, a plain line
// at the start, at every tenth of the way and at least every
// progressEvery, and at the end.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string // the plain lines' "mcp-server-memory CMD: "
	what    string // what is counted, such as "texts have a vector"
	tty     bool
	started time.Time
	first   int // done at the first show: the rate counts what this run did
	shown   bool
	drawn   bool // a bar is on the terminal's last line
	last    time.Time
	tenth   int
}

const progressEvery = 10 * time.Second

func (c *context_) progress(what string) *progress {
	f, ok := c.stderr.(*os.File)
	return &progress{w: c.stderr, prefix: "mcp-server-memory " + c.cmd.name + ": ", what: what, tty: ok && term.IsTerminal(int(f.Fd()))}
}

// show reports done of total.
func (p *progress) show(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.shown {
		p.shown, p.started, p.first, p.last = true, now, done, now
	}
	pct := 100
	if total > 0 {
		pct = done * 100 / total
	}
	if p.tty {
		const width = 30
		fill := width
		if total > 0 {
			fill = done * width / total
		}
		eta := ""
		if did := done - p.first; did > 0 && done < total {
			left := time.Duration(float64(now.Sub(p.started)) / float64(did) * float64(total-done))
			eta = "  about " + left.Round(time.Second).String() + " left"
		}
		fmt.Fprintf(p.w, "\r\x1b[K[%s%s] %s of %s %s  %d%%%s", strings.Repeat("#", fill), strings.Repeat("-", width-fill), thousands(done), thousands(total), p.what, pct, eta)
		p.drawn = true
		return
	}
	if tenth := pct / 10; p.last == now || tenth > p.tenth || now.Sub(p.last) >= progressEvery || done == total {
		p.tenth, p.last = tenth, now
		fmt.Fprintf(p.w, "%s%s of %s %s (%d%%)\n", p.prefix, thousands(done), thousands(total), p.what, pct)
	}
}

// say prints a line of its own, below the bar on a terminal.
func (p *progress) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
	fmt.Fprintf(p.w, p.prefix+format+"\n", args...)
}

// end leaves the bar on its line: what follows starts below it.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
}

func (p *progress) endLine() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
