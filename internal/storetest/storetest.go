// Package storetest is the contract every memory store keeps
// (docs/design.md §1–§3 and §6 as the server relies on them), as one suite of
// tests run against each store: the file store and the PostgreSQL store pass
// the same tests.
//
// A store runs the graph's tool methods under Update and shows the graph
// under View. The suite checks what a user of the server would notice:
// every tool rule of docs/design.md §2 holds through the store, and what one
// call wrote is what the next call, or another process, reads; a failed call
// writes nothing; graph order and unknown members (Extra) survive storage;
// another instance on the same memory is told of changes, and not of its
// own; concurrent writers through several instances lose nothing.
package storetest
