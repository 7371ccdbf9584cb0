package server

import (
	"github.com/google/jsonschema-go/jsonschema"
)

// The schemas are written out rather than inferred from Go types: inference
// makes slices nullable and every non-omitempty field required, while
// clients expect exactly the reference's schemas (docs/design.md §2).

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func array(items *jsonschema.Schema, desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: items, Description: desc}
}

func object(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

// closed forbids properties the schema does not list, as the reference's
// output schemas do.
func closed(s *jsonschema.Schema) *jsonschema.Schema {
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s
}

func entitySchema() *jsonschema.Schema {
	return object(map[string]*jsonschema.Schema{
		"name":         str("The name of the entity"),
		"entityType":   str("The type of the entity"),
		"observations": array(str(""), "An array of observation contents associated with the entity"),
	}, "name", "entityType", "observations")
}

func relationSchema() *jsonschema.Schema {
	return object(map[string]*jsonschema.Schema{
		"from":         str("The name of the entity where the relation starts"),
		"to":           str("The name of the entity where the relation ends"),
		"relationType": str("The type of the relation"),
	}, "from", "to", "relationType")
}

// graphOutputSchema is the read tools' result: the reference's, with what
// docs/design.md §8 adds as optional members. An outline's entities have
// observationCount instead of observations; an entity shown in part says
// how many observations it leaves out; a cut answer has nextCursor; with
// showTimes, entities and relations say when they were written.
func graphOutputSchema() *jsonschema.Schema {
	count := &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0)}
	entity := object(map[string]*jsonschema.Schema{
		"name":                str("The name of the entity"),
		"entityType":          str("The type of the entity"),
		"observations":        array(str(""), "An array of observation contents associated with the entity"),
		"observationCount":    count,
		"omittedObservations": count,
		"createdAt":           str("When the entity was first written (showTimes)"),
		"updatedAt":           str("When the entity last changed, if not when it was first written (showTimes)"),
		"observationTimes": array(&jsonschema.Schema{Types: []string{"string", "null"}},
			"When each observation shown was written, in order; null: unknown (showTimes)"),
	}, "name", "entityType")
	relation := relationSchema()
	relation.Properties["createdAt"] = str("When the relation was first written (showTimes)")
	return closed(object(map[string]*jsonschema.Schema{
		"entities":   array(closed(entity), ""),
		"relations":  array(closed(relation), ""),
		"nextCursor": str("Pass as cursor to get the next part of the answer"),
		"omittedRelations": &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0),
			Description: "How many relations of the entities a search leaves out (open_nodes with depth 1 shows them)"},
	}, "entities", "relations"))
}

// omittedSchema is a write tool's count of the items its answer leaves
// out to fit the answer limit (internal/answer).
func omittedSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Description: "How many items the answer leaves out to fit the answer limit (all were done)"}
}

func deleteOutputSchema(extra map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	props := map[string]*jsonschema.Schema{
		"success": {Type: "boolean"},
		"message": {Type: "string"},
		"omitted": omittedSchema(),
	}
	for k, v := range extra {
		props[k] = v
	}
	return closed(object(props, append([]string{"success", "message"}, required...)...))
}
