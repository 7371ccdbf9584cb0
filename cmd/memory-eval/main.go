package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
)

const usage = `memory-eval: how well MCP memory servers answer questions asked in people's own words.

Usage:
  go run ./cmd/memory-eval [flags]

Examples:
  go run ./cmd/memory-eval --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
  go run ./cmd/memory-eval --memory russian --per-question
  go run ./cmd/memory-eval --embeddings http://127.0.0.1:11434/v1 --embeddings-model nomic-embed-text

Flags:
`

// serverUnderTest is one command measured.
type serverUnderTest struct {
	Label   string `json:"label"`   // "ours" or "theirs"
	Command string `json:"command"` // run with sh -c
	Built   string `json:"built,omitempty"`
	// Embeddings names the endpoint and model of search by meaning
	// (--embeddings), never a key or password; "" for off.
	Embeddings string `json:"embeddings,omitempty"`

	env []string // what the server's environment gains
}

type settings struct {
	protocol    string
	callTimeout time.Duration
	perQuestion io.Writer // nil: no per-question lines
	// vectorsTimeout bounds the wait for search by meaning's vectors
	// (--embeddings); progress reports it.
	vectorsTimeout time.Duration
	progress       func(string, ...any)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return usageStatus(stderr, err)
	}
	if o == nil { // --help
		return 0
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "memory-eval: %v\n", err)
		return 1
	}
	set, err := loadSet(o.setDir)
	if err != nil {
		return fail(fmt.Errorf("evaluation set: %w", err))
	}
	questions, err := o.chooseQuestions(set)
	if err != nil {
		return usageStatus(stderr, err)
	}
	if err := o.checkEmbeddings(); err != nil {
		return usageStatus(stderr, err)
	}
	s := o.settings(stderr)
	tmp, err := os.MkdirTemp("", "memory-eval-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	servers, err := o.servers(ctx, tmp, s.progress)
	if err != nil {
		return fail(err)
	}
	rep := &report{
		CommandLine: serverproc.CommandLine("go run ./cmd/memory-eval", append([]string{os.Args[0]}, args...)),
		Date:        time.Now().UTC().Format("2006-01-02"),
		Set:         o.setDir,
		Servers:     servers,
		Outcomes:    map[string][]outcome{},
	}
	if err := rep.askEveryMemory(ctx, set, questions, tmp, o.startTimeout, s); err != nil {
		return fail(err)
	}
	rep.summarize(questions)
	if err := o.writeReports(rep, stdout, stderr); err != nil {
		return fail(err)
	}
	return 0
}

// options is the command line, read once.
type options struct {
	setDir          string
	cmd             string
	vs              string
	memories        string
	filter          string
	perQuestion     bool
	protocol        string
	callTimeout     time.Duration
	startTimeout    time.Duration
	jsonOut         bool
	markdown        bool
	embeddings      string
	embeddingsURL   *url.URL
	embeddingsModel string
	vectorsTimeout  time.Duration
}

// usageError is a command line that cannot run: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// usageStatus reports a usage error (the flag package's own are reported
// already) and returns exit status 2.
func usageStatus(stderr io.Writer, err error) int {
	if err.Error() != "" {
		fmt.Fprintf(stderr, "memory-eval: %v\n", err)
	}
	return 2
}

