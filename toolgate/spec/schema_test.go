package spec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// withBody returns a document of the given version whose one operation,
// POST /a, takes body and returns it, with the schemas as components.
func withBody(version, body, schemas string) string {
	if version == "2.0" {
		return fmt.Sprintf(`{"swagger": "2.0", "info": {"title": "t", "version": "1"},
		  "paths": {"/a": {"post": {"operationId": "a",
		    "parameters": [{"in": "body", "name": "body", "schema": %s}],
		    "responses": {"200": {"description": "ok", "schema": %s}}}}},
		  "definitions": {%s}}`, body, body, schemas)
	}
	return fmt.Sprintf(`{"openapi": %q, "info": {"title": "t", "version": "1"},
	  "paths": {"/a": {"post": {"operationId": "a",
	    "requestBody": {"content": {"application/json": {"schema": %s}}},
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": %s}}}}}}},
	  "components": {"schemas": {%s}}}`, version, body, body, schemas)
}

// inlinedBody loads doc and returns its operation's inlined body schema,
// after checking that it compiles with Go's jsonschema.
func inlinedBody(t *testing.T, doc string) (*spec.Document, json.RawMessage, *jsonschema.Resolved) {
	t.Helper()
	d, err := spec.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a := op(t, d, "POST", "/a")
	raw, err := d.Inline(a.Body.Schema, a.Where)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("Go's jsonschema cannot read %s: %v", raw, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("Go's jsonschema refuses %s: %v", raw, err)
	}
	return d, raw, rs
}

// accepts says whether the schema accepts the JSON value.
func accepts(t *testing.T, rs *jsonschema.Resolved, value string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		t.Fatal(err)
	}
	return rs.Validate(v) == nil
}

// compileWithAjv compiles the schemas as MCP clients do, when node and
// ajv are installed.
func compileWithAjv(t *testing.T, schemas map[string]json.RawMessage) {
	t.Helper()
	for _, f := range testspecs.Ajv(t, schemas) {
		t.Errorf("%s: %s: %s\n%s", f.Name, f.Validator, f.Error, schemas[f.Name])
	}
}

// OpenAPI's nullable becomes JSON Schema's null, in 3.0 and in 3.1
// documents (which still use it), also where there is no type to add null
// to: beside a reference, allOf or oneOf.
func TestNullableBecomesNull(t *testing.T) {
	t.Parallel()
	const schemas = `
	  "S": {"type": "string", "nullable": true},
	  "E": {"type": "string", "enum": ["a", "b"], "nullable": true},
	  "R": {"$ref": "#/components/schemas/Obj", "nullable": true},
	  "A": {"allOf": [{"$ref": "#/components/schemas/Obj"}], "nullable": true},
	  "O": {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": true},
	  "N": {"nullable": true, "description": "anything"},
	  "F": {"type": "string", "nullable": false},
	  "T": {"type": ["string", "integer"], "nullable": true},
	  "C": {"const": "x", "nullable": true},
	  "Obj": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}`
	body := `{"type": "object", "properties": {` + strings.Join(func() []string {
		var p []string
		for _, n := range []string{"S", "E", "R", "A", "O", "N", "F", "T", "C"} {
			p = append(p, fmt.Sprintf(`%q: {"$ref": "#/components/schemas/%s"}`, strings.ToLower(n), n))
		}
		return p
	}(), ", ") + `}}`
	all := map[string]json.RawMessage{}
	for _, version := range []string{"3.0.3", "3.1.0"} {
		t.Run(version, func(t *testing.T) {
			_, raw, rs := inlinedBody(t, withBody(version, body, schemas))
			all[version] = raw
			if strings.Contains(string(raw), "nullable") {
				t.Errorf("nullable left in %s", raw)
			}
			for _, p := range []string{"s", "e", "r", "a", "o", "n", "t", "c"} {
				if !accepts(t, rs, fmt.Sprintf(`{%q: null}`, p)) {
					t.Errorf("%s: null refused by %s", p, raw)
				}
			}
			for _, v := range []string{`{"f": null}`, `{"r": {}}`, `{"a": {}}`, `{"e": "c"}`, `{"o": true}`, `{"s": 1}`, `{"t": true}`, `{"c": "y"}`} {
				if accepts(t, rs, v) {
					t.Errorf("%s accepted by %s", v, raw)
				}
			}
		})
	}
	compileWithAjv(t, all)
}

