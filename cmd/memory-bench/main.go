// Command memory-bench measures knowledge-graph memory servers the way an
// MCP client sees them: it generates a reference-format memory file of N
// entities (five observations each, 2N relations, English, Japanese and
// Russian text), starts a server command over stdio with MEMORY_FILE_PATH
// pointing at a fresh copy, and times tools/call round trips with the go-sdk
// client: p50/p95/p99 per tool, start to first answer, and the peak RSS of
// the server's process tree.
//
// With --vs it runs the same workload against a second server (typically the
// Node reference through npx), alternating per size, and prints the ratio of
// the two medians.
//
//	go run ./cmd/memory-bench --sizes 1000,10000 \
//	    --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
//
// With --postgres the second server is the same command with its memory in
// PostgreSQL (MEMORY_DATABASE_URL) instead of a file: each run gets a new
// database, created for it and dropped after, whose memory "default" holds
// exactly the generated graph, imported before the server starts. The ratio
// is then PostgreSQL's median over the file's. "--postgres auto" starts a
// private cluster (PostgreSQL's default durability: fsync on) in a temporary
// directory on a free port of 127.0.0.1 and removes it at the end; a URL
// names a server on which the user may create databases.
//
//	go run ./cmd/memory-bench --sizes 10000 --postgres auto --writes 0
//
// With --vs-load tools the second server is given the generated graph
// through its own tools instead of MEMORY_FILE_PATH, for servers that keep
// their memory elsewhere (a SQLite database under $HOME): each run gets a
// fresh, empty HOME, and a process of the server loads the graph with
// create_entities and create_relations calls, is checked with open_nodes,
// and exits before anything is timed.
//
//	go run ./cmd/memory-bench --sizes 1000,10000 --skip read_graph,search,open_nodes \
//	    --vs 'node .../@pepk/mcp-memory-sqlite/dist/index.js' --vs-load tools
//
// With --embeddings the second server is the same command with search by
// meaning on (MEMORY_EMBEDDINGS_URL), each run's vectors computed before
// it by the command's embed, and the ratio is on over off. "--embeddings
// stub" starts the project's stand-in endpoint (vectors of hashed words,
// no model) in this process; a URL names an OpenAI-compatible API, with
// --embeddings-model.
//
//	go run ./cmd/memory-bench --sizes 1000,10000 --embeddings stub --writes 0 \
//	    --skip read_graph,search,open_nodes
//
// Without --cmd it builds ./cmd/mcp-server-memory into a temporary directory
// and runs that. The table goes to stdout, or to stderr when --json or
// --markdown put their output on stdout.
//
// After the tools it makes --writes one-entity writes (10,000 by default)
// and compares the server's resident set then with that of a fresh server
// loading the file they left: a server that lives for days in a desktop
// client must not grow with every write.
//
// A second table times the same calls to the last byte of the answer on the
// pipe: for large answers (read_graph, a search matching thousands of
// entities) the go-sdk client's own JSON decoding is much of what the first
// table shows, and it is the same for every server.
//
// With --client ts the calls are timed by the official TypeScript SDK's
// client (@modelcontextprotocol/sdk, pinned in tsclient/, installed with
// npm ci into the user's cache directory on first use), the one most hosts
// are built on, instead of the go-sdk's: a Node.js process on the server's
// pipes, which memory-bench still owns (the last-byte table and the RSS
// are measured as with the go-sdk client). It lists the tools once after
// connecting, as a host does, and asks for the SDK's default protocol
// version unless --protocol is given.
//
//	go run ./cmd/memory-bench --sizes 10000 --writes 0 --client ts \
//	    --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kgmemory/mcp-server-memory/internal/serverproc"
	"github.com/kgmemory/mcp-server-memory/internal/testgraph"
)