// parseOptions reads the command line. It returns a nil error and nil
// options for --help.
func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("memory-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	o := &options{}
	fs.StringVar(&o.setDir, "set", "testdata/eval", "evaluation set directory (memories/*.jsonl and questions.jsonl)")
	fs.StringVar(&o.cmd, "cmd", "", "server command to measure, run with sh -c (default: go build ./cmd/mcp-server-memory and run it)")
	fs.StringVar(&o.vs, "vs", "", "second server command to compare against, e.g. 'npx -y @modelcontextprotocol/server-memory@2026.8.31'")
	fs.StringVar(&o.memories, "memory", "", "comma-separated memory names to run (default: all)")
	fs.StringVar(&o.filter, "questions", "", "run only questions whose id, kind or text contains this (case-insensitive)")
	fs.BoolVar(&o.perQuestion, "per-question", false, "print each question's rank and evidence to stderr")
	fs.StringVar(&o.protocol, "protocol", "2025-06-18", "MCP protocol version the client asks for in initialize")
	fs.DurationVar(&o.callTimeout, "call-timeout", time.Minute, "a single search taking longer fails")
	fs.DurationVar(&o.startTimeout, "start-timeout", 10*time.Minute, "time allowed for a server to start and answer the handshake (npx may download first)")
	fs.BoolVar(&o.jsonOut, "json", false, "write machine-readable results to stdout (the table goes to stderr)")
	fs.BoolVar(&o.markdown, "markdown", false, "print a markdown section (to stdout, or stderr with --json)")
	fs.StringVar(&o.embeddings, "embeddings", "", "measure the server with search by meaning through the OpenAI-compatible API at this base URL, e.g. http://127.0.0.1:11434/v1 (the server's MEMORY_EMBEDDINGS_URL); the API key, if any, from MEMORY_EMBEDDINGS_API_KEY or _API_KEY_FILE as the server reads them")
	fs.StringVar(&o.embeddingsModel, "embeddings-model", "", "the embedding model with --embeddings (default: MEMORY_EMBEDDINGS_MODEL, as the server reads it)")
	fs.DurationVar(&o.vectorsTimeout, "vectors-timeout", time.Hour, "with --embeddings, the longest wait for every text of a memory to have its vector")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, usageError{} // the flag package has said why
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	return o, nil
}

// chooseQuestions is the questions of the set that --memory and
// --questions select.
func (o *options) chooseQuestions(set *evalSet) ([]question, error) {
	var memories []string
	for name := range strings.SplitSeq(o.memories, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if set.memory(name) == nil {
			return nil, usagef("--memory: no memory %q in %s (have: %s)", name, o.setDir, strings.Join(set.memoryNames(), ", "))
		}
		memories = append(memories, name)
	}
	questions := selectQuestions(set.Questions, memories, o.filter)
	if len(questions) == 0 {
		return nil, usagef("no question matches --memory and --questions")
	}
	return questions, nil
}

// checkEmbeddings checks --embeddings and --embeddings-model.
func (o *options) checkEmbeddings() error {
	if o.embeddingsModel != "" && o.embeddings == "" {
		return usagef("--embeddings-model needs --embeddings URL")
	}
	u, err := url.Parse(o.embeddings)
	if o.embeddings != "" && (err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
		return usagef("--embeddings: want the http or https base URL of an OpenAI-compatible API, such as http://127.0.0.1:11434/v1")
	}
	o.embeddingsURL = u
	return nil
}

func (o *options) settings(stderr io.Writer) settings {
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "memory-eval: "+format+"\n", a...) }
	s := settings{protocol: o.protocol, callTimeout: o.callTimeout, vectorsTimeout: o.vectorsTimeout, progress: progress}
	if o.perQuestion {
		s.perQuestion = stderr
	}
	return s
}

// servers lists the servers to measure: ours (--cmd, or else built into
// tmp), with search by meaning if asked, and the --vs server.
func (o *options) servers(ctx context.Context, tmp string, progress func(string, ...any)) ([]*serverUnderTest, error) {
	ours := &serverUnderTest{Label: "ours", Command: o.cmd, env: embeddingsEnv(o.embeddings, o.embeddingsModel)}
	if o.embeddings != "" {
		model := strconv.Quote(o.embeddingsModel)
		if o.embeddingsModel == "" {
			model = "named by MEMORY_EMBEDDINGS_MODEL"
		}
		ours.Embeddings = fmt.Sprintf("model %s at %s", model, o.embeddingsURL.Redacted())
	}
	if ours.Command == "" {
		progress("building %s", serverproc.OurServerPackage)
		bin, err := serverproc.BuildOurServer(ctx, tmp)
		if err != nil {
			return nil, err
		}
		ours.Command = serverproc.ShellQuote(bin)
		ours.Built = "./cmd/mcp-server-memory built with go build" + serverproc.Version(bin)
	}
	servers := []*serverUnderTest{ours}
	if o.vs != "" {
		servers = append(servers, &serverUnderTest{Label: "theirs", Command: o.vs, env: embeddingsEnv("", "")})
	}
	return servers, nil
}

