package spec_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// A brief schema is cut at its depth; each cut part keeps its type (null
// too, where it is nullable) and names the schema that gives its shape.
// At no depth does it refuse a value the whole schema accepts: oneOf,
// not, if and unevaluatedProperties loosen where a cut reaches them.
func TestBriefSchemasCutAndNeverRefuse(t *testing.T) {
	t.Parallel()
	schemas := `
	  "Pet": {"type": "object", "description": "A pet.\n\n| a | table |\n|---|---|", "properties": {
	    "name": {"type": "string", "maxLength": 5}, "owner": {"$ref": "#/components/schemas/Owner"}}},
	  "Owner": {"type": ["object", "null"], "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}}},
	  "Shape": {"oneOf": [{"type": "object", "properties": {"r": {"type": "object", "properties": {"x": {"type": "number"}}}}, "required": ["r"]},
	                      {"type": "object", "properties": {"side": {"type": "object", "properties": {"x": {"type": "number"}}}}, "required": ["side"]}]},
	  "Not": {"not": {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"const": 1}}}}, "required": ["a"]}},
	  "If": {"if": {"properties": {"k": {"type": "object", "properties": {"deep": {"const": "x"}}}}}, "then": {"required": ["then"]}},
	  "Closed": {"type": "object", "allOf": [{"properties": {"inner": {"type": "object", "properties": {"z": {"type": "string"}}}}}], "unevaluatedProperties": false}`
	body := `{"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"}, "shape": {"$ref": "#/components/schemas/Shape"},
	  "not": {"$ref": "#/components/schemas/Not"}, "if": {"$ref": "#/components/schemas/If"}, "closed": {"$ref": "#/components/schemas/Closed"}}}`
	d, err := spec.Parse([]byte(withBody("3.1.0", body, schemas)))
	if err != nil {
		t.Fatal(err)
	}
	a := op(t, d, "POST", "/a")
	accepted := []string{
		`{"pet": {"name": "Rex", "owner": {"address": {"city": "Oslo"}}}}`,
		`{"pet": {"owner": null}}`,
		`{"shape": {"r": {"x": 1}}}`,
		`{"not": {"a": {"b": 2}}}`,
		`{"if": {"k": {"deep": "y"}}}`,
		`{"closed": {"inner": {"z": "z"}}}`,
	}
	refusedByWhole := `{"pet": {"name": "Rexxxxx"}}`
	full, err := d.Schema(a.Body.Schema, a.Where)
	whole := resolved(t, full, err)
	for _, v := range accepted {
		if !accepts(t, whole, v) {
			t.Fatalf("the whole schema refuses %s", v)
		}
	}
	schemasByDepth := map[string]json.RawMessage{}
	// A reference is a level of its own: the pet's name is at depth 3
	// (body, its property pet, the schema Pet, its property name), the
	// owner's city at 6.
	for depth := -1; depth <= 7; depth++ {
		s, cut, err := d.SchemaBrief(a.Body.Schema, a.Where, depth, 1000)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(s)
		schemasByDepth[fmt.Sprint("depth ", depth)] = raw
		rs := resolved(t, s, nil)
		for _, v := range accepted {
			if !accepts(t, rs, v) {
				t.Errorf("depth %d: %s refused by %s", depth, v, raw)
			}
		}
		if depth < 6 != cut {
			t.Errorf("depth %d: cut %v: %s", depth, cut, raw)
		}
		if depth >= 3 && accepts(t, rs, refusedByWhole) {
			t.Errorf("depth %d: the pet's name is listed, yet %s is accepted", depth, refusedByWhole)
		}
		if strings.Contains(string(raw), "table") {
			t.Errorf("depth %d: a description keeps its table: %s", depth, raw)
		}
	}
	// At depth 3 the pet's owner is cut: its type, null included, and
	// the schema that gives its shape.
	s, _, _ := d.SchemaBrief(a.Body.Schema, a.Where, 3, 1000)
	owner := s.(map[string]any)["properties"].(map[string]any)["pet"].(map[string]any)["properties"].(map[string]any)["owner"].(map[string]any)
	if got, _ := json.Marshal(owner["type"]); string(got) != `["object","null"]` ||
		!strings.Contains(owner["description"].(string), spec.BriefCutNote+": its shape is Owner in the API's document; the server checks it in full.") {
		t.Errorf("the cut owner is %v", owner)
	}
	if _, _, err := d.SchemaBrief(a.Body.Schema, a.Where, 4, 10); err != spec.ErrTooLarge {
		t.Errorf("past its budget a brief schema gives %v, not ErrTooLarge", err)
	}
	compileWithAjv(t, schemasByDepth)
}

// resolved compiles a schema with Go's jsonschema.
func resolved(t *testing.T, s any, err error) *jsonschema.Resolved {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("Go's jsonschema cannot read %s: %v", raw, err)
	}
	rs, err := js.Resolve(nil)
	if err != nil {
		t.Fatalf("Go's jsonschema refuses %s: %v", raw, err)
	}
	return rs
}
