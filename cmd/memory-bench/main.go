package main

import (
	"context"
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
	o, err := parseOptions(args, stderr)
	if err != nil {
		if err.Error() != "" {
			fmt.Fprintf(stderr, "memory-bench: %v\n", err)
		}
		return 2
	}
	if o == nil { // --help
		return 0
	}
	if o.writeGraph != "" {
		return exitStatus(stderr, writeFirstGraph(o))
	}
	b, err := newBench(o, stderr)
	if err != nil {
		return exitStatus(stderr, err)
	}
	defer b.close()
	if err := b.prepare(ctx); err != nil {
		return exitStatus(stderr, err)
	}
	rep := b.newReport()
	if err := b.preRunAll(ctx); err != nil {
		return exitStatus(stderr, err)
	}
	tableOut, markdownOut := o.outputs(stdout, stderr)
	if err := b.runSizes(ctx, rep, tableOut); err != nil {
		return exitStatus(stderr, err)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "memory-bench: interrupted")
		return 130
	}
	if o.jsonOut {
		if err := rep.writeJSON(stdout); err != nil {
			return exitStatus(stderr, fmt.Errorf("writing JSON: %w", err))
		}
	}
	if o.markdown {
		rep.writeMarkdown(markdownOut)
	}
	return 0
}

// exitStatus reports err, if any, and turns it into the exit status.
func exitStatus(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "memory-bench: %v\n", err)
	return 1
}

// outputs says where the text table and the markdown go: stdout unless
// --json or --markdown take it.
func (o *options) outputs(stdout, stderr io.Writer) (table, markdown io.Writer) {
	table, markdown = stdout, stdout
	if o.jsonOut || o.markdown {
		table = stderr
	}
	if o.jsonOut {
		markdown = stderr
	}
	return table, markdown
}

// writeFirstGraph is --write-graph: the graph of the first size, to a file.
func writeFirstGraph(o *options) error {
	g, _ := testgraph.Generate(o.sizes[0], o.seed)
	return writeGraphFile(o.writeGraph, g)
}

// bench is one benchmark run: its servers, its scratch directory and what
// to undo at the end.
type bench struct {
	o        *options
	settings runSettings
	tmp      string
	servers  []*benchServer
	progress func(format string, a ...any)
	undo     []func() // in reverse order at close
}

func newBench(o *options, stderr io.Writer) (*bench, error) {
	tmp, err := os.MkdirTemp("", "memory-bench-")
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, settings: o.settings, tmp: tmp}
	b.progress = func(format string, a ...any) { fmt.Fprintf(stderr, "memory-bench: "+format+"\n", a...) }
	b.undo = append(b.undo, func() { os.RemoveAll(tmp) })
	return b, nil
}

func (b *bench) close() {
	for _, f := range slices.Backward(b.undo) {
		f()
	}
}

// prepare readies everything the servers need, cheapest check first, and
// lists the servers: PostgreSQL (a wrong URL should not wait for the
// build), the TypeScript client, our server's build, then the second
// server of --vs, --postgres or --embeddings.
func (b *bench) prepare(ctx context.Context) error {
	pg, err := b.openPostgres(ctx)
	if err != nil {
		return err
	}
	if err := b.installClient(ctx); err != nil {
		return err
	}
	ours, oursBuilt, err := b.ourServer(ctx)
	if err != nil {
		return err
	}
	b.servers = []*benchServer{{label: "ours", command: ours, built: oursBuilt, backend: fileBackend{}}}
	switch {
	case len(b.o.vs) > 0:
		b.servers = append(b.servers, b.vsServers()...)
	case pg != nil:
		b.servers[0].label = "file"
		b.servers = append(b.servers, &benchServer{label: "postgres", command: ours, built: oursBuilt, backend: pg, where: pg.where})
	case b.o.embeddings != "":
		b.servers[0].label = "off"
		b.servers = append(b.servers, &benchServer{label: "on", command: ours, built: oursBuilt, backend: b.meaningBackend(ours)})
	}
	return nil
}

