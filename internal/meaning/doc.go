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
//   - The vectors file, beside the memory file (VectorsPath), keeps each
//     text's vector, quantised to int8, keyed by model and text hash, so a
//     restart asks for nothing again and a new model asks for everything
//     again (vectors.go; docs/embeddings.md gives the format and the
//     memory it takes).
//   - Index holds the vectors, embeds what lacks one in the background
//     after writes (Run, Changed), and ranks a query by words and meaning
//     (Search).
//
// A write never waits for the model: Changed only wakes Run. A query
// whose vector does not come within QueryTimeout is answered by words.
package meaning
