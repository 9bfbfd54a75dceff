package spec_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// hostileSeeds are fuzzing seeds of the shapes hostile documents take:
// deep nesting, cycles and chains of references, references at every
// level, huge keys, YAML anchors, merges and alias bombs, and OpenAPI's
// own keywords in the places clients choke on.
func hostileSeeds() [][]byte {
	op := func(body string) string {
		return `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":` +
			body + `}}},"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + body + `}}}}}}},"components":{"schemas":{` +
			`"A":{"type":"object","nullable":true,"properties":{"b":{"$ref":"#/components/schemas/B"}}},` +
			`"B":{"allOf":[{"$ref":"#/components/schemas/A"}],"nullable":true,"exclusiveMinimum":true,"pattern":"^[a-z\\_]+$"},` +
			`"P":{"x":{"type":"string"}}}}}`
	}
	var chain strings.Builder
	chain.WriteString(`{"openapi":"3.1.0","paths":{"/a":{"get":{"parameters":[{"$ref":"#/components/parameters/P0"}],"responses":{}}}},"components":{"parameters":{`)
	for i := range 50 {
		fmt.Fprintf(&chain, `"P%d":{"$ref":"#/components/parameters/P%d"},`, i, i+1)
	}
	chain.WriteString(`"P50":{"in":"query","name":"q","schema":{"type":"string"}}}}}`)
	return [][]byte{
		[]byte(op(`{"$ref":"#/components/schemas/A"}`)),
		[]byte(op(`{"type":"object","properties":{"$ref":"#/components/schemas/P"}}`)),
		[]byte(op(strings.Repeat(`{"items":`, 1100) + `{}` + strings.Repeat(`}`, 1100))),
		[]byte(op(`{"$ref":"#/components/schemas/A/properties/b/allOf/0"}`)),
		[]byte(op(`{"$ref":"other.yaml#/X"}`)),
		[]byte(op(`{"type":"object","properties":{"` + strings.Repeat("k", 100_000) + `":{"type":"string"}}}`)),
		[]byte(chain.String()),
		[]byte(`{"openapi":"3.1.0","paths":{"/a":{"$ref":"#/components/pathItems/A"},"/b":{"get":{"$ref":"#/paths/~1a/get"}}},` +
			`"components":{"pathItems":{"A":{"$ref":"#/components/pathItems/A","get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}},` +
			`"responses":{"R":{"description":"x","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S","description":"d"}}}}},` +
			`"schemas":{"S":{"type":["string","null"],"exclusiveMaximum":true,"required":null}}}}`),
		[]byte("openapi: 3.0.0\npaths:\n  /a: &a {get: {responses: {}}}\n  /b: *a\n  /c: {<<: *a, post: {responses: {}}}\n"),
		[]byte("openapi: 3.0.0\nx-l0: &l0 [a, a, a, a, a, a, a, a, a]\nx-l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\nx-l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\npaths: {/a: {get: {responses: {}}}}\n"),
		[]byte("openapi: 3.0.0\npaths: " + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + "\n"),
	}
}

// checkInlined inlines every schema of d's operations, and fails if one
// that inlines is not JSON Schema Go's jsonschema compiles.
func checkInlined(t *testing.T, d *spec.Document) {
	for _, o := range d.Operations {
		schemas := []json.RawMessage{o.Output}
		for _, p := range o.Parameters {
			schemas = append(schemas, p.Schema)
		}
		if o.Body != nil {
			schemas = append(schemas, o.Body.Schema)
		}
		for _, s := range schemas {
			raw, err := d.Inline(s, o.Where)
			if err != nil || raw == nil {
				continue
			}
			var js jsonschema.Schema
			if err := json.Unmarshal(raw, &js); err != nil {
				t.Fatalf("%s: %s: %v", o.Where, raw, err)
			}
			if _, err := js.Resolve(nil); err != nil {
				t.Fatalf("%s: %s: %v", o.Where, raw, err)
			}
		}
	}
	d.Notes()
}

// FuzzSchema puts one schema in a document, as a body and an answer, and
// checks that what loads inlines to JSON Schema that compiles.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"string","nullable":true}`, `{"allOf":[{"type":"object"}],"nullable":true}`,
		`{"type":"integer","minimum":1,"exclusiveMinimum":true,"maximum":"x"}`, `{"pattern":"\\p{L}(?=x)\\1"}`,
		`{"type":["file","x",3],"required":null,"enum":{},"items":[{},true,5],"properties":[]}`,
		`{"oneOf":[{"$ref":"#/components/schemas/Self"},{"not":{"$ref":"#/components/schemas/Self"}}]}`,
		`{"properties":{"$ref":"#/components/schemas/Self/properties"},"patternProperties":{"(":{}}}`,
		`{"$ref":"#/components/schemas/Self/properties/a/items","description":"d","properties":{"b":{}}}`,
		`{"dependencies":{"a":["b","b",1],"c":{"required":["d"]}},"if":{"$ref":"#"},"minLength":1e400}`,
	} {
		f.Add(byte(0), []byte(s))
		f.Add(byte(1), []byte(s))
	}
	f.Fuzz(func(t *testing.T, version byte, schema []byte) {
		v := "3.0.3"
		if version%2 == 1 {
			v = "3.1.0"
		}
		doc := fmt.Sprintf(`{"openapi":%q,"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":%s}}},`+
			`"responses":{"200":{"description":"ok","content":{"application/json":{"schema":%[2]s}}}}}}},`+
			`"components":{"schemas":{"Self":%[2]s}}}`, v, schema)
		d, err := spec.Parse([]byte(doc))
		if err != nil {
			return
		}
		checkInlined(t, d)
	})
}
