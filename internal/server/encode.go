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

// The write tools' results list what a call did. When that list does not
// fit the answer limit (fit.go), the result lists its first items and
// "omitted" counts the rest.

func writeOmitted(w *answer.JSON, omitted int) {
	if omitted > 0 {
		w.Key("omitted")
		w.Int(omitted)
	}
}

func writeCreatedEntities(res graph.CreateEntitiesResult, omitted int) func(*answer.JSON) {
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
		writeOmitted(w, omitted)
		w.Close('}')
	}
}

func writeCreatedRelations(res graph.CreateRelationsResult, omitted int) func(*answer.JSON) {
	return func(w *answer.JSON) {
		w.Open('{')
		w.Key("relations")
		w.Open('[')
		for i := range res.Relations {
			w.Relation(&res.Relations[i])
		}
		w.Close(']')
		writeOmitted(w, omitted)
		w.Close('}')
	}
}

func writeAddedObservations(res graph.AddObservationsResult, omitted int) func(*answer.JSON) {
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
		writeOmitted(w, omitted)
		w.Close('}')
	}
}

func writeDeleted(res graph.DeleteResult, omitted int) func(*answer.JSON) {
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
		writeOmitted(w, omitted)
		w.Close('}')
	}
}