// Boolean exclusiveMinimum and exclusiveMaximum (OpenAPI 3.0's) become
// JSON Schema's numeric ones whatever the document's version; a boolean
// without its bound is dropped.
func TestBooleanExclusiveBoundsInAnyVersion(t *testing.T) {
	t.Parallel()
	const schemas = `"P": {"type": "object", "properties": {
	  "count": {"type": "integer", "minimum": 1, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": false},
	  "rate": {"type": "number", "exclusiveMaximum": true},
	  "low": {"type": "number", "exclusiveMinimum": 3}}}`
	all := map[string]json.RawMessage{}
	for _, version := range []string{"2.0", "3.0.3", "3.1.0"} {
		t.Run(version, func(t *testing.T) {
			ref := "#/components/schemas/P"
			if version == "2.0" {
				ref = "#/definitions/P"
			}
			d, raw, rs := inlinedBody(t, withBody(version, `{"$ref": "`+ref+`"}`, schemas))
			all[version] = raw
			want := `{"properties":{"count":{"exclusiveMinimum":1,"maximum":5,"type":"integer"},"low":{"exclusiveMinimum":3,"type":"number"},"rate":{"type":"number"}},"type":"object"}`
			if string(raw) != want {
				t.Errorf("got  %s\nwant %s", raw, want)
			}
			for v, ok := range map[string]bool{`{"count": 1}`: false, `{"count": 2}`: true, `{"count": 5}`: true, `{"low": 3}`: false} {
				if accepts(t, rs, v) != ok {
					t.Errorf("%s: accepted %v, want %v", v, !ok, ok)
				}
			}
			if !hasNote(d, ref+"/properties/rate", "exclusiveMaximum: true has no maximum") {
				t.Errorf("no note for the dropped flag: %v", d.Notes())
			}
		})
	}
	compileWithAjv(t, all)
}