const usage = `memory-bench: latency and memory of MCP memory servers, as a client sees them.

Usage:
  go run ./cmd/memory-bench [flags]

Examples:
  go run ./cmd/memory-bench --sizes 1000,10000 --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
  go run ./cmd/memory-bench --cmd 'npx -y @modelcontextprotocol/server-memory@2026.8.31' --sizes 1000
  go run ./cmd/memory-bench --sizes 10000 --postgres auto --writes 0
  go run ./cmd/memory-bench --sizes 10000 --writes 0 --client ts --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31'
  go run ./cmd/memory-bench --sizes 1000,10000 --embeddings stub --writes 0 --skip read_graph,search,open_nodes
  go run ./cmd/memory-bench --sizes 1000,10000 --skip read_graph,search,open_nodes \
      --vs 'node PEER/dist/index.js' --vs-load tools

--vs-load tools is for a second server that keeps its memory where
MEMORY_FILE_PATH cannot point, such as a SQLite database under $HOME. Each
of its runs gets a fresh directory as HOME (with MEMORY_FILE_PATH in it), so
it starts from an empty memory; a process of that server then creates the
generated graph through its own tools (create_entities, create_relations, in
batches), must report every entity and relation created, is checked with
open_nodes on a few entities, and exits; the timed run starts after. The
notes under the table count what was loaded. Run the server with node rather
than npx if you can (npx is given the caller's npm cache). Its answers to
reads may differ in form from the reference's: compare the writes, start
time and RSS, and skip the reads with --skip read_graph,search,open_nodes.

Flags:
`

