// Package meaning is search by meaning: optional, off unless an
// OpenAI-compatible embeddings endpoint is configured
// (memoryconfig.Embeddings).
//
// Its nouns:
//
//   - Client asks the endpoint for the vectors of texts (client.go).
//   - A text is what one vector stands for: an entity's name and type and
//     one of its observations (an entity with none has one text). Search
//     shows its evidence per observation, so per-observation vectors let
//     it show the observation that matched first; and adding a fact to a
//     big entity embeds that fact only, where a vector per entity would
//     embed the whole entity again, past what small models read.
//   - A Storage keeps each text's vector, quantised to int8, keyed by
//     model and text hash, so a restart asks for nothing again and a new
//     model asks for everything again (storage.go): the vectors file beside
//     the memory file (FileStorage, VectorsPath; vectors.go), or a table in
//     PostgreSQL that the replicas of a memory share (pgstore's Vectors).
//     docs/embeddings.md gives both formats and the memory they take.
//   - Index holds the vectors, embeds what lacks one in the background
//     after writes (Run, Changed), one batch at a time among the servers
//     sharing its Storage (Storage.Exclusive), and ranks a query by words
//     and meaning (Search). It keeps each entity's text keys between
//     passes, so a pass hashes the texts of the entities changed since
//     the last only (graph.Entity.Revision). One Index per open memory;
//     Release drops its vectors when the memory closes.
//
// Search (search.go) fuses the word ranking with similarity, each
// weighed by what it knows, with a floor below which nothing counts as
// found by meaning; Query (query.go) asks for a query's vector, at most
// maxAsking at once, and refuses vectors of another length than the
// model's. The Client follows no redirect away from the configured
// origin and bounds the bytes it reads.
//
// A write never waits for the model: Changed only wakes Run. A query
// whose vector does not come within QueryTimeout is answered by words.
package meaning
