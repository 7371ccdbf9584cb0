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
//     changed file, runs the mutation (which validates before it changes
//     anything), and saves.
//   - Lock: the exclusive <file>.lock of docs/design.md §6, compatible with
//     reference servers that implement the same protocol.
//   - CheckPath and PathError: what keeps a memory file path from working
//     (a directory, a path under a file, an unwritable directory) and the
//     fix, in words for the user; the server logs it at start, and a Store
//     call that fails because of it returns it.
//   - ResolvePath: MEMORY_FILE_PATH's rules, and a symbolic link followed
//     once to the file it ends at, so that a save renames beside the target
//     and the link stays a link.
//   - Save: atomic and durable. The new content goes to <file>.<32 hex>.tmp
//     in the same directory (rename is only atomic within one file system),
//     is fsynced, renamed over the memory file, and the directory is fsynced
//     so the rename itself survives a crash. A reader sees the whole old
//     file or the whole new one, never a mix.
//
// Caveats: the lock relies on exclusive create (O_EXCL), which local file
// systems honour and some network file systems do not; sharing a file over
// such a file system is not safe. The directory of the memory file must be
// writable, since the lock and the temporary files live there.
package filestore
