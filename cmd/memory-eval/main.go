// Command memory-eval measures how well knowledge-graph memory servers
// answer questions asked in people's own words. It reads an evaluation set
// (testdata/eval: memories in the reference's JSONL format and questions,
// each naming the entity and observation that answer it), starts each server
// command over stdio with MEMORY_FILE_PATH pointing at a fresh copy of each
// memory, calls search_nodes with every question verbatim as the query, and
// prints per memory and language:
//
//   - recall@5 and recall@10: the share of questions whose answering entity
//     is among the first 5 (10) entities of the structured result;
//
//   - MRR: the mean of 1/rank of the answering entity (0 when absent);
//
//   - evidence@4000B: the share whose answering observation lies wholly
//     within the first 4,000 bytes of the answer's text items, concatenated
//     in order, the observation looked for as JSON encodes it there;
//
//   - p50 and p95 of the answer's size in bytes of text.
//
//     go run ./cmd/memory-eval --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
//
// With --embeddings URL the server measured searches by meaning too,
// through the OpenAI-compatible API at URL (docs/evaluation.md): every
// question is asked once every text of the memory has its vector.
//
// Without --cmd it builds ./cmd/mcp-server-memory into a temporary
// directory and measures that. The table goes to stdout, or to stderr when
// --json or --markdown put their output on stdout.
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
	fs := flag.NewFlagSet("memory-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	setDir := fs.String("set", "testdata/eval", "evaluation set directory (memories/*.jsonl and questions.jsonl)")
	cmdFlag := fs.String("cmd", "", "server command to measure, run with sh -c (default: go build ./cmd/mcp-server-memory and run it)")
	vsFlag := fs.String("vs", "", "second server command to compare against, e.g. 'npx -y @modelcontextprotocol/server-memory@2026.8.31'")
	memoryFlag := fs.String("memory", "", "comma-separated memory names to run (default: all)")
	filter := fs.String("questions", "", "run only questions whose id, kind or text contains this (case-insensitive)")
	perQuestion := fs.Bool("per-question", false, "print each question's rank and evidence to stderr")
	protocol := fs.String("protocol", "2025-06-18", "MCP protocol version the client asks for in initialize")
	callTimeout := fs.Duration("call-timeout", time.Minute, "a single search taking longer fails")
	startTimeout := fs.Duration("start-timeout", 10*time.Minute, "time allowed for a server to start and answer the handshake (npx may download first)")
	jsonOut := fs.Bool("json", false, "write machine-readable results to stdout (the table goes to stderr)")
	markdown := fs.Bool("markdown", false, "print a markdown section (to stdout, or stderr with --json)")
	embeddings := fs.String("embeddings", "", "measure the server with search by meaning through the OpenAI-compatible API at this base URL, e.g. http://127.0.0.1:11434/v1 (the server's MEMORY_EMBEDDINGS_URL); the API key, if any, from MEMORY_EMBEDDINGS_API_KEY or _API_KEY_FILE as the server reads them")
	embeddingsModel := fs.String("embeddings-model", "", "the embedding model with --embeddings (default: MEMORY_EMBEDDINGS_MODEL, as the server reads it)")
	vectorsTimeout := fs.Duration("vectors-timeout", time.Hour, "with --embeddings, the longest wait for every text of a memory to have its vector")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memory-eval: unexpected argument %q (flags only; see --help)\n", fs.Arg(0))
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "memory-eval: %v\n", err)
		return 1
	}

	set, err := loadSet(*setDir)
	if err != nil {
		return fail(fmt.Errorf("evaluation set: %w", err))
	}
	var memories []string
	for name := range strings.SplitSeq(*memoryFlag, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if set.memory(name) == nil {
			fmt.Fprintf(stderr, "memory-eval: --memory: no memory %q in %s (have: %s)\n", name, *setDir, strings.Join(set.memoryNames(), ", "))
			return 2
		}
		memories = append(memories, name)
	}
	questions := selectQuestions(set.Questions, memories, *filter)
	if len(questions) == 0 {
		fmt.Fprintln(stderr, "memory-eval: no question matches --memory and --questions")
		return 2
	}

	if *embeddingsModel != "" && *embeddings == "" {
		fmt.Fprintln(stderr, "memory-eval: --embeddings-model needs --embeddings URL")
		return 2
	}
	embeddingsURL, err := url.Parse(*embeddings)
	if *embeddings != "" && (err != nil || embeddingsURL.Scheme != "http" && embeddingsURL.Scheme != "https" || embeddingsURL.Host == "") {
		fmt.Fprintln(stderr, "memory-eval: --embeddings: want the http or https base URL of an OpenAI-compatible API, such as http://127.0.0.1:11434/v1")
		return 2
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "memory-eval: "+format+"\n", a...) }
	s := settings{protocol: *protocol, callTimeout: *callTimeout, vectorsTimeout: *vectorsTimeout, progress: progress}
	if *perQuestion {
		s.perQuestion = stderr
	}

	tmp, err := os.MkdirTemp("", "memory-eval-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)

	servers := []*serverUnderTest{{Label: "ours", Command: *cmdFlag, env: embeddingsEnv(*embeddings, *embeddingsModel)}}
	if *embeddings != "" {
		model := strconv.Quote(*embeddingsModel)
		if *embeddingsModel == "" {
			model = "named by MEMORY_EMBEDDINGS_MODEL"
		}
		servers[0].Embeddings = fmt.Sprintf("model %s at %s", model, embeddingsURL.Redacted())
	}
	if servers[0].Command == "" {
		progress("building %s", serverproc.OurServerPackage)
		bin, err := serverproc.BuildOurServer(ctx, tmp)
		if err != nil {
			return fail(err)
		}
		servers[0].Command = serverproc.ShellQuote(bin)
		servers[0].Built = "./cmd/mcp-server-memory built with go build" + serverproc.Version(bin)
	}
	if *vsFlag != "" {
		servers = append(servers, &serverUnderTest{Label: "theirs", Command: *vsFlag, env: embeddingsEnv("", "")})
	}

	rep := &report{
		CommandLine: serverproc.CommandLine("go run ./cmd/memory-eval", append([]string{os.Args[0]}, args...)),
		Date:        time.Now().UTC().Format("2006-01-02"),
		Set:         *setDir,
		Servers:     servers,
		Outcomes:    map[string][]outcome{},
	}
	for _, m := range set.Memories {
		qs := slices.DeleteFunc(slices.Clone(questions), func(q question) bool { return q.Memory != m.Name })
		if len(qs) == 0 {
			continue
		}
		rep.Memories = append(rep.Memories, memoryInfo{Name: m.Name, Entities: m.Entities, Observations: m.Observations, Relations: m.Relations})
		for _, srv := range servers {
			progress("%s: %d questions to %s", m.Name, len(qs), srv.Label)
			outs, err := askAll(ctx, srv, m, qs, filepath.Join(tmp, srv.Label), *startTimeout, s)
			if err != nil {
				return fail(fmt.Errorf("%s on %s: %w", srv.Label, m.Name, err))
			}
			rep.Outcomes[srv.Label] = append(rep.Outcomes[srv.Label], outs...)
		}
	}
	rep.summarize(questions)

	tableOut, markdownOut := stdout, stdout
	if *jsonOut || *markdown {
		tableOut = stderr
	}
	if *jsonOut {
		markdownOut = stderr
	}
	rep.writeTable(tableOut)
	if *markdown {
		rep.writeMarkdown(markdownOut)
	}
	if *jsonOut {
		if err := rep.writeJSON(stdout); err != nil {
			return fail(err)
		}
	}
	return 0
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
