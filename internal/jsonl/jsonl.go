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
// escaping included, so both servers can share one file and a rewrite of an
// unchanged graph changes nothing; unlike the reference it ends every line,
// the last one too, with "\n".
//
// The reader never fails and loses nothing: it accepts CRLF line ends, blank
// lines and a UTF-8 byte order mark, keeps members it does not know
// (Entity.Extra, Relation.Extra) and hands back every line it cannot use
// verbatim, with a Problem saying why, so the next save writes it back.
//
// Files reach hundreds of megabytes, so both directions are hand-written
// rather than built on encoding/json's reflection: the reader scans each line
// once and allocates one string per line for the text it keeps, and for a big
// file it parses on a second goroutine while the caller's loads the graph;
// the writer copies runs of bytes that need no escaping, eight at a time, and
// reuses the lines the graph has cached for what did not change.
package jsonl

import (
	"bytes"
	"fmt"

	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// Problem is a line of the memory file the reader could not use, or merged.
type Problem struct {
	Line   int    // 1-based
	Reason string // what is wrong, without the line number
}

// String returns the problem as it is reported: "line 7: not JSON: ...".
func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Reason) }

// File is a decoded memory file.
type File struct {
	Graph *graph.Graph
	// Unreadable holds the lines kept out of the graph, verbatim (without
	// the line end), in file order. Encode writes them back after the
	// relations, so a line this server cannot read survives a save.
	Unreadable [][]byte
	// Problems has one entry per unreadable line, and one per merged
	// duplicate entity or dropped duplicate relation, in line order.
	Problems []Problem
}

// Encode appends the memory file for g to buf: entity lines in graph order,
// then relation lines, then the unreadable lines unchanged, "\n" after every
// line.
//
// It uses each entity's and relation's cached EncodedLine when non-nil and
// fills the cache (SetEncodedLine) when nil, so a save re-encodes only what
// changed. Filling the cache writes to the graph: Encode must not run
// concurrently with any other use of g. The cached lines are copies, so buf
// may be reused for the next save.
func Encode(buf []byte, g *graph.Graph, unreadable [][]byte) []byte {
	for _, e := range g.Entities() {
		if line := e.EncodedLine(); line != nil {
			buf = append(buf, line...)
		} else {
			start := len(buf)
			buf = AppendEntity(buf, e)
			e.SetEncodedLine(bytes.Clone(buf[start:]))
		}
		buf = append(buf, '\n')
	}
	for _, r := range g.Relations() {
		if line := r.EncodedLine(); line != nil {
			buf = append(buf, line...)
		} else {
			start := len(buf)
			buf = AppendRelation(buf, r)
			r.SetEncodedLine(bytes.Clone(buf[start:]))
		}
		buf = append(buf, '\n')
	}
	for _, line := range unreadable {
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	return buf
}

// AppendEntity appends e's line of the memory file, without the line end:
// the known members in the reference's order, then e.Extra.
func AppendEntity(buf []byte, e *graph.Entity) []byte {
	buf = append(buf, `{"type":"entity","name":`...)
	buf = AppendString(buf, e.Name)
	buf = append(buf, `,"entityType":`...)
	buf = AppendString(buf, e.EntityType)
	buf = append(buf, `,"observations":[`...)
	for i, o := range e.Observations {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = AppendString(buf, o)
	}
	buf = append(buf, ']')
	buf = append(buf, e.Extra...)
	return append(buf, '}')
}

// AppendRelation appends r's line of the memory file, without the line end:
// the known members in the reference's order, then r.Extra.
func AppendRelation(buf []byte, r *graph.Relation) []byte {
	buf = append(buf, `{"type":"relation","from":`...)
	buf = AppendString(buf, r.From)
	buf = append(buf, `,"to":`...)
	buf = AppendString(buf, r.To)
	buf = append(buf, `,"relationType":`...)
	buf = AppendString(buf, r.RelationType)
	buf = append(buf, r.Extra...)
	return append(buf, '}')
}
