// Package pgstore keeps named memories in PostgreSQL, so several replicas of
// the server can serve one memory (docs/design.md §11). A Store has the
// method set of filestore.Store (View, Update, Watch), so the server does not
// know which one it holds.
//
// The nouns:
//
//   - DB: one database, its connection pool and its schema, created and
//     migrated by Connect (the table memory_schema_version says how far).
//     One database holds any number of memories.
//   - Memory row: one row of the table memories per named memory, with a
//     revision that counts its committed changes and the next sequence
//     number to hand out.
//   - Lines: every entity and relation is one row holding its memory-file
//     line (internal/jsonl's encoding, Extra members included), a sequence
//     number that keeps graph order, and the revision that last wrote it.
//     Rows are keyed by the SHA-256 of the entity's name or the relation's
//     triple, which fits an index whatever the name's length. Lines are
//     stored as bytea: a name may hold a NUL, and Extra members arrive
//     verbatim from a file, neither of which a text column takes. The
//     columns created_at (and, for entities, updated_at) repeat the times
//     the line holds (NULL: unknown), for queries; the line stays the
//     truth. The table memory_removed remembers which rows the last 4096
//     writes removed.
//   - Store: one memory and the graph last read from it, cached. View asks
//     the database for the revision (one small query) and, only when it
//     moved, catches up: it reads the rows written since its revision and
//     the removals since, and applies them to the graph with the tools' own
//     operations, checking the result row by row; a Store further behind,
//     or whose check fails, reads the memory whole (its rows through COPY's
//     binary format, a big memory's two tables side by side over two
//     connections, sorted by seq in the Store, decoded where they lie, in
//     blocks mapped outside the Go heap and given back as they are decoded).
//     One View or write of a Store catches up at a time; the others wait
//     for it.
//     Beside the graph a Store keeps, per row, its key, seq, a 64-bit sum
//     of its line and the entity or relation it holds, not the line. So a
//     reader always sees the latest committed graph, and search runs on the
//     cached graph with the same ranking code as the file store, giving the
//     same answers.
//   - Update: one transaction. It locks the memory row (SELECT … FOR
//     UPDATE), catches up if another writer moved the revision, runs the
//     mutation (which validates before it changes anything: an error writes
//     nothing), writes only the rows that changed, bumps the revision, sends
//     NOTIFY, commits. The rows that changed are found from the write's
//     record when it only adds or deletes observations and creates or
//     deletes entities and relations (recorded.go); any other write (a
//     rename, an undo, a name deleted and created again) walks every row.
//   - Watch: LISTEN on one channel, one connection per DB; a notification
//     names the memory, the revision and the writer, so a Store hears the
//     writes of every other Store (another replica, another process) and
//     not its own.
//   - Vectors: search by meaning's vectors of a memory, in the table
//     memory_vectors (vectors.go), which its replicas share.
//
// Why a row lock and not serializable isolation or an advisory lock: a write
// must read the revision and bump it anyway, and locking the row it is about
// to write costs nothing more. It serialises the writers of one memory only,
// never blocks readers (they take no lock), needs no retry loop (a
// serializable transaction would have to run the mutation again after a
// conflict), and is released by COMMIT, ROLLBACK or the death of the
// connection, so a crashed replica never leaves a memory locked. A
// transaction-level advisory lock would give the same exclusion, but in a key
// space shared with every other application of the database, beside a row
// lock we would take anyway. Waiting writers give up after LockTimeout
// (60 s, as the file lock of docs/design.md §6) with ErrLockTimeout.
//
// Guarantees: a write is all or nothing; a write that was acknowledged is
// committed (as durable as the database is configured to make it); writers on
// any number of replicas lose nothing, and every Store sees the latest
// committed graph on its next call. Connection loss fails the call in
// progress with an error (nothing half-written: the transaction rolls back)
// and the next call reconnects. Not guaranteed: a write whose COMMIT was cut
// off may or may not have landed (the error says so); notifications are sent
// at commit and may be lost while the listening connection reconnects,
// after which each Watch compares the revision and reports a change it
// missed.
//
// Caveats: a Store that fell more than 4096 writes behind reads the whole
// memory, which takes about a second per 100k entities (see the
// benchmarks). Rows keep graph order by their sequence numbers: a rename
// (from the commands or the web page; no tool renames) gives the entity and
// its relations new keys in the places of the old ones, so it writes just
// those rows and other Stores catch up with them (at 100k entities about
// 0.2 s for the write and the other Store's catch-up, BenchmarkRename). A
// merge writes as few rows, but other Stores read the memory whole after
// it.
package pgstore