// benchServer is one command under test.
type benchServer struct {
	label   string // "ours" or "theirs"; "file" or "postgres" with --postgres
	command string // run with sh -c
	built   string // when the benchmark built the server: what it built
	backend memoryBackend
	where   string // where the memory is, when not in a file
	preRun  time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("memory-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	sizesFlag := fs.String("sizes", "1000,10000", "graph sizes N (entities) to run, comma-separated; k and M suffixes allowed (1k, 1M)")
	cmdFlag := fs.String("cmd", "", "server command to measure, run with sh -c (default: go build ./cmd/mcp-server-memory and run it)")
	vsFlag := fs.String("vs", "", "second server command to compare against, e.g. 'npx -y @modelcontextprotocol/server-memory@2026.8.31'")
	iters := fs.Int("iters", 30, "measured calls per tool at most")
	minIters := fs.Int("min-iters", 5, "measured calls per tool at least, even past --budget")
	budget := fs.Duration("budget", 20*time.Second, "stop measuring a tool once --min-iters calls are done and this much time has passed")
	warmups := fs.Int("warmups", 2, "unmeasured warm-up calls per tool")
	starts := fs.Int("starts", 3, "process starts to time (start to first answer) per server and size")
	callTimeout := fs.Duration("call-timeout", 5*time.Minute, "a single tool call taking longer fails")
	seed := fs.Uint64("seed", 1, "random seed for the generated graph and workload")
	protocol := fs.String("protocol", "2025-06-18", "MCP protocol version the client asks for in initialize (with --client ts: the TypeScript SDK's latest unless given)")
	clientFlag := fs.String("client", "go", "the MCP client that times the calls: 'go' (the go-sdk's) or 'ts' (the TypeScript SDK's, @modelcontextprotocol/sdk in Node.js, installed with npm on first use)")
	jsonOut := fs.Bool("json", false, "write machine-readable results to stdout (the table goes to stderr)")
	writeGraph := fs.String("write-graph", "", "write the generated graph of the first size to this file and exit (to profile a server by hand)")
	skip := fs.String("skip", "", "comma-separated substrings of tool rows not to run, e.g. 'read_graph,common' for huge graphs whose full answers no client could take")
	writes := fs.Int("writes", 10000, "after the tools, make this many one-entity writes and compare the server's RSS with a fresh server's on the file they left (0: skip)")
	markdown := fs.Bool("markdown", false, "print a README-ready markdown section (to stdout, or stderr with --json)")
	vsLoad := fs.String("vs-load", "file", "how the --vs server gets the generated graph: 'file' (a copy at MEMORY_FILE_PATH) or 'tools' (a fresh HOME, loaded through its own create_entities and create_relations; see above)")
	postgresFlag := fs.String("postgres", "", "also run the server with its memory in PostgreSQL, beside the file, and print PostgreSQL/file ratios: 'auto' starts a private throwaway cluster, or a postgres:// URL of a server where the benchmark may create and drop databases (a new database per run, dropped after); --cmd, if set, must take MEMORY_DATABASE_URL as this server does")
	embeddingsFlag := fs.String("embeddings", "", "also run the server with search by meaning on, beside it off, and print on/off ratios: 'stub' starts the project's stand-in endpoint (hashed words, no model) in this process, or the base URL of an OpenAI-compatible API (with --embeddings-model; a key as the server reads it); each run's vectors are computed before it by the server's embed command")
	embeddingsModel := fs.String("embeddings-model", "", "the model with --embeddings URL")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "memory-bench: unexpected argument %q (flags only; see --help)\n", fs.Arg(0))
		return 2
	}
	sizes, err := parseSizes(*sizesFlag)
	if err != nil {
		fmt.Fprintf(stderr, "memory-bench: --sizes: %v\n", err)
		return 2
	}
	if *iters < 1 || *minIters < 1 || *starts < 1 || *warmups < 0 || *writes < 0 {
		fmt.Fprintln(stderr, "memory-bench: --iters, --min-iters and --starts must be at least 1, --warmups and --writes at least 0")
		return 2
	}
	if *clientFlag != "go" && *clientFlag != "ts" {
		fmt.Fprintf(stderr, "memory-bench: --client: %q is neither 'go' nor 'ts'\n", *clientFlag)
		return 2
	}
	if *vsLoad != "file" && *vsLoad != "tools" {
		fmt.Fprintf(stderr, "memory-bench: --vs-load: %q is neither 'file' nor 'tools'\n", *vsLoad)
		return 2
	}
	if *vsLoad == "tools" && *vsFlag == "" {
		fmt.Fprintln(stderr, "memory-bench: --vs-load tools needs --vs, the server to load")
		return 2
	}
	postgres := ""
	if *postgresFlag != "" {
		if *vsFlag != "" {
			fmt.Fprintln(stderr, "memory-bench: --postgres and --vs both name the second server; run them one at a time")
			return 2
		}
		if postgres, err = parsePostgresFlag(*postgresFlag); err != nil {
			fmt.Fprintf(stderr, "memory-bench: --postgres: %v\n", err)
			return 2
		}
		args = redactArgs(args, *postgresFlag, redactURL(postgres)) // for the report
	}
	if *embeddingsFlag != "" {
		switch {
		case *vsFlag != "" || *postgresFlag != "":
			fmt.Fprintln(stderr, "memory-bench: --embeddings, --vs and --postgres each name the second server; run them one at a time")
			return 2
		case *embeddingsFlag == embeddingsStub && *embeddingsModel != "":
			fmt.Fprintln(stderr, "memory-bench: --embeddings stub serves its own model; --embeddings-model is for a URL")
			return 2
		case *embeddingsFlag != embeddingsStub && *embeddingsModel == "":
			fmt.Fprintln(stderr, "memory-bench: --embeddings URL needs --embeddings-model NAME")
			return 2
		}
	}
	if *writeGraph != "" {
		g, _ := testgraph.Generate(sizes[0], *seed)
		if err := writeGraphFile(*writeGraph, g); err != nil {
			fmt.Fprintf(stderr, "memory-bench: %v\n", err)
			return 1
		}
		return 0
	}
	settings := runSettings{
		iters:       *iters,
		minIters:    min(*minIters, *iters),
		budget:      *budget,
		warmups:     *warmups,
		callTimeout: *callTimeout,
		starts:      *starts,
		writes:      *writes,
		client:      clientOptions{protocol: *protocol},
	}
	for _, sk := range strings.Split(*skip, ",") {
		if sk = strings.TrimSpace(sk); sk != "" {
			settings.skip = append(settings.skip, sk)
		}
	}

	tableOut, markdownOut := stdout, stdout
	if *jsonOut || *markdown {
		tableOut = stderr
	}
	if *jsonOut {
		markdownOut = stderr
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "memory-bench: "+format+"\n", a...) }

	tmp, err := os.MkdirTemp("", "memory-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "memory-bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	// PostgreSQL first: a wrong URL should not wait for the build.
	var pg *pgBackend
	if postgres != "" {
		if postgres == postgresAuto {
			progress("PostgreSQL: starting a private cluster")
		}
		if pg, err = openPostgres(ctx, postgres); err != nil {
			fmt.Fprintf(stderr, "memory-bench: --postgres: %v\n", err)
			return 1
		}
		defer pg.close()
		progress("PostgreSQL: %s", pg.where)
	}

	if *clientFlag == "ts" {
		sdk, err := installTSClient(ctx, progress)
		if err != nil {
			fmt.Fprintf(stderr, "memory-bench: --client ts: %v\n", err)
			return 1
		}
		settings.client.ts = &sdk
		settings.client.protocol = sdk.protocol
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "protocol" {
				settings.client.protocol, settings.client.askProtocol = *protocol, *protocol
			}
		})
		progress("client: %s, in %s", settings.client.describe(), sdk.dir)
	}

	ours := *cmdFlag
	oursBuilt := ""
	if ours == "" {
		progress("building %s", serverproc.OurServerPackage)
		bin, err := serverproc.BuildOurServer(ctx, tmp)
		if err != nil {
			fmt.Fprintf(stderr, "memory-bench: %v\n", err)
			return 1
		}
		ours = serverproc.ShellQuote(bin)
		oursBuilt = "./cmd/mcp-server-memory built with go build" + serverproc.Version(bin)
	}
	servers := []*benchServer{{label: "ours", command: ours, built: oursBuilt, backend: fileBackend{}}}
	if *vsFlag != "" {
		var backend memoryBackend = fileBackend{}
		if *vsLoad == "tools" {
			backend = toolsBackend{command: *vsFlag, client: settings.client, timeout: settings.callTimeout}
		}
		servers = append(servers, &benchServer{label: "theirs", command: *vsFlag, backend: backend})
	}
	if pg != nil {
		servers[0].label = "file"
		servers = append(servers, &benchServer{label: "postgres", command: ours, built: oursBuilt, backend: pg, where: pg.where})
	}
	if *embeddingsFlag != "" {
		b := meaningBackend{command: ours, url: *embeddingsFlag, model: *embeddingsModel}
		if b.url == embeddingsStub {
			stub := startStub()
			defer stub.Close()
			b.url, b.model = stub.BaseURL(), stubModel
			progress("search by meaning: the stand-in endpoint at %s", b.url)
		}
		servers[0].label = "off"
		servers = append(servers, &benchServer{label: "on", command: ours, built: oursBuilt, backend: b})
	}

	rep := &report{
		Machine:     describeMachine(),
		CommandLine: serverproc.CommandLine("go run ./cmd/memory-bench", append([]string{os.Args[0]}, args...)),
		Seed:        *seed,
		Settings:    settings,
		Servers:     servers,
	}

	// Pay one-time costs (npx's download and install, cold caches) before
	// anything is timed.
	for _, s := range servers {
		progress("pre-run %s: %s", s.label, s.command)
		d, err := preRun(ctx, s.command, s.backend, tmp, settings.client)
		if err != nil {
			fmt.Fprintf(stderr, "memory-bench: pre-run of %s (%s) failed: %v\n", s.label, s.command, err)
			return 1
		}
		s.preRun = d
		progress("pre-run %s: first handshake after %s (not counted)", s.label, fmtDuration(d))
	}

	for _, n := range sizes {
		if ctx.Err() != nil {
			break
		}
		sz, err := runSize(ctx, n, *seed, tmp, servers, settings, progress)
		if err != nil {
			fmt.Fprintf(stderr, "memory-bench: N=%d: %v\n", n, err)
			return 1
		}
		rep.Sizes = append(rep.Sizes, sz)
		rep.writeTable(tableOut, sz)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "memory-bench: interrupted")
		return 130
	}
	if *jsonOut {
		if err := rep.writeJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "memory-bench: writing JSON: %v\n", err)
			return 1
		}
	}
	if *markdown {
		rep.writeMarkdown(markdownOut)
	}
	return 0
}

