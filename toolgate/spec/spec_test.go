package spec_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

func op(t *testing.T, d *spec.Document, method, path string) *spec.Operation {
	t.Helper()
	for _, o := range d.Operations {
		if o.Method == method && o.Path == path {
			return o
		}
	}
	t.Fatalf("no %s %s", method, path)
	return nil
}

func TestLoadYAMLWithReferences(t *testing.T) {
	t.Parallel()
	d, err := spec.Load("../../examples/shop/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != "3.0.3" || d.Title != "Shop" || len(d.Servers) != 1 || len(d.Operations) != 7 || d.SecuritySchemes["oauth"].Type != "oauth2" {
		t.Fatalf("document %+v", d)
	}
	list := op(t, d, "GET", "/orders")
	if len(list.Parameters) != 1 || list.Parameters[0].Name != "limit" || list.Parameters[0].In != "query" {
		t.Fatalf("the $ref parameter: %+v", list.Parameters)
	}
	get := op(t, d, "GET", "/orders/{id}")
	if len(get.Parameters) != 1 || !get.Parameters[0].Required {
		t.Fatalf("the path-level parameter: %+v", get.Parameters)
	}
	create := op(t, d, "POST", "/orders")
	if create.Body == nil || !create.Body.Required || create.Body.ContentType != "application/json" {
		t.Fatalf("the $ref request body: %+v", create.Body)
	}
	if len(create.Security) != 1 || create.Security[0]["oauth"][0] != "orders.read" {
		t.Fatalf("the document's security: %+v", create.Security)
	}
	body, err := d.Inline(create.Body.Schema, create.Where)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(body, &m)
	props := m["properties"].(map[string]any)
	if _, ok := props["example"]; !ok {
		t.Fatalf("a property named like a dropped keyword was dropped: %s", body)
	}
	if _, ok := props["sku"].(map[string]any)["example"]; ok {
		t.Fatalf("the example keyword was kept: %s", body)
	}
	// A recursive schema is cut where it recurses.
	cat := op(t, d, "GET", "/categories/{id}")
	out, err := d.Inline(cat.Output, cat.Where)
	if err != nil || !strings.Contains(string(out), "recursive: another Category") {
		t.Fatalf("recursive schema: %s, %v", out, err)
	}
	if string(cat.Extensions["x-risk"]) != `"write"` {
		t.Fatalf("extensions: %v", cat.Extensions)
	}
}

func TestSwagger2IsConverted(t *testing.T) {
	t.Parallel()
	d, err := spec.Parse([]byte(`{
	  "swagger": "2.0", "info": {"title": "Pets"}, "host": "pets.example", "basePath": "/v1", "schemes": ["https"],
	  "securityDefinitions": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
	  "paths": {
	    "/pets": {
	      "post": {"operationId": "addPet", "parameters": [{"in": "body", "name": "pet", "required": true, "schema": {"$ref": "#/definitions/Pet"}}],
	        "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"}}}},
	      "get": {"operationId": "findPets", "parameters": [{"$ref": "#/parameters/limit"}], "responses": {"200": {"description": "ok"}}}
	    },
	    "/pets/{id}/photo": {
	      "put": {"parameters": [{"in": "path", "name": "id", "type": "integer", "required": true},
	        {"in": "formData", "name": "caption", "type": "string", "required": true}], "responses": {"204": {"description": "ok"}}}
	    }
	  },
	  "parameters": {"limit": {"in": "query", "name": "limit", "type": "integer", "format": "int32"}},
	  "definitions": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != "2.0" || d.Servers[0].URL != "https://pets.example/v1" || d.SecuritySchemes["key"].Type != "apiKey" {
		t.Fatalf("document %+v", d)
	}
	add := op(t, d, "POST", "/pets")
	body, _ := d.Inline(add.Body.Schema, add.Where)
	if add.Body == nil || !add.Body.Required || !strings.Contains(string(body), `"name"`) {
		t.Fatalf("body parameter: %+v %s", add.Body, body)
	}
	if out, _ := d.Inline(add.Output, add.Where); !strings.Contains(string(out), `"name"`) {
		t.Fatalf("response schema: %s", out)
	}
	find := op(t, d, "GET", "/pets")
	if len(find.Parameters) != 1 || !strings.Contains(string(find.Parameters[0].Schema), `"integer"`) {
		t.Fatalf("the typed query parameter: %+v", find.Parameters)
	}
	photo := op(t, d, "PUT", "/pets/{id}/photo")
	if len(photo.Parameters) != 1 || photo.Body == nil || photo.Body.ContentType != "application/x-www-form-urlencoded" {
		t.Fatalf("formData: %+v %+v", photo.Parameters, photo.Body)
	}
}

func TestBadDocumentsSayWhere(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct{ doc, want string }{
		"malformed JSON":  {"{\n  \"openapi\": \"3.0.0\",\n  \"paths\": {,}\n}", "line 3"},
		"wrong type":      {`{"openapi": "3.0.0", "paths": []}`, "paths"},
		"no version":      {`{"paths": {"/a": {}}}`, "openapi"},
		"old version":     {`{"openapi": "4.0.0", "paths": {"/a": {}}}`, "4.0.0"},
		"no paths":        {`{"openapi": "3.0.0"}`, "no paths"},
		"empty":           {``, "empty"},
		"not YAML either": {"openapi: [unclosed", "neither JSON nor YAML"},
		"external file": {`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "other.yaml#/p"}], "responses": {}}}}}`,
			`paths./a.get.parameters[0]`},
		"external URL": {`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "https://evil.example/p.json"}], "responses": {}}}}}`,
			"leaves the document"},
		"dangling": {`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/nope"}], "responses": {}}}}}`,
			"names nothing"},
		"loop": {`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/a"}], "responses": {}}}},
			"components": {"parameters": {"a": {"$ref": "#/components/parameters/b"}, "b": {"$ref": "#/components/parameters/a"}}}}`, "leads back"},
		"nameless parameter": {`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}], "responses": {}}}}}`, "needs a name"},
	} {
		_, err := spec.Parse([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error mentioning %q", name, err, tt.want)
		}
	}
	var ext *spec.ExternalRefError
	_, err := spec.Parse([]byte(`{"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "/etc/passwd"}], "responses": {}}}}}`))
	if !errors.As(err, &ext) {
		t.Errorf("a file reference: %v, want an ExternalRefError", err)
	}
	if _, err := spec.Load("missing.yaml"); err == nil {
		t.Error("a missing file loaded")
	}
}