func hasNote(d *spec.Document, at, text string) bool {
	for _, n := range d.Notes() {
		if n.At == at && strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}

// A pattern that clients cannot compile as an ECMAScript regular
// expression in unicode mode, or that Go cannot check, is dropped with a
// note; so is a patternProperties entry.
func TestPatternsClientsCannotCompileAreDropped(t *testing.T) {
	t.Parallel()
	doc := withBody("3.0.3", `{"$ref": "#/components/schemas/P"}`, `"P": {"type": "object",
	  "properties": {
	    "good": {"type": "string", "pattern": "^[a-z]+$"},
	    "identity": {"type": "string", "pattern": "^[a-z0-9_\\-\\:]+$"},
	    "lookahead": {"type": "string", "pattern": "^(?!x)"}},
	  "patternProperties": {"^x\\_": {"type": "string"}, "^y": {"type": "integer"}}}`)
	d, raw, rs := inlinedBody(t, doc)
	if !strings.Contains(string(raw), `"pattern":"^[a-z]+$"`) || strings.Count(string(raw), `"pattern"`) != 1 {
		t.Errorf("patterns: %s", raw)
	}
	if !strings.Contains(string(raw), `"^y"`) || strings.Contains(string(raw), `x\\_`) {
		t.Errorf("patternProperties: %s", raw)
	}
	if accepts(t, rs, `{"good": "A"}`) || !accepts(t, rs, `{"identity": "A"}`) {
		t.Errorf("the kept pattern does not apply, or a dropped one does: %s", raw)
	}
	for at, text := range map[string]string{
		"#/components/schemas/P/properties/identity":     `the pattern "^[a-z0-9_\\-\\:]+$" is not an ECMAScript regular expression`,
		"#/components/schemas/P/properties/lookahead":    `the pattern "^(?!x)" is an ECMAScript regular expression that Go's cannot check`,
		"#/components/schemas/P/patternProperties/^x\\_": `is not an ECMAScript regular expression`,
	} {
		if !hasNote(d, at, text) {
			t.Errorf("no note at %s saying %s: %v", at, text, d.Notes())
		}
	}
	for _, n := range d.Notes() {
		if n.Operation != "paths./a.post" {
			t.Errorf("note %v: operation %q", n, n.Operation)
		}
	}
	compileWithAjv(t, map[string]json.RawMessage{"patterns": raw})
}

// Keyword values that are not what JSON Schema says, as real documents
// have them (Slack's required: null), are dropped or repaired, never
// passed on; OpenAPI's documentation keywords and identifiers are
// dropped; Swagger 2.0's file type is a string.
func TestMalformedKeywordsAreRepaired(t *testing.T) {
	t.Parallel()
	doc := withBody("2.0", `{"$ref": "#/definitions/M"}`, `"M": {
	  "type": "object", "required": null, "$schema": "http://json-schema.org/draft-04/schema#", "id": "M",
	  "discriminator": "kind", "xml": {"name": "m"}, "example": {"a": 1}, "x-internal": true,
	  "properties": {
	    "a": {"type": 5}, "b": {"type": "int"}, "c": {"type": ["string", "bogus", "string"]},
	    "d": {"type": "string", "enum": {"x": 1}}, "e": {"type": "object", "properties": ["x"]},
	    "f": {"type": "array", "items": "x"}, "g": {"type": "string", "minLength": -1, "maxLength": 1.5},
	    "h": {"type": "array", "maxItems": 3000000000}, "i": {"type": "number", "multipleOf": 0},
	    "j": {"type": "string", "title": 3, "format": 3, "description": ["x"]},
	    "k": {"allOf": []}, "l": {"anyOf": "x"}, "m": {"oneOf": [5, {"type": "string"}]},
	    "n": {"type": "object", "additionalProperties": "no"}, "o": {"type": "array", "uniqueItems": "yes"},
	    "p": {"type": "string", "readOnly": {}}, "q": {"not": 5}, "r": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
	    "s": {"type": "file"}, "t": {"type": "object", "required": ["a", "a", 5]}, "u": null,
	    "v": {"$id": "#v", "$anchor": "v", "type": "string", "$comment": "c"}, "y": {"type": "string", "required": true},
	    "w": {"type": "integer", "maximum": 1e400}, "x": {"enum": [1, 1e400]}
	  }}`)
	d, raw, rs := inlinedBody(t, doc)
	var m map[string]any
	json.Unmarshal(raw, &m)
	for _, k := range []string{"required", "$schema", "id", "discriminator", "xml", "example", "x-internal"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s kept: %s", k, raw)
		}
	}
	props := m["properties"].(map[string]any)
	want := map[string]string{
		"a": `{}`, "b": `{}`, "c": `{"type":["string"]}`, "d": `{"type":"string"}`, "e": `{"type":"object"}`,
		"f": `{"type":"array"}`, "g": `{"type":"string"}`, "h": `{"type":"array"}`, "i": `{"type":"number"}`,
		"j": `{"type":"string"}`, "k": `{}`, "l": `{}`, "m": `{"oneOf":[{"type":"string"}]}`,
		"n": `{"type":"object"}`, "o": `{"type":"array"}`, "p": `{"type":"string"}`, "q": `{}`,
		"r": `{"prefixItems":[{"type":"string"},{"type":"integer"}],"type":"array"}`,
		"s": `{"description":"(a file: its content as a string)","type":"string"}`,
		"t": `{"required":["a"],"type":"object"}`, "u": `{}`, "v": `{"type":"string"}`,
		"w": `{"type":"integer"}`, "x": `{}`, "y": `{"type":"string"}`,
	}
	for name, w := range want {
		got, _ := json.Marshal(props[name])
		if string(got) != w {
			t.Errorf("%s: got %s, want %s", name, got, w)
		}
	}
	if !accepts(t, rs, `{"t": {"a": 1}}`) || accepts(t, rs, `{"t": {}}`) {
		t.Errorf("required repaired wrongly: %s", raw)
	}
	if !hasNote(d, "#/definitions/M/properties/y", "required is true, not a list of property names: dropped") ||
		!hasNote(d, "#/definitions/M/properties/b", `type "int" is not a JSON type`) {
		t.Errorf("notes: %v", d.Notes())
	}
	compileWithAjv(t, map[string]json.RawMessage{"malformed": raw})
}

