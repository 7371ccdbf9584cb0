// Command evalgen writes the long memories of the evaluation set: two chat
// logs of a few hundred dated messages each, stored one entity per message
// as a client would store them (no relations), and a memory of the four
// people in them, each one entity holding some three hundred facts, with
// the questions about all three.
//
// The messages are composed from the hand-written pools in events.go and
// filler.go with a fixed seed, so the output is the same on every run:
//
//	go run ./cmd/memory-eval/evalgen -out testdata/eval
//
// writes memories/chat-a.jsonl, memories/chat-b.jsonl, memories/people.jsonl
// and questions-generated.jsonl. Commit what it writes.
//
// # How it runs
//
// main (main.go) writes each chat of chats2 and then the people memory.
// chat.generate writes one chat on a chatLog: schedule shuffles every
// event's items (events.go), then session after session (an opener, small
// talk from filler.go, the next events with playEvent, a closer) until
// every event is told and the chat is long enough; keepSayings and
// addProfiles add the people's other facts.
package main