// vsServers are the --vs servers: "theirs", then "theirs2" and so on.
func (b *bench) vsServers() []*benchServer {
	var servers []*benchServer
	for i, command := range b.o.vs {
		var backend memoryBackend = fileBackend{}
		if b.o.vsLoad[i] == "tools" {
			backend = toolsBackend{command: command, client: b.settings.client, timeout: b.settings.callTimeout}
		}
		label := "theirs"
		if i > 0 {
			label = fmt.Sprintf("theirs%d", i+1)
		}
		servers = append(servers, &benchServer{label: label, command: command, backend: backend})
	}
	return servers
}

// openPostgres opens --postgres, if given.
func (b *bench) openPostgres(ctx context.Context) (*pgBackend, error) {
	if b.o.postgres == "" {
		return nil, nil
	}
	if b.o.postgres == postgresAuto {
		b.progress("PostgreSQL: starting a private cluster")
	}
	pg, err := openPostgres(ctx, b.o.postgres)
	if err != nil {
		return nil, fmt.Errorf("--postgres: %w", err)
	}
	b.undo = append(b.undo, pg.close)
	b.progress("PostgreSQL: %s", pg.where)
	return pg, nil
}

// installClient installs the TypeScript SDK's client for --client ts.
func (b *bench) installClient(ctx context.Context) error {
	if b.o.client != "ts" {
		return nil
	}
	sdk, err := installTSClient(ctx, b.progress)
	if err != nil {
		return fmt.Errorf("--client ts: %w", err)
	}
	c := &b.settings.client
	c.ts = &sdk
	c.protocol = sdk.protocol
	if b.o.protocolSet {
		c.protocol, c.askProtocol = b.o.protocol, b.o.protocol
	}
	b.progress("client: %s, in %s", c.describe(), sdk.dir)
	return nil
}

// ourServer is --cmd, or else our server built into the scratch directory
// (and what was built).
func (b *bench) ourServer(ctx context.Context) (command, built string, err error) {
	if b.o.cmd != "" {
		return b.o.cmd, "", nil
	}
	b.progress("building %s", serverproc.OurServerPackage)
	bin, err := serverproc.BuildOurServer(ctx, b.tmp)
	if err != nil {
		return "", "", err
	}
	return serverproc.ShellQuote(bin), "./cmd/mcp-server-memory built with go build" + serverproc.Version(bin), nil
}

// meaningBackend is our server with search by meaning on, through
// --embeddings: the stand-in endpoint, started here, or a URL.
func (b *bench) meaningBackend(ours string) meaningBackend {
	mb := meaningBackend{command: ours, url: b.o.embeddings, model: b.o.embeddingsModel}
	if mb.url == embeddingsStub {
		stub := startStub()
		b.undo = append(b.undo, stub.Close)
		mb.url, mb.model = stub.BaseURL(), stubModel
		b.progress("search by meaning: the stand-in endpoint at %s", mb.url)
	}
	return mb
}

func (b *bench) newReport() *report {
	return &report{
		Machine:     describeMachine(),
		CommandLine: serverproc.CommandLine("go run ./cmd/memory-bench", append([]string{os.Args[0]}, b.o.reportArgs...)),
		Seed:        b.o.seed,
		Settings:    b.settings,
		Servers:     b.servers,
	}
}

// preRunAll pays one-time costs (npx's download and install, cold caches)
// before anything is timed.
func (b *bench) preRunAll(ctx context.Context) error {
	for _, s := range b.servers {
		b.progress("pre-run %s: %s", s.label, s.command)
		d, err := preRun(ctx, s.command, s.backend, b.tmp, b.settings.client)
		if err != nil {
			return fmt.Errorf("pre-run of %s (%s) failed: %w", s.label, s.command, err)
		}
		s.preRun = d
		b.progress("pre-run %s: first handshake after %s (not counted)", s.label, fmtDuration(d))
	}
	return nil
}

