// Package durable writes the files that hold a memory's content (the memory
// file, its journal, its history, its vectors) so that what it reports as
// written survives a crash, and nothing else is left behind:
//
//   - Replace swaps a file's whole content through a temporary file in the
//     same directory (<name>.<32 hex>.tmp): write, fsync, rename, fsync the
//     directory. A reader sees the old file or the new one, never a mix; a
//     failed replace leaves the old file and no temporary file. Each replace
//     also removes the temporaries of that file older than a minute, which a
//     killed writer left. Pending splits a replace in two steps for a
//     caller that must act between the new content being durable and its
//     rename (the journal's compacting line), and hands back the identity of
//     the file written, taken from the file itself, never from what sits at
//     the path later.
//   - AppendAt writes at the end of a file's known content, cutting off a
//     torn tail a killed writer left, and fsyncs; a new file's name is made
//     durable with a directory fsync.
//   - Mode is the mode companions take: the memory file's current mode
//     (0600 when it has none yet). Every write gives the file that mode
//     again, so a companion never stays more readable than the memory file
//     after its owner narrows it.
//
// Caveat: the directory must be on a local file system that honours rename
// and exclusive create; network file systems may not.
package durable
