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
//
// # How it runs
//
// run (main.go) is the whole program as a list of steps:
//
//   - parseOptions reads the command line once into options;
//   - loadSet reads the evaluation set strictly (evalset.go), and
//     chooseQuestions keeps the questions --memory and --questions select;
//   - servers lists ours (built unless --cmd) and the --vs server;
//   - askEveryMemory asks, memory by memory, every server the memory's
//     questions on a fresh copy of its file (askAll; server.go starts the
//     server, meaning.go waits for search by meaning's vectors), and
//     judges each answer (metrics.go: rank, evidence, bytes);
//   - summarize scores the groups: per memory, per language, all, and per
//     kind of question (report.go);
//   - writeReports prints the table, the markdown and the JSON
//     (report.go).
//
// The memories of the set that are generated rather than written by hand
// come from evalgen (cmd/memory-eval/evalgen).
package main
