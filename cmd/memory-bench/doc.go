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
// Given again, --vs adds a third server ("theirs2"), and
// so on, each with a ratio column of its own against the first; --vs-load
// then takes one value for all of them or a comma-separated value for each:
//
//	go run ./cmd/memory-bench --sizes 10000 \
//	    --vs 'npx -y @modelcontextprotocol/server-memory@2026.8.31' \
//	    --vs 'node .../@pepk/mcp-memory-sqlite/dist/index.js' --vs-load file,tools
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
//
// # How it runs
//
// run (main.go) is the whole program as a list of steps:
//
//   - parseOptions (flags.go) reads the command line once into options and
//     checks it; the second server's flags (--vs, --postgres, --embeddings)
//     exclude one another.
//   - bench.prepare (main.go) readies what the servers need, cheapest
//     check first: PostgreSQL (postgres.go), the TypeScript client
//     (tsclient.go), our server's build, the stand-in embeddings endpoint
//     (meaning.go); it lists the servers, each with the memoryBackend that
//     gives it a fresh copy of the graph (backend.go, postgres.go,
//     tools.go, meaning.go).
//   - bench.preRunAll starts each server once, untimed (server.go).
//   - bench.runSizes, for each size: runSize generates the graph
//     (internal/testgraph), and runServer measures each server on it in
//     turn: timed starts, every tool case of the workload (workload.go:
//     warm-up calls, then measured ones, each answer checked), then the
//     writes and the fresh server's RSS (writes.go), while the process
//     tree's peak RSS is sampled (memory.go). The text table of the size
//     is printed when it is done (text.go).
//   - at the end, the JSON (json.go) and the markdown (markdown.go).
//
// The text and markdown tables are drawn from one list of rows per size
// (report.rows, report.go): a row per tool case, then a table of
// whole-run rows (start, memory, writes). report.grid lays the rows out
// with the columns each form shows.
package main
