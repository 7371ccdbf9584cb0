package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// A tool's arguments are checked against its input schema here rather than
// by the schema library alone, whose errors read as
// "validating root: validating /properties/depth: maximum: 3/1 is greater
// than 2.000000". Each problem is told as one sentence that names the
// argument by its path and says what it must be:
//
//	depth must be 0, 1 or 2; got 3
//	entities[0].name is required: a string
//	names[2] must be a string; got 7
//
// The checks know the keywords the input schemas use (type, properties,
// required, items, minimum, maximum); checkSchemaKeywords refuses a schema
// with any other, so a new keyword cannot go unchecked.

// decodeArguments checks raw against schema (the tool's input schema) and
// decodes it into dst. The error is the first problem found, as a
// sentence.
func decodeArguments(raw json.RawMessage, schema *jsonschema.Schema, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("the arguments are not JSON: %v", err)
	}
	if err := checkValue(schema, v, ""); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		// A whole number written with a fraction or an exponent (2.0,
		// 1e1) is an integer to the schema, not to encoding/json.
		b, merr := json.Marshal(wholeNumbers(v))
		if merr != nil || json.Unmarshal(b, dst) != nil {
			return fmt.Errorf("the arguments do not decode: %v", err)
		}
	}
	return nil
}

// wholeNumbers rewrites the whole numbers in v as integers.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, ok := wholeNumber(v); ok {
			return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
		}
	case []any:
		for i := range v {
			v[i] = wholeNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = wholeNumbers(v[k])
		}
	}
	return v
}

// wholeNumber reports whether n is a whole number, as JSON Schema's
// "integer" means it (2.0 is one), and returns it.
func wholeNumber(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// checkValue checks v against s; path names v ("" for the arguments
// themselves).
func checkValue(s *jsonschema.Schema, v any, path string) error {
	var ok bool
	switch s.Type {
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "integer":
		ok = inRange(s, v)
	case "array":
		var list []any
		if list, ok = v.([]any); ok {
			return checkItems(s, list, path)
		}
	case "object":
		var obj map[string]any
		if obj, ok = v.(map[string]any); ok {
			return checkProperties(s, obj, path)
		}
	default:
		panic(fmt.Sprintf("input schema type %q is not checked", s.Type))
	}
	if !ok {
		return fmt.Errorf("%s must be %s; got %s", argName(path), expected(s), shown(v))
	}
	return nil
}

// inRange reports whether v is a whole number within s's bounds.
func inRange(s *jsonschema.Schema, v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, ok := wholeNumber(n)
	return ok && (s.Minimum == nil || f >= *s.Minimum) && (s.Maximum == nil || f <= *s.Maximum)
}

// checkItems checks each item of an array against s.Items.
func checkItems(s *jsonschema.Schema, list []any, path string) error {
	for i, item := range list {
		if err := checkValue(s.Items, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// checkProperties checks that obj has s's required properties, then the
// properties s knows, by name; other properties are left alone.
func checkProperties(s *jsonschema.Schema, obj map[string]any, path string) error {
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("%s is required: %s", join(path, name), expected(s.Properties[name]))
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		if s.Properties[name] != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if err := checkValue(s.Properties[name], obj[name], join(path, name)); err != nil {
			return err
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func argName(path string) string {
	if path == "" {
		return "the arguments"
	}
	return path
}

// expected says in words what s accepts.
func expected(s *jsonschema.Schema) string {
	switch s.Type {
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		return expectedInteger(s.Minimum, s.Maximum)
	case "array":
		item := expected(s.Items)
		switch s.Items.Type {
		case "string":
			item = "strings"
		case "object":
			item = "objects" + strings.TrimPrefix(item, "an object")
		}
		return "an array of " + item
	case "object":
		if len(s.Required) == 0 {
			return "an object"
		}
		return "an object with " + list(s.Required, "and")
	}
	return s.Type
}

// expectedInteger says which whole numbers lie in [min, max]: a few are
// listed ("0, 1 or 2").
func expectedInteger(min, max *float64) string {
	switch {
	case min != nil && max != nil && *max-*min < 5:
		var values []string
		for n := *min; n <= *max; n++ {
			values = append(values, strconv.FormatFloat(n, 'f', -1, 64))
		}
		return list(values, "or")
	case min != nil && max != nil:
		return fmt.Sprintf("a whole number from %g to %g", *min, *max)
	case min != nil:
		return fmt.Sprintf("a whole number of at least %g", *min)
	case max != nil:
		return fmt.Sprintf("a whole number of at most %g", *max)
	}
	return "a whole number"
}

// list joins words as a sentence does: "a, b and c".
func list(words []string, conjunction string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conjunction + " " + words[len(words)-1]
}

// shown is a JSON value as the error quotes it: a short scalar as written,
// a long string cut, an array or object by its kind.
func shown(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case string:
		const max = 40
		if utf8.RuneCountInString(v) > max {
			v = string([]rune(v)[:max]) + "…"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// checkSchemaKeywords panics when s, an input schema, uses a keyword that
// checkValue does not check.
func checkSchemaKeywords(tool string, s *jsonschema.Schema) {
	var walk func(s *jsonschema.Schema, path string)
	walk = func(s *jsonschema.Schema, path string) {
		known := *s
		known.Type, known.Description, known.Properties, known.Required, known.Items, known.Minimum, known.Maximum = "", "", nil, nil, nil, nil, nil
		b, err := json.Marshal(&known)
		if err != nil || string(b) != "true" && string(b) != "{}" {
			panic(fmt.Sprintf("tool %s: input schema at %q uses keywords the argument checks do not know: %s", tool, path, b))
		}
		switch s.Type {
		case "string", "boolean", "integer":
		case "array":
			if s.Items == nil {
				panic(fmt.Sprintf("tool %s: input schema at %q is an array of anything", tool, path))
			}
			walk(s.Items, path+"[]")
		case "object":
			for name, p := range s.Properties {
				walk(p, join(path, name))
			}
		default:
			panic(fmt.Sprintf("tool %s: input schema at %q has type %q, which the argument checks do not know", tool, path, s.Type))
		}
	}
	walk(s, "")
}
