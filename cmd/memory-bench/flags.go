package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// options is the command line, read once.
type options struct {
	sizes           []int
	cmd             string
	vs              []string // the second server and any after it, in order
	vsLoad          []string // "file" or "tools", one per --vs
	postgres        string   // parsed --postgres: postgresAuto or a URL
	embeddings      string
	embeddingsModel string
	seed            uint64
	client          string // "go" or "ts"
	protocol        string
	protocolSet     bool // --protocol was given
	jsonOut         bool
	markdown        bool
	writeGraph      string
	settings        runSettings
	reportArgs      []string // the arguments as the report shows them (secrets redacted)
}

// usageError is a command line that cannot run: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// parseOptions reads the command line. It returns a nil error and nil
// options for --help.
func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("memory-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	sizesFlag := fs.String("sizes", "1000,10000", "graph sizes N (entities) to run, comma-separated; k and M suffixes allowed (1k, 1M)")
	cmdFlag := fs.String("cmd", "", "server command to measure, run with sh -c (default: go build ./cmd/mcp-server-memory and run it)")
	var vs []string
	fs.Func("vs", "second server `command` to compare against, e.g. 'npx -y @modelcontextprotocol/server-memory@2026.8.31'; given again, a third server (theirs2), and so on, each compared with the first", func(s string) error {
		if s != "" { // as with one --vs: "" is none
			vs = append(vs, s)
		}
		return nil
	})
	iters := fs.Int("iters", 30, "measured calls per tool at most")
	minIters := fs.Int("min-iters", 5, "measured calls per tool at least, even past --budget")
	budget := fs.Duration("budget", 20*time.Second, "stop measuring a tool once --min-iters calls are done and this much time has passed")
	warmups := fs.Int("warmups", 2, "unmeasured warm-up calls per tool")
	gap := fs.Duration("gap", 0, "pause this long before each measured call, so that each comes alone, as an assistant's calls do, rather than right after the answer to the last (a server busy in the background may answer the two differently)")
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
	vsLoad := fs.String("vs-load", "file", "how the --vs server gets the generated graph: 'file' (a copy at MEMORY_FILE_PATH) or 'tools' (a fresh HOME, loaded through its own create_entities and create_relations; see above); with several --vs, one value for all or a comma-separated value for each")
	postgresFlag := fs.String("postgres", "", "also run the server with its memory in PostgreSQL, beside the file, and print PostgreSQL/file ratios: 'auto' starts a private throwaway cluster, or a postgres:// URL of a server where the benchmark may create and drop databases (a new database per run, dropped after); --cmd, if set, must take MEMORY_DATABASE_URL as this server does")
	embeddingsFlag := fs.String("embeddings", "", "also run the server with search by meaning on, beside it off, and print on/off ratios: 'stub' starts the project's stand-in endpoint (hashed words, no model) in this process, or the base URL of an OpenAI-compatible API (with --embeddings-model; a key as the server reads it); each run's vectors are computed before it by the server's embed command")
	embeddingsModel := fs.String("embeddings-model", "", "the model with --embeddings URL")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, usageError{} // the flag package has said why
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q (flags only; see --help)", fs.Arg(0))
	}
	o := &options{
		cmd: *cmdFlag, vs: vs, embeddings: *embeddingsFlag, embeddingsModel: *embeddingsModel,
		seed: *seed, client: *clientFlag, protocol: *protocol, jsonOut: *jsonOut, markdown: *markdown,
		writeGraph: *writeGraph, reportArgs: args,
		settings: runSettings{
			iters:       *iters,
			minIters:    min(*minIters, *iters),
			budget:      *budget,
			gap:         *gap,
			warmups:     *warmups,
			callTimeout: *callTimeout,
			starts:      *starts,
			writes:      *writes,
			skip:        splitList(*skip),
			client:      clientOptions{protocol: *protocol},
		},
	}
	fs.Visit(func(f *flag.Flag) { o.protocolSet = o.protocolSet || f.Name == "protocol" })
	var err error
	if o.sizes, err = parseSizes(*sizesFlag); err != nil {
		return nil, usagef("--sizes: %v", err)
	}
	if *iters < 1 || *minIters < 1 || *starts < 1 || *warmups < 0 || *writes < 0 || *gap < 0 {
		return nil, usagef("--iters, --min-iters and --starts must be at least 1, --warmups, --writes and --gap at least 0")
	}
	if err := o.checkSecondServer(*postgresFlag, *vsLoad); err != nil {
		return nil, err
	}
	return o, nil
}

// checkSecondServer checks the flags that choose the client and the second
// server (--client, --vs, --vs-load, --postgres, --embeddings), which
// exclude one another.
func (o *options) checkSecondServer(postgresFlag, vsLoad string) error {
	if o.client != "go" && o.client != "ts" {
		return usagef("--client: %q is neither 'go' nor 'ts'", o.client)
	}
	if err := o.checkVsLoad(vsLoad); err != nil {
		return err
	}
	if err := o.checkPostgres(postgresFlag); err != nil {
		return err
	}
	return o.checkEmbeddings(postgresFlag != "")
}

// checkVsLoad reads --vs-load into a value per --vs server: one value
// for all, or one each.
func (o *options) checkVsLoad(vsLoad string) error {
	loads := strings.Split(vsLoad, ",")
	for _, l := range loads {
		if l != "file" && l != "tools" {
			return usagef("--vs-load: %q is neither 'file' nor 'tools'", l)
		}
	}
	if slices.Contains(loads, "tools") && len(o.vs) == 0 {
		return usagef("--vs-load tools needs --vs, the server to load")
	}
	switch {
	case len(loads) == 1:
		for range o.vs {
			o.vsLoad = append(o.vsLoad, loads[0])
		}
	case len(loads) == len(o.vs):
		o.vsLoad = loads
	default:
		return usagef("--vs-load: %d values for %d --vs servers (give one for all, or one each)", len(loads), len(o.vs))
	}
	return nil
}

// checkPostgres parses --postgres, which excludes --vs, and redacts its
// password from the command line the report shows.
func (o *options) checkPostgres(postgresFlag string) error {
	if postgresFlag == "" {
		return nil
	}
	if len(o.vs) > 0 {
		return usagef("--postgres and --vs both name the second server; run them one at a time")
	}
	var err error
	if o.postgres, err = parsePostgresFlag(postgresFlag); err != nil {
		return usagef("--postgres: %v", err)
	}
	o.reportArgs = redactArgs(o.reportArgs, postgresFlag, redactURL(o.postgres))
	return nil
}

// checkEmbeddings checks --embeddings, which excludes --vs and --postgres,
// against --embeddings-model.
func (o *options) checkEmbeddings(postgres bool) error {
	switch {
	case o.embeddings == "":
		return nil
	case len(o.vs) > 0 || postgres:
		return usagef("--embeddings, --vs and --postgres each name the second server; run them one at a time")
	case o.embeddings == embeddingsStub && o.embeddingsModel != "":
		return usagef("--embeddings stub serves its own model; --embeddings-model is for a URL")
	case o.embeddings != embeddingsStub && o.embeddingsModel == "":
		return usagef("--embeddings URL needs --embeddings-model NAME")
	}
	return nil
}

// splitList splits a comma-separated list, dropping blank items.
func splitList(s string) []string {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