// runSize generates the graph of n entities and runs every server on it,
// in order, each on a fresh copy of the memory.
func runSize(ctx context.Context, n int, seed uint64, tmp string, servers []*benchServer, s runSettings, progress func(string, ...any)) (*sizeResult, error) {
	progress("N=%d: generating graph", n)
	g, q := testgraph.Generate(n, seed)
	file := filepath.Join(tmp, fmt.Sprintf("graph-%d.jsonl", n))
	if err := writeGraphFile(file, g); err != nil {
		return nil, err
	}
	defer os.Remove(file)
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	sz := &sizeResult{
		N:            n,
		Entities:     len(g.Entities),
		Observations: g.ObservationCount(),
		Relations:    len(g.Relations),
		FileBytes:    info.Size(),
		Runs:         map[string]*RunResult{},
	}
	for _, srv := range servers {
		if ctx.Err() != nil {
			break
		}
		progress("N=%d: %s: %s", n, srv.label, srv.command)
		dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", srv.label, n))
		res, err := runServer(ctx, srv, file, dir, g, q, seed, s, progress)
		if err != nil {
			return nil, err
		}
		sz.Runs[srv.label] = res
	}
	return sz, nil
}

// runServer measures one server on one graph: s.starts timed starts (the
// last one is the session the tools are measured in), then every tool.
func runServer(ctx context.Context, srv *benchServer, graphFile, dir string, g *testgraph.Graph, q testgraph.Queries, seed uint64, s runSettings, progress func(string, ...any)) (*RunResult, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	mem, err := srv.backend.fresh(ctx, graphFile, dir)
	if err != nil {
		return nil, err
	}
	defer mem.remove()
	if mem.describe != "" {
		progress("  %s", mem.describe)
	}
	command := srv.command
	res := &RunResult{LoadBefore: loadAverage(), Store: "file", MemoryNote: mem.describe}
	defer func() { res.LoadAfter = loadAverage() }()
	var backends *backendMemory
	if mem.database != "" {
		res.Store = "postgres"
		backends = watchBackends(mem.database, time.Second)
		defer func() {
			peak := backends.stopWatching()
			res.Backends = &peak
		}()
	}
	w := newWorkload(g, q, seed)

	// startOnce starts the server and times it up to the first successful
	// tools/call answer. The calls only read, so every start sees the
	// same file.
	startOnce := func() (*serverProcess, error) {
		p, err := startServer(ctx, command, mem.env, s.client)
		if err != nil {
			return nil, err
		}
		if _, _, err := p.call(ctx, s.callTimeout, "open_nodes", map[string]any{"names": w.pickNames(3)}); err != nil {
			p.close()
			return nil, fmt.Errorf("first open_nodes: %w", err)
		}
		res.StartSamples = append(res.StartSamples, time.Since(p.started))
		return p, nil
	}
	for range s.starts - 1 {
		p, err := startOnce()
		if err != nil {
			res.Error = err.Error()
			return res, nil
		}
		p.close()
	}
	p, err := startOnce()
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	res.Start = summarize(res.StartSamples)
	progress("  start to first answer: %s (median of %d)", fmtDuration(res.Start.P50), res.Start.Count)

	for _, tc := range w.cases() {
		if ctx.Err() != nil {
			break
		}
		if slices.ContainsFunc(s.skip, func(sk string) bool { return strings.Contains(tc.label, sk) }) {
			continue
		}
		tr := measure(ctx, p, tc, s)
		res.Tools = append(res.Tools, tr)
		status := fmt.Sprintf("p50 %s (last byte %s) over %d calls", fmtDuration(tr.Latency.P50), fmtDuration(tr.Wire.P50), tr.Latency.Count)
		if tr.Errors > 0 {
			status += fmt.Sprintf(", %d errors: %s", tr.Errors, serverproc.FirstLine(tr.FirstError))
		}
		progress("  %-48s %s", tc.label, status)
		if !p.alive() {
			res.Error = "server exited during the run" + p.stderrNote()
			break
		}
	}
	if s.writes > 0 && ctx.Err() == nil && p.alive() {
		progress("  %d one-entity writes, then a fresh server on the memory they left", s.writes)
		res.Writes = measureWrites(ctx, p, command, mem, s.writes, s)
		progress("  RSS after %d writes: %s MB; a fresh server on that memory: %s MB", s.writes, fmtMB(res.Writes.RSSKB), fmtMB(res.Writes.FreshRSSKB))
	}
	if backends != nil {
		backends.sampleNow()
	}
	res.Memory = p.close()
	return res, nil
}

func writeGraphFile(path string, g *testgraph.Graph) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := g.WriteJSONL(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// redactArgs returns a copy of args with every secret replaced by shown.
func redactArgs(args []string, secret, shown string) []string {
	out := slices.Clone(args)
	if secret == shown {
		return out
	}
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, secret, shown)
	}
	return out
}

// parseSizes parses "1000,10k,1M".
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for field := range strings.SplitSeq(s, ",") {
		field = strings.TrimSpace(field)
		mult := 1
		switch {
		case strings.HasSuffix(field, "k"), strings.HasSuffix(field, "K"):
			mult, field = 1000, field[:len(field)-1]
		case strings.HasSuffix(field, "M"), strings.HasSuffix(field, "m"):
			mult, field = 1000000, field[:len(field)-1]
		}
		n, err := strconv.Atoi(field)
		if err != nil || n*mult < 2 {
			return nil, fmt.Errorf("%q is not a size of at least 2 entities", field)
		}
		sizes = append(sizes, n*mult)
	}
	return sizes, nil
}

// loadAverage is the 1-minute load average from /proc/loadavg, or "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(b), " ")
	return first
}