// In OpenAPI 3.1 a $ref may have siblings, which apply as well; in 3.0
// those that describe it (a description, nullable) are kept.
func TestRefSiblingsAreKept(t *testing.T) {
	t.Parallel()
	const schemas = `"Pet": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}`
	body := `{"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet", "description": "the owner's pet",
	  "properties": {"tag": {"type": "string"}}, "required": ["tag"]}}}`
	_, raw, rs := inlinedBody(t, withBody("3.1.0", body, schemas))
	if !strings.Contains(string(raw), "the owner's pet") || accepts(t, rs, `{"pet": {"name": "x"}}`) ||
		!accepts(t, rs, `{"pet": {"name": "x", "tag": "y"}}`) || accepts(t, rs, `{"pet": {"tag": "y"}}`) {
		t.Errorf("3.1 siblings lost: %s", raw)
	}
	_, raw, rs = inlinedBody(t, withBody("3.0.3", body, schemas))
	if !strings.Contains(string(raw), "the owner's pet") || !accepts(t, rs, `{"pet": {"name": "x"}}`) {
		t.Errorf("3.0: %s", raw)
	}
	compileWithAjv(t, map[string]json.RawMessage{"siblings": raw})
}

// Local references are followed wherever they are: a path item, an
// operation, a parameter, a request body, a response, an object of
// properties.
func TestReferencesAreFollowedAtEveryLevel(t *testing.T) {
	t.Parallel()
	d, err := spec.Parse([]byte(`{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	  "paths": {
	    "/items": {"$ref": "#/components/pathItems/Items"},
	    "/things/{id}": {"parameters": [{"$ref": "#/components/parameters/Id"}],
	      "get": {"$ref": "#/x-operations/getThing"}}
	  },
	  "x-operations": {"getThing": {"operationId": "getThing",
	    "responses": {"200": {"$ref": "#/components/responses/Thing"}}}},
	  "components": {
	    "pathItems": {"Items": {"parameters": [{"$ref": "#/components/parameters/Limit"}],
	      "get": {"operationId": "listItems", "responses": {"200": {"$ref": "#/components/responses/Thing"}}},
	      "post": {"operationId": "addItem", "requestBody": {"$ref": "#/components/requestBodies/Item"},
	        "responses": {"201": {"description": "ok"}}}}},
	    "parameters": {"Limit": {"in": "query", "name": "limit", "schema": {"$ref": "#/components/schemas/Limit"}},
	      "Id": {"in": "path", "name": "id", "required": true, "schema": {"type": "string"}}},
	    "requestBodies": {"Item": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}},
	    "responses": {"Thing": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}},
	    "schemas": {
	      "Limit": {"type": "integer", "maximum": 100},
	      "Thing": {"type": "object", "properties": {"$ref": "#/components/schemas/ThingProperties"}, "required": ["name"]},
	      "ThingProperties": {"name": {"type": "string"}, "size": {"type": "integer"}}
	    }}}`))
	if err != nil {
		t.Fatal(err)
	}
	list := op(t, d, "GET", "/items")
	if list.ID != "listItems" || len(list.Parameters) != 1 || list.Parameters[0].Name != "limit" {
		t.Fatalf("the referenced path item's operation: %+v", list)
	}
	if s, _ := d.Inline(list.Parameters[0].Schema, list.Where); string(s) != `{"maximum":100,"type":"integer"}` {
		t.Errorf("its parameter's schema: %s", s)
	}
	const thing = `{"properties":{"name":{"type":"string"},"size":{"type":"integer"}},"required":["name"],"type":"object"}`
	if s, _ := d.Inline(list.Output, list.Where); string(s) != thing {
		t.Errorf("its response: %s", s)
	}
	add := op(t, d, "POST", "/items")
	if s, _ := d.Inline(add.Body.Schema, add.Where); add.Body == nil || !add.Body.Required || string(s) != thing {
		t.Errorf("its request body: %+v %s", add.Body, s)
	}
	get := op(t, d, "GET", "/things/{id}")
	if s, _ := d.Inline(get.Output, get.Where); get.ID != "getThing" || len(get.Parameters) != 1 || string(s) != thing {
		t.Errorf("the referenced operation: %+v %s", get, s)
	}
}

