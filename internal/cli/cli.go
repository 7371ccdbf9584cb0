// Package cli holds the commands people use to see, search, correct and move
// their memory without an assistant in between (docs/design.md §9): stats,
// search, show, export, import, check, rename, merge, history, undo, ui and
// embed (search by meaning's vectors).
//
// With MEMORY_DATABASE_URL set, every command but check works on a memory
// in PostgreSQL (--memory NAME, default "default") through pgstore.Store,
// each write one transaction; check works on memory files only. Otherwise
// every command works on the memory file the server uses
// (MEMORY_FILE_PATH, or --file), through the same
// filestore.Store: reads take no lock and see the latest saved file, and
// every write is one read-modify-write under the file's lock, all or
// nothing, so the commands are safe while servers run on the same file.
// Output suits a terminal; --json prints JSON for scripts. Exit codes: 0
// done, 1 failed (nothing written), 2 bad usage.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/kgmemory/mcp-server-memory/internal/memoryconfig"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is a command stopped by Ctrl-C (128 + SIGINT, as
	// shells report it).
	exitInterrupted = 130
)

// command is one subcommand.
type command struct {
	name    string
	args    string // the arguments in the usage line
	summary string
	help    string // more lines for --help, or ""
	noJSON  bool   // it has no JSON output (ui)
	run     func(c *context_, args []string) error
}

var commands []*command

func init() {
	commands = []*command{
		cmdStats, cmdSearch, cmdShow, cmdExport, cmdImport, cmdCheck, cmdRename, cmdMerge, cmdHistory, cmdUndo, cmdUI, cmdEmbed, cmdHelp,
	}
}

// IsCommand reports whether name is one of the commands Run runs.
func IsCommand(name string) bool {
	return slices.ContainsFunc(commands, func(c *command) bool { return c.name == name })
}

// Run runs the command args[0] with the arguments args[1:] and returns the
// process's exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || !IsCommand(args[0]) {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	i := slices.IndexFunc(commands, func(c *command) bool { return c.name == args[0] })
	cmd := commands[i]
	if os.Getenv("GOGC") == "" {
		// A command loads the graph once and exits: collecting less often
		// trades a little memory for time (stats on 100k entities: about
		// 15 % faster).
		debug.SetGCPercent(400)
	}
	c := &context_{cmd: cmd, config: memoryconfig.FromOS(), stdin: stdin, stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.flags = fs
	fs.StringVar(&c.file, "file", "", "")
	fs.StringVar(&c.memory, "memory", "", "")
	fs.BoolVar(&c.json, "json", false, "")
	if err := cmd.run(c, args[1:]); err != nil {
		var ue usageError
		switch {
		case errors.Is(err, flag.ErrHelp):
			fmt.Fprint(stdout, cmd.usage())
			return exitOK
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "mcp-server-memory %s: %s\n\n%s", cmd.name, ue.msg, cmd.usage())
			return exitUsage
		case errors.Is(err, errReported):
			return exitFailed
		case errors.Is(err, errInterrupted):
			return exitInterrupted
		default:
			fmt.Fprintf(stderr, "mcp-server-memory %s: %s\n", cmd.name, terminalSafe(err.Error()))
			return exitFailed
		}
	}
	return exitOK
}

// usageError is a mistake on the command line (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errReported is returned by a command that failed and has already said why
// (exit 1).
var errReported = errors.New("failed")

func usage() string {
	var b strings.Builder
	b.WriteString("Usage: mcp-server-memory COMMAND [options]\n\nCommands on the memory file (MEMORY_FILE_PATH, or --file PATH) or database (MEMORY_DATABASE_URL):\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-28s %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	b.WriteString("\nEvery command takes --help and --file PATH, and every one but ui --json (JSON output for scripts).\n" +
		"Writes take the memory file's lock, as the server does: they are safe while servers run.\n" +
		"With MEMORY_DATABASE_URL set, as for the server, every command but check works on the\n" +
		"memory --memory NAME (default \"default\") in PostgreSQL; check works on memory files only.\n" +
		"Exit codes: 0 done, 1 failed (a failed write wrote nothing; check: problems remain, though\n" +
		"check --fix may have repaired others), 2 bad usage, 130 stopped by Ctrl-C.\n")
	return b.String()
}

func (cmd *command) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: mcp-server-memory %s\n\n%s\n", strings.TrimSpace(cmd.name+" [options] "+cmd.args), cmd.summary)
	if cmd.help != "" {
		b.WriteString("\n" + cmd.help)
	}
	b.WriteString(`
Options:
  --file PATH   the memory file, relative to the current directory (default:
                MEMORY_FILE_PATH, else memory.jsonl beside the executable)
  --memory NAME the memory in the database when MEMORY_DATABASE_URL is set
                (default: "default")
`)
	if !cmd.noJSON {
		b.WriteString("  --json        print JSON instead of text\n")
	}
	b.WriteString("  --help        print this help\n")
	return b.String()
}

// context_ is what a command runs with. (Named so that it does not shadow
// the context package.)
type context_ struct {
	cmd            *command
	config         memoryconfig.Config // the environment
	flags          *flag.FlagSet
	file           string
	memory         string // --memory: the memory in the database
	json           bool
	stdin          io.Reader
	stdout, stderr io.Writer
}

// parse parses the command's flags (declared on c.flags before the call)
// and returns the remaining arguments; flags may follow arguments.
func (c *context_) parse(args []string) ([]string, error) {
	var rest []string
	for {
		if err := c.flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = c.flags.Args()
		if len(args) == 0 {
			return rest, nil
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func (c *context_) logf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "mcp-server-memory %s: %s\n", c.cmd.name, terminalSafe(fmt.Sprintf(format, args...)))
}

// interruptible returns a context that ends on Ctrl-C or SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// printJSON writes v as indented JSON, without HTML escaping.
func (c *context_) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printf writes text for a terminal. Memory content may hold control
// characters (an escape sequence in a name could reprogram the terminal)
// and invisible ones (a right-to-left override or a zero-width space makes
// one name or client look like another), so every control character but
// the line ends printf's callers write, and every format character
// (Unicode's Cf: bidirectional controls, zero-width characters) and line or
// paragraph separator, is shown escaped, as Go quotes it: \t, \x1b,
// \u202e.
func (c *context_) printf(format string, args ...any) {
	io.WriteString(c.stdout, terminalSafe(fmt.Sprintf(format, args...)))
}

func terminalSafe(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	if r < 0x80 {
		return r != '\n' && (r < 0x20 || r == 0x7f)
	}
	return r < 0xa0 || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

var cmdHelp = &command{
	name:    "help",
	args:    "[COMMAND]",
	summary: "print this list, or a command's help",
	run: func(c *context_, args []string) error {
		args, err := c.parse(args)
		if err != nil {
			return err
		}
		if len(args) == 1 && IsCommand(args[0]) {
			i := slices.IndexFunc(commands, func(cmd *command) bool { return cmd.name == args[0] })
			c.printf("%s", commands[i].usage())
			return nil
		}
		if len(args) > 0 {
			return usagef("unknown command %q", args[0])
		}
		c.printf("%s", usage())
		return nil
	},
}

// plural returns "1 entity" or "2 entities".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