// runSizes runs every size in turn, printing each one's table when done.
func (b *bench) runSizes(ctx context.Context, rep *report, tableOut io.Writer) error {
	for _, n := range b.o.sizes {
		if ctx.Err() != nil {
			break
		}
		sz, err := runSize(ctx, n, b.o.seed, b.tmp, b.servers, b.settings, b.progress)
		if err != nil {
			return fmt.Errorf("N=%d: %w", n, err)
		}
		rep.Sizes = append(rep.Sizes, sz)
		rep.writeTable(tableOut, sz)
	}
	return nil
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
// last one is the session the tools are measured in), then every tool,
// then the writes.
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
	m := &serverRun{ctx: ctx, command: srv.command, mem: mem, w: newWorkload(g, q, seed), s: s, res: res, progress: progress}
	p, err := m.timeStarts()
	if err != nil {
		res.Error = err.Error()
		return res, nil
	}
	m.measureTools(p)
	m.measureWrites(p)
	if backends != nil {
		backends.sampleNow()
	}
	res.Memory = p.close()
	return res, nil
}

// serverRun is one server's run on one graph, as runServer takes it step
// by step.
type serverRun struct {
	ctx      context.Context
	command  string
	mem      *memoryCopy
	w        *workload
	s        runSettings
	res      *RunResult
	progress func(string, ...any)
}

// timeStarts starts the server s.starts times, each timed up to the first
// successful tools/call answer, and returns the last process, still
// running. The calls only read, so every start sees the same memory.
func (m *serverRun) timeStarts() (*serverProcess, error) {
	for i := 1; ; i++ {
		p, err := startServer(m.ctx, m.command, m.mem.env, m.s.client)
		if err != nil {
			return nil, err
		}
		if _, _, err := p.call(m.ctx, m.s.callTimeout, "open_nodes", map[string]any{"names": m.w.pickNames(3)}); err != nil {
			p.close()
			return nil, fmt.Errorf("first open_nodes: %w", err)
		}
		m.res.StartSamples = append(m.res.StartSamples, time.Since(p.started))
		if i == m.s.starts {
			m.res.Start = summarize(m.res.StartSamples)
			m.progress("  start to first answer: %s (median of %d)", fmtDuration(m.res.Start.P50), m.res.Start.Count)
			return p, nil
		}
		p.close()
	}
}

// measureTools measures every tool case not skipped, in order, until the
// server exits or the run is interrupted.
func (m *serverRun) measureTools(p *serverProcess) {
	for _, tc := range m.w.cases() {
		if m.ctx.Err() != nil {
			break
		}
		if slices.ContainsFunc(m.s.skip, func(sk string) bool { return strings.Contains(tc.label, sk) }) {
			continue
		}
		tr := measure(m.ctx, p, tc, m.s)
		m.res.Tools = append(m.res.Tools, tr)
		status := fmt.Sprintf("p50 %s (last byte %s) over %d calls", fmtDuration(tr.Latency.P50), fmtDuration(tr.Wire.P50), tr.Latency.Count)
		if tr.Errors > 0 {
			status += fmt.Sprintf(", %d errors: %s", tr.Errors, serverproc.FirstLine(tr.FirstError))
		}
		m.progress("  %-48s %s", tc.label, status)
		if !p.alive() {
			m.res.Error = "server exited during the run" + p.stderrNote()
			break
		}
	}
}

// measureWrites makes the --writes one-entity writes and compares the
// server's RSS with a fresh server's on the memory they left.
func (m *serverRun) measureWrites(p *serverProcess) {
	n := m.s.writes
	if n == 0 || m.ctx.Err() != nil || !p.alive() {
		return
	}
	m.progress("  %d one-entity writes, then a fresh server on the memory they left", n)
	m.res.Writes = measureWrites(m.ctx, p, m.command, m.mem, n, m.s)
	m.progress("  RSS after %d writes: %s MB; a fresh server on that memory: %s MB", n, fmtMB(m.res.Writes.RSSKB), fmtMB(m.res.Writes.FreshRSSKB))
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