// A reference that leaves the document is refused when the document
// loads, wherever it is, with where it is; so is one that names nothing.
func TestReferencesThatCannotBeFollowedAreRefusedAtLoad(t *testing.T) {
	t.Parallel()
	const schemas = `"components": {"schemas": {"A": {"type": "object", "properties": {"b": {"$ref": "b.yaml#/B"}}},
	  "D": {"allOf": [{"type": "object"}, {"$ref": "https://evil.example/s.json"}]}}}`
	doc := func(paths string) string {
		return `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {` + paths + `}, ` + schemas + `}`
	}
	for name, c := range map[string]struct{ doc, ref, where string }{
		"path item": {doc(`"/a": {"$ref": "paths/a.yaml"}`), "paths/a.yaml", "paths./a"},
		"operation": {doc(`"/a": {"get": {"$ref": "ops.yaml#/get"}}`), "ops.yaml#/get", "paths./a.get"},
		"body schema, in a component": {doc(`"/a": {"post": {"requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}, "responses": {}}}`),
			"b.yaml#/B", "#/components/schemas/A/properties/b"},
		"response schema, deep": {doc(`"/a": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/D"}}}}}}}}`),
			"https://evil.example/s.json", "#/components/schemas/D/allOf/1"},
		"parameter schema": {doc(`"/a": {"get": {"parameters": [{"in": "query", "name": "q", "schema": {"$ref": "q.json"}}], "responses": {}}}`),
			"q.json", "paths./a.get: parameter q"},
		"response":     {doc(`"/a": {"get": {"responses": {"200": {"$ref": "r.yaml"}}}}`), "r.yaml", "paths./a.get.responses.200"},
		"request body": {doc(`"/a": {"post": {"requestBody": {"$ref": "b.yaml"}, "responses": {}}}`), "b.yaml", "paths./a.post.requestBody"},
		"properties": {doc(`"/a": {"post": {"requestBody": {"content": {"application/json": {"schema": {"properties": {"$ref": "p.yaml"}}}}}, "responses": {}}}`),
			"p.yaml", "paths./a.post: request body, at /properties"},
	} {
		_, err := spec.Parse([]byte(c.doc))
		var ext *spec.ExternalRefError
		if !errors.As(err, &ext) || ext.Ref != c.ref || ext.Where != c.where {
			t.Errorf("%s: %v; want the reference %q refused at %q", name, err, c.ref, c.where)
		}
	}
	for ref, want := range map[string]string{
		"#/components/schemas/Nope": `paths./a.get: response: the reference "#/components/schemas/Nope" names nothing`,
		"#/0":                       `paths./a.get: response: the reference "#/0" names nothing`,
		"#":                         `paths./a.get: response: the reference "#" names the whole document`,
	} {
		_, err := spec.Parse([]byte(doc(`"/a": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "` + ref + `"}}}}}}}`)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %s", ref, err, want)
		}
	}
}

// A 3.1 document with webhooks and no paths is refused with a message
// that says why there is nothing to serve.
func TestWebhooksOnlyDocumentSaysSo(t *testing.T) {
	t.Parallel()
	_, err := spec.Load(testspecs.Corpus(t, "oai-examples/v3.1_webhook-example.yaml"))
	if err == nil || !strings.Contains(err.Error(), "v3.1_webhook-example.yaml: the document has no paths, only webhooks (1)") {
		t.Errorf("got %v", err)
	}
}

// A value of the wrong kind is reported in JSON's words, where it is:
// line and column in JSON, the field in YAML (whose lines are gone once
// it is converted).
func TestWrongKindsSayWhatWasExpected(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		"{\"openapi\": \"3.0.0\",\n \"paths\": {\"/a\": []}}":     "at line 2, column 18 (paths): an array where an object was expected",
		"openapi: 3.0.0\npaths:\n  - /a\n":                        "paths: an array where an object was expected",
		`{"openapi": "3.0.0", "info": {"title": 5}, "paths": {}}`: "at line 1, column 40 (info.title): a number where a string was expected",
		"root:x:0:0:root:/root:/bin/bash\n":                       "the document is a string, not an object: is this an OpenAPI document?",
	} {
		if _, err := spec.Parse([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", doc, err, want)
		}
	}
}

// Where inlining leaves a schema open (recursion, or the size and depth
// limits), the result may accept more than the document says, never
// less: an open schema inside not or if, or as a branch of oneOf, would
// refuse what the document allows, so those keywords go or loosen.
func TestCutsNeverRefuseWhatTheDocumentAllows(t *testing.T) {
	t.Parallel()
	schemas := `
	  "One": {"oneOf": [{"type": "string"}, {"$ref": "#/components/schemas/One"}]},
	  "Not": {"type": "object", "properties": {"child": {"not": {"$ref": "#/components/schemas/Not"}}}},
	  "If": {"type": "object", "if": {"$ref": "#/components/schemas/If"}, "then": {"required": ["a"]}},
	  "Wide": {"oneOf": [` + strings.Repeat(`{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}},`, 3000) + `{"type": "string"}]}`
	body := `{"type": "object", "properties": {"one": {"$ref": "#/components/schemas/One"}, "not": {"$ref": "#/components/schemas/Not"},
	  "if": {"$ref": "#/components/schemas/If"}, "wide": {"$ref": "#/components/schemas/Wide"}}}`
	_, raw, rs := inlinedBody(t, withBody("3.1.0", body, schemas))
	for _, v := range []string{`{"one": "x"}`, `{"not": {"child": 1}}`, `{"if": {}}`, `{"wide": "x"}`} {
		if !accepts(t, rs, v) {
			t.Errorf("%s refused", v)
		}
	}
	if len(raw) > 1<<20 || !strings.Contains(string(raw), "too deep or too large") {
		t.Errorf("the wide schema was not cut: %d bytes", len(raw))
	}
	compileWithAjv(t, map[string]json.RawMessage{"cuts": raw})
}

// A document's schemas may be inlined from several goroutines at once,
// as a server's calls do.
func TestConcurrentInlining(t *testing.T) {
	t.Parallel()
	d, err := spec.Load(testspecs.Corpus(t, "slack-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, o := range d.Operations {
				if o.Body != nil {
					if _, err := d.Inline(o.Body.Schema, o.Where); err != nil {
						t.Error(err)
					}
				}
				if _, err := d.SchemaWhole(o.Output, o.Where, 400); err != nil {
					t.Error(err)
				}
				d.Notes()
			}
		}()
	}
	for range 4 {
		<-done
	}
}
