// Package jsonl is the memory-file codec: a tolerant reader and a byte-exact
// writer for the JSON Lines file the memory server keeps its graph in.
//
// The file holds one JSON object per line, entities first and then
// relations, each in graph order:
//
//	{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme"]}
//	{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at"}
//
// The writer produces exactly the bytes the reference Node server
// (@modelcontextprotocol/server-memory) writes for the same graph, JSON.stringify
// escaping included (but for the times below, which the reference does not
// write), so both servers can share one file and a rewrite of an
// unchanged graph changes nothing; unlike the reference it ends every line,
// the last one too, with "\n".
//
// It also reads the line of a write's record (graph.Record), the line of the
// file store's journal and of a history file (record.go). The lines
// themselves, an entity's, a relation's and a record's, are written by
// package graph (graph.AppendEntity, graph.AppendRelation,
// graph.AppendRecord), which a store calls without this package.
//
// Times. This server also records when it wrote each fact, in members the
// reference ignores, after the reference's members and before any other
// member the line has:
//
//	{"type":"entity","name":"Alice","entityType":"person","observations":["Works at Acme","Likes tea"],
//	 "createdAt":"2026-11-30T09:15:00Z","updatedAt":"2026-12-01T10:00:00Z",
//	 "observationTimes":["2026-11-30T09:15:00Z",1,"2026-12-01T10:00:00Z",1],"observationsHash":"82f747e6"}
//	{"type":"entity","name":"Acme","entityType":"company","observations":["Makes anvils"],
//	 "createdAt":"2026-11-30T09:15:00Z","observationsHash":"10d95ea4"}
//	{"type":"relation","from":"Alice","to":"Acme","relationType":"works_at","createdAt":"2026-11-30T09:15:00Z"}
//
// (one line each in the file). Times are UTC, RFC 3339, to the second. A
// member that is absent means unknown, and so does null: a line without
// times (the reference's, or an old one) has unknown times, and nothing is
// ever made up for it. "updatedAt" is written only when it differs from
// "createdAt" (absent: the same; null: unknown). A member of one of these
// names that does not hold what this server writes (another tool's, say
// "createdAt":"2024-05-01") is not a time: it is kept as it is, like any
// member this server does not know, the time it would hold is unknown, and
// this server does not write that member on that line.
//
// The observations' times are written only when some is known, and count
// only while "observationsHash" is the hash of the observations list they
// were written for (FNV-1a, 32 bits, over each observation's UTF-8 bytes
// followed by the byte 0xFF, as eight lowercase hex digits): a tool or a
// person that edits the list without knowing about the times makes every
// observation time of that entity read as unknown, never as another
// observation's (and the stale members are dropped on the next write).
// "observationTimes" holds runs, a time (or null) and how many observations
// in a row were written then, in order, counting every observation; without
// it (the hash alone) every observation was written at "createdAt", the
// common case, which costs no more bytes per observation. The reference
// drops all of these when it rewrites the file: only times are lost, never
// facts.
//
// The reader never fails and loses nothing: it accepts CRLF line ends, blank
// lines and a UTF-8 byte order mark, keeps members it does not know
// (Entity.Extra, Relation.Extra) and hands back every line it cannot use
// verbatim, with a Problem saying why, so the next save writes it back.
//
// Files reach hundreds of megabytes, so both directions are hand-written
// rather than built on encoding/json's reflection. The reader scans each line
// once and keeps only the text the graph holds: names and observations
// copied end to end into large blocks, each type once, relation ends as
// their entities' names; none of the file's bytes stay in memory once their
// lines are loaded. For a big file it parses chunks on one goroutine per
// core while the caller's loads the graph. Write has graph encode each line
// (graph.AppendString copies runs of bytes that need no escaping, eight at a
// time), or writes the line a store cached (Entity.EncodedLine).
package jsonl

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Problem is a line of the memory file the reader could not use, or merged.
type Problem struct {
	Line   int         // 1-based
	Kind   ProblemKind // what happened to the line
	Reason string      // what is wrong, without the line number
}

// ProblemKind says what the reader did with a line it reports: kept it out
// of the graph, or read it into the graph in a form the next save writes
// differently. Callers decide by kind, never by the words of Reason.
type ProblemKind int

const (
	// Unreadable: the line is not an entity or relation the reader can
	// use. It is kept verbatim (File.Unreadable) and written back as it is.
	Unreadable ProblemKind = iota
	// MergedEntity: a second line for an entity name, merged into the
	// first (its observations united; its type and other members dropped).
	MergedEntity
	// DroppedRelation: a relation already read, dropped.
	DroppedRelation
	// RepeatedObservations: an entity line holds an observation more than
	// once; the graph keeps the first of each.
	RepeatedObservations
)

// Lossless reports whether the reader kept everything the line said that
// the graph can hold: the merge rules of the file format, applied by the
// next save. Only an unreadable line is not.
func (k ProblemKind) Lossless() bool { return k != Unreadable }

// String returns the problem as it is reported: "line 7: not JSON: ...".
func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Reason) }

// File is a decoded memory file.
type File struct {
	Graph *graph.Graph
	// Unreadable holds the lines kept out of the graph, verbatim (without
	// the line end), in file order: pieces of the bytes Decode read. Write
	// writes them back after the relations, so a line this server cannot
	// read survives a save.
	Unreadable [][]byte
	// Problems has one entry per unreadable line, and one per merged
	// duplicate entity or dropped duplicate relation, in line order.
	Problems []Problem

	relationLines lineRuns // while loading: the line of each relation loaded
}

// Write writes the memory file for g to w: entity lines in graph order,
// then relation lines, then the unreadable lines unchanged, "\n" after every
// line. It streams: memory stays flat however big the graph.
//
// It writes an entity's cached line (EncodedLine) where a store set one
// and encodes the other lines; it changes nothing in g, so a reader of the
// graph (a View) may call it. It caches nothing: the lines of a big graph
// would hold the whole file in memory a second time, to save an encoding
// that costs a fraction of writing and syncing the file.
func Write(w io.Writer, g *graph.Graph, unreadable [][]byte) error {
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil) // let go of w
		writers.Put(bw)
	}()
	var line []byte
	for _, e := range g.Entities() {
		if cached := e.EncodedLine(); cached != nil {
			bw.Write(cached)
		} else {
			line = graph.AppendEntity(line[:0], e)
			bw.Write(line)
		}
		bw.WriteByte('\n')
	}
	for _, r := range g.Relations() {
		line = graph.AppendRelation(line[:0], r)
		bw.Write(line)
		bw.WriteByte('\n')
	}
	for _, line := range unreadable {
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush() // bufio keeps the first write error
}

// writers holds the 1 MiB buffers Write writes through: a server saves
// after every small write, and a fresh megabyte each time is garbage the
// collector must clear.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}
