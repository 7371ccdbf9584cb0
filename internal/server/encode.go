package server

import (
	"github.com/kgmemory/mcp-server-memory/internal/answer"
	"github.com/kgmemory/mcp-server-memory/internal/graph"
)

// The results of the write tools and the resource, written with the
// answer package's JSON writer (the read tools' answers are laid out by
// the answer package itself).

func writeSelection(sel graph.Selection) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("entities")
		w.Open('[')
		for _, e := range sel.Entities {
			w.Entity(e.Name, e.EntityType, e.Observations)
		}
		w.Close(']')
		w.Key("relations")
		w.Open('[')
		for _, r := range sel.Relations {
			w.Relation(r)
		}
		w.Close(']')
		w.Close('}')
	}
}

func writeCreatedEntities(res graph.CreateEntitiesResult) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("entities")
		w.Open('[')
		for _, e := range res.Entities {
			w.Entity(e.Name, e.EntityType, e.Observations)
		}
		w.Close(']')
		if len(res.Skipped) > 0 {
			w.Key("skipped")
			w.Strings(res.Skipped)
		}
		w.Close('}')
	}
}

func writeCreatedRelations(res graph.CreateRelationsResult) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("relations")
		w.Open('[')
		for i := range res.Relations {
			w.Relation(&res.Relations[i])
		}
		w.Close(']')
		w.Close('}')
	}
}

func writeAddedObservations(res graph.AddObservationsResult) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("results")
		w.Open('[')
		for _, r := range res.Results {
			w.Open('{')
			w.Key("entityName")
			w.String(r.EntityName)
			w.Key("addedObservations")
			w.Strings(r.AddedObservations)
			w.Close('}')
		}
		w.Close(']')
		w.Close('}')
	}
}

func writeDeleted(res graph.DeleteResult) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("success")
		w.Bool(res.Success)
		w.Key("message")
		w.String(res.Message)
		if len(res.NotFound) > 0 {
			w.Key("notFound")
			w.Strings(res.NotFound)
		}
		if res.DeletedCount != nil {
			w.Key("deletedCount")
			w.Int(*res.DeletedCount)
		}
		w.Close('}')
	}
}
