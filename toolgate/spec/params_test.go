package spec_test

import (
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

func param(t *testing.T, o *spec.Operation, in, name string) spec.Parameter {
	t.Helper()
	for _, p := range o.Parameters {
		if p.In == in && p.Name == name {
			return p
		}
	}
	t.Fatalf("%s %s: no %s parameter %q in %+v", o.Method, o.Path, in, name, o.Parameters)
	return spec.Parameter{}
}

// Parameters keep how they are written: OpenAPI 3's style and explode
// with their defaults, Swagger 2.0's collectionFormat, and cookies.
func TestParametersKeepTheirStyle(t *testing.T) {
	t.Parallel()
	d, err := spec.Parse([]byte(`
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: id, in: query, schema: {type: string}}
        - {name: tags, in: query, style: pipeDelimited, explode: false, schema: {type: array}}
        - {name: filter, in: query, content: {application/json: {schema: {type: object}}}}
        - {name: X-Ids, in: header, style: form, schema: {type: array}}
        - {name: session, in: cookie, schema: {type: string}}
      responses: {"200": {description: ok}}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := op(t, d, "GET", "/a/{id}")
	for _, tt := range []struct {
		in, name, style string
		explode         bool
	}{
		{"path", "id", spec.StyleSimple, false},
		{"query", "id", spec.StyleForm, true},
		{"query", "tags", spec.StylePipeDelimited, false},
		{"header", "X-Ids", spec.StyleSimple, false}, // form is not a header's style
		{"cookie", "session", spec.StyleForm, true},
	} {
		if p := param(t, a, tt.in, tt.name); p.Style != tt.style || p.Explode != tt.explode {
			t.Errorf("%s %s: %s, explode %v; want %s, explode %v", tt.in, tt.name, p.Style, p.Explode, tt.style, tt.explode)
		}
	}
	if p := param(t, a, "query", "filter"); p.ContentType != "application/json" || !strings.Contains(string(p.Schema), "object") {
		t.Errorf("a parameter given by content: %+v", p)
	}

	pets, err := spec.Load(testspecs.Corpus(t, "oai-examples/v2.0_json_petstore-expanded.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := param(t, op(t, pets, "GET", "/pets"), "query", "tags"); p.Style != spec.StyleForm || p.Explode {
		t.Errorf("collectionFormat csv: %s, explode %v", p.Style, p.Explode)
	}
}

// A body's media type is chosen JSON first, and a form's encoding kept.
func TestBodiesKeepTheirMediaTypeAndEncoding(t *testing.T) {
	t.Parallel()
	stripe, err := spec.Load(testspecs.Corpus(t, "stripe-spec3-2022.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := op(t, stripe, "POST", "/v1/customers").Body
	if b.ContentType != "application/x-www-form-urlencoded" || b.Encoding["metadata"] != (spec.Encoding{Style: spec.StyleDeepObject, Explode: true}) {
		t.Errorf("Stripe's customer body: %s, %+v", b.ContentType, b.Encoding["metadata"])
	}
	if p := param(t, op(t, stripe, "GET", "/v1/customers"), "query", "created"); p.Style != spec.StyleDeepObject || !p.Explode {
		t.Errorf("Stripe's created: %+v", p)
	}
	k8s, err := spec.Load(testspecs.Corpus(t, "k8s-swagger.json"))
	if err != nil {
		t.Fatal(err)
	}
	if b := op(t, k8s, "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}").Body; b.ContentType != "application/merge-patch+json" {
		t.Errorf("Kubernetes' patch: %s", b.ContentType)
	}
	d, err := spec.Parse([]byte(`{"openapi": "3.0.0", "paths": {"/a": {"post": {
	  "requestBody": {"content": {"application/xml": {}, "multipart/form-data": {}, "application/x-www-form-urlencoded": {}, "application/vnd.api+json": {}}},
	  "responses": {}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ct := op(t, d, "POST", "/a").Body.ContentType; ct != "application/vnd.api+json" {
		t.Errorf("chose %s among JSON, forms and XML", ct)
	}
}