// askEveryMemory asks every server the selected questions of each memory,
// memory by memory.
func (r *report) askEveryMemory(ctx context.Context, set *evalSet, questions []question, tmp string, startTimeout time.Duration, s settings) error {
	for _, m := range set.Memories {
		qs := slices.DeleteFunc(slices.Clone(questions), func(q question) bool { return q.Memory != m.Name })
		if len(qs) == 0 {
			continue
		}
		r.Memories = append(r.Memories, memoryInfo{Name: m.Name, Entities: m.Entities, Observations: m.Observations, Relations: m.Relations})
		for _, srv := range r.Servers {
			s.progress("%s: %d questions to %s", m.Name, len(qs), srv.Label)
			outs, err := askAll(ctx, srv, m, qs, filepath.Join(tmp, srv.Label), startTimeout, s)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", srv.Label, m.Name, err)
			}
			r.Outcomes[srv.Label] = append(r.Outcomes[srv.Label], outs...)
		}
	}
	return nil
}

// writeReports prints the table, and the markdown and JSON if asked: the
// table goes to stdout unless --json or --markdown take it.
func (o *options) writeReports(rep *report, stdout, stderr io.Writer) error {
	tableOut, markdownOut := stdout, stdout
	if o.jsonOut || o.markdown {
		tableOut = stderr
	}
	if o.jsonOut {
		markdownOut = stderr
	}
	rep.writeTable(tableOut)
	if o.markdown {
		rep.writeMarkdown(markdownOut)
	}
	if o.jsonOut {
		return rep.writeJSON(stdout)
	}
	return nil
}

// askAll asks one server every question of one memory, on a fresh copy of
// the memory file. A question that fails is recorded as a miss with its
// error; a server that cannot be started, or is interrupted, fails the run.
func askAll(ctx context.Context, srv *serverUnderTest, m *memory, qs []question, dir string, startTimeout time.Duration, s settings) ([]outcome, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	file := filepath.Join(dir, m.Name+".jsonl")
	if err := serverproc.CopyFile(m.Path, file); err != nil {
		return nil, err
	}
	defer os.Remove(file)
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	p, err := startServer(startCtx, srv.Command, file, s.protocol, srv.env)
	cancel()
	if err != nil {
		return nil, err
	}
	defer p.close()
	if srv.Embeddings != "" {
		if err := waitForVectors(ctx, p, qs[0].Question, s.vectorsTimeout, s.progress); err != nil {
			return nil, err
		}
	}

	outs := make([]outcome, 0, len(qs))
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		callCtx, cancel := context.WithTimeout(ctx, s.callTimeout)
		res, err := p.search(callCtx, q.Question)
		cancel()
		var o outcome
		if err != nil {
			o = outcome{ID: q.ID, Error: err.Error()}
		} else {
			o = judge(q, res)
			o.ByWords = srv.Embeddings != "" && strings.Contains(answerText(res), byWordsOnly)
		}
		if s.perQuestion != nil {
			fmt.Fprintf(s.perQuestion, "%s\t%s\trank=%d\tevidence=%v\tbytes=%d\t%s%s\n",
				srv.Label, q.ID, o.Rank, o.Evidence, o.AnswerBytes, q.Question, errorNote(o.Error))
		}
		outs = append(outs, o)
	}
	return outs, nil
}

func errorNote(e string) string {
	if e == "" {
		return ""
	}
	return "\terror: " + serverproc.FirstLine(e)
}