// FuzzParse checks that no input makes the loader panic or hang, and that
// whatever it accepts has operations whose schemas inline to JSON Schema
// that compiles.
func FuzzParse(f *testing.F) {
	for _, s := range hostileSeeds() {
		f.Add(s)
	}
	shop, _ := os.ReadFile("../../examples/shop/openapi.yaml")
	f.Add(shop)
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/a":{"get":{"responses":{"200":{"description":"x"}}}}}}`))
	f.Add([]byte(`{"swagger":"2.0","paths":{"/a":{"post":{"parameters":[{"in":"body","name":"b","schema":{"$ref":"#/definitions/X"}}]}}},"definitions":{"X":{"$ref":"#/definitions/X"}}}`))
	f.Add([]byte("openapi: 3.0.0\npaths:\n  /a: &a {get: {responses: {}}}\n  /b: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := spec.Parse(data)
		if err != nil {
			return
		}
		checkInlined(t, d)
	})
}

// OpenAPI 3.0 schemas become JSON Schema: nullable becomes the null type
// (and null joins an enum), and exclusive bounds become the bounds.
func TestOpenAPI30SchemasBecomeJSONSchema(t *testing.T) {
	t.Parallel()
	d, err := spec.Parse([]byte(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
	  "paths": {"/a": {"post": {"operationId": "a",
	    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}},
	    "responses": {"200": {"description": "ok"}}}}},
	  "components": {"schemas": {"A": {"type": "object", "properties": {
	    "state": {"type": "string", "enum": ["open", "closed"], "nullable": true},
	    "count": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := op(t, d, "POST", "/a")
	got, err := d.Inline(a.Body.Schema, a.Where)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"count":{"exclusiveMinimum":0,"maximum":9,"type":"integer"},"state":{"enum":["open","closed",null],"type":["string","null"]}},"type":"object"}`
	if string(got) != want {
		t.Errorf("inlined\n got %s\nwant %s", got, want)
	}
}

// Inlining reuses the expansions of references; the result must not
// depend on the order in which schemas are inlined, nor on the limits
// having been met elsewhere.
func TestInlineIsTheSameInAnyOrder(t *testing.T) {
	t.Parallel()
	doc := func() *spec.Document {
		d, err := spec.Load("../../examples/shop/openapi.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	all := func(d *spec.Document, reverse bool) map[string]string {
		ops := slices.Clone(d.Operations)
		if reverse {
			slices.Reverse(ops)
		}
		out := map[string]string{}
		for _, o := range ops {
			for _, s := range []json.RawMessage{o.Output, bodySchema(o)} {
				got, err := d.Inline(s, o.Where)
				if err != nil {
					t.Fatal(err)
				}
				out[o.Where+string(s)] = string(got)
			}
		}
		return out
	}
	if a, b := all(doc(), false), all(doc(), true); !maps.Equal(a, b) {
		t.Errorf("inlined schemas differ with the order:\n%v\n%v", a, b)
	}
}

func bodySchema(o *spec.Operation) json.RawMessage {
	if o.Body == nil {
		return nil
	}
	return o.Body.Schema
}
