// Package filestore keeps the knowledge graph in its memory file on disk and
// lets several processes share that file.
//
// The nouns:
//
//   - Store: one memory file and the graph read from it. Reads (View) take no
//     file lock; they reload the file only when it changed since it was last
//     read (size, modification time, inode), so they always see the latest
//     saved graph.
//   - Update: a read-modify-write under the cross-process Lock. It reloads a
//     changed file, catches up with the journal, runs the mutation (which
//     validates before it changes anything), and, with Options.Journal,
//     appends the record of what the write tools changed to the journal
//     and fsyncs it; any other change (the commands' edits) saves.
//   - Journal: <file>.journal, the append-only record of writes not yet in
//     the file (journal.go; the format is in docs/design.md §5, "The
//     journal"). Its first line names the file it applies to (size and
//     SHA-256); each record carries whole added and removed items, the
//     time and the tool, so it can also serve as history. Readers apply it
//     after the file and, once they hold the memory, read only what was
//     appended since.
//   - Compaction (Compact, and Close at a clean exit, waiting at most 2 s
//     for the lock, and in the background after CompactIdle of quiet or
//     when the journal outgrows a quarter of the file): a save of the
//     whole memory under the lock (durable.Pending), preceded by a
//     "compacting" line naming the new file and its temporary name, then
//     the journal's removal. The stamp it keeps is the temporary file's,
//     taken before the rename; it checks before the line and before the
//     rename that the file at the path is still the one it read, and
//     starts over on another program's file rather than save over it.
//     After a kill at any point a reader tells from the file, those
//     lines and whether their temporary files still exist which records
//     still apply (the journal's states, journalState in store.go).
//   - Lock: the exclusive <file>.lock of docs/design.md §6, compatible with
//     reference servers that implement the same protocol.
//   - CheckPath and PathError: what keeps a memory file path from working
//     (a directory, a path under a file, an unwritable directory) and the
//     fix, in words for the user; the server logs it at start, and a Store
//     call that fails because of it returns it.
//   - ResolvePath: MEMORY_FILE_PATH's rules, and a symbolic link followed
//     once to the file it ends at, so that a save renames beside the target
//     and the link stays a link.
//   - The files (internal/durable): the memory file is replaced through a
//     temporary file, <file>.<32 hex>.tmp in the same directory, fsynced,
//     renamed, the directory fsynced; the journal is appended at the end
//     of its complete lines and fsynced. A reader sees the whole old file
//     or the whole new one, never a mix.
//
// The files by job: store.go (the Store, its states, View, Update),
// load.go (reading the file and the journal, what a journal means),
// journal.go (the journal's format and appends), compact.go (compaction,
// Close), historymove.go (the journal's records to the history), watch.go
// (Watch, Journal), lock*.go and path.go.
//
// Caveats: while a Store has uncompacted writes, the memory file alone is
// behind the memory (by about CompactIdle while it runs; after a crash,
// until the next start or write); View always sees the whole memory. The
// lock relies on exclusive create (O_EXCL), which local file
// systems honour and some network file systems do not; sharing a file over
// such a file system is not safe. The directory of the memory file must be
// writable, since the lock, the journal and the temporary files live there.
package filestore
