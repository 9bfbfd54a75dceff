package toolgate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/journal"
	"github.com/rubicon-go/rubicon/sqlstore"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// recorded is a request as it came on the wire.
type recorded struct {
	Method string
	// Target is the request line's target: the raw path and query, as sent.
	Target string
	Header http.Header
	Body   string
}

// recorder is an upstream on loopback that records every request it
// receives and answers with respond (200 and {} when nil).
type recorder struct {
	URL     string
	mu      sync.Mutex
	reqs    []recorded
	respond http.HandlerFunc
}

func newRecorder(t testing.TB, respond http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{respond: respond}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body)) // for respond to read again
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{Method: req.Method, Target: req.RequestURI, Header: req.Header.Clone(), Body: string(body)})
		r.mu.Unlock()
		if r.respond != nil {
			r.respond(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// last returns the one request the recorder received.
func (r *recorder) only(t testing.TB) recorded {
	t.Helper()
	reqs := r.requests()
	if len(reqs) != 1 {
		t.Fatalf("the upstream received %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

// catalog builds the catalog of a document (a path or YAML/JSON text)
// under a configuration.
func catalog(t testing.TB, document, configYAML string) *toolgate.Catalog {
	t.Helper()
	cat, _ := catalogAndConfig(t, document, configYAML)
	return cat
}

// catalogAndConfig is catalog, with the configuration.
func catalogAndConfig(t testing.TB, document, configYAML string) (*toolgate.Catalog, *config.Config) {
	t.Helper()
	var doc *spec.Document
	var err error
	if strings.ContainsAny(document, "\n{") {
		doc, err = spec.Parse([]byte(document))
	} else {
		doc, err = spec.Load(document)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if configYAML != "" {
		if cfg, err = config.Parse([]byte(configYAML)); err != nil {
			t.Fatal(err)
		}
	}
	cat, err := toolgate.Build(doc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cat, cfg
}

// testCaller is a caller with the catalog whose tools it calls.
type testCaller struct {
	*toolgate.Caller
	cat *toolgate.Catalog
}

// caller returns a caller of cat's tools against upstream, with a journal.
func caller(t testing.TB, cat *toolgate.Catalog, upstream string, auth config.Auth, secret string) (testCaller, *journal.Journal) {
	t.Helper()
	return callerOf(t, cat, upstream, config.Upstream{Auth: auth}, func(string) string { return secret })
}

// callerOf returns a caller of cat's tools against upstream, configured
// by up, with the environment getenv, and its journal.
func callerOf(t testing.TB, cat *toolgate.Catalog, upstream string, up config.Upstream, getenv func(string) string) (testCaller, *journal.Journal) {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "toolgate.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	j := journal.New(db.JournalStore(), journal.Options{})
	c, err := toolgate.NewCaller(cat, upstream, up, getenv, nil, j)
	if err != nil {
		t.Fatal(err)
	}
	return testCaller{c, cat}, j
}

// callTool calls the exposed tool name, as a server would.
func callTool(t testing.TB, c testCaller, name, args string) toolgate.Result {
	t.Helper()
	tool := c.cat.Callable(name)
	if tool == nil {
		t.Fatalf("no exposed tool %s", name)
	}
	return c.Call(context.Background(), tool, json.RawMessage(args), nil)
}

// sent calls a tool that must succeed and returns the request it sent.
func sent(t *testing.T, cat *toolgate.Catalog, name, args string) recorded {
	t.Helper()
	up := newRecorder(t, nil)
	c, _ := caller(t, cat, up.URL, config.Auth{}, "")
	if res := callTool(t, c, name, args); res.IsError {
		t.Fatalf("%s %s: %s", name, args, res.Text)
	}
	return up.only(t)
}

// refused calls a tool that must be refused before anything is sent, and
// returns the refusal.
func refused(t *testing.T, cat *toolgate.Catalog, name, args string) string {
	t.Helper()
	up := newRecorder(t, nil)
	c, _ := caller(t, cat, up.URL, config.Auth{}, "")
	res := callTool(t, c, name, args)
	if !res.IsError || !strings.Contains(res.Text, "Nothing was sent") {
		t.Errorf("%s %s: %q; want a refusal that says nothing was sent", name, args, res.Text)
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("%s %s: the upstream received %d requests, want none", name, args, n)
	}
	return res.Text
}

// GitHub's repos/get-content takes a file's path, slashes included, as one
// path parameter; a branch name may hold a slash. Each is percent-encoded
// once.
func TestGitHubPathParametersAreEncodedOnce(t *testing.T) {
	t.Parallel()
	cat := github(t)
	for _, tt := range []struct{ tool, args, want string }{
		// GitHub marks a file's path x-multi-segment: its "/" stay
		// separators, and each segment is encoded once.
		{"repos_get-content", `{"owner":"o","repo":"r","path":"docs/README.md"}`, "/repos/o/r/contents/docs/README.md"},
		{"repos_get-content", `{"owner":"o","repo":"r","path":"my docs/café#1.md","ref":"feature/login"}`,
			"/repos/o/r/contents/my%20docs/caf%C3%A9%231.md?ref=feature%2Flogin"},
		{"repos_get-branch", `{"owner":"o","repo":"r","branch":"feature/login"}`, "/repos/o/r/branches/feature/login"},
		// Elsewhere a "/" is data, encoded once as RFC 6570 says.
		{"repos_get", `{"owner":"o","repo":"feature/login"}`, "/repos/o/feature%2Flogin"},
		{"repos_get", `{"owner":"my org","repo":"café"}`, "/repos/my%20org/caf%C3%A9"},
		{"repos_get-branch", `{"owner":"o","repo":"r","branch":"a+b?c#d%2F~e"}`, "/repos/o/r/branches/a%2Bb%3Fc%23d%252F~e"},
	} {
		if got := sent(t, cat, tt.tool, tt.args); got.Target != tt.want {
			t.Errorf("%s %s: sent %s, want %s", tt.tool, tt.args, got.Target, tt.want)
		}
	}
	// A multi-segment value cannot climb out of its place either.
	for _, path := range []string{"docs/../secrets", "./README.md", "/etc/passwd", "docs//README.md", "docs/"} {
		if text := refused(t, cat, "repos_get-content", `{"owner":"o","repo":"r","path":"`+path+`"}`); !strings.Contains(text, `"path"`) {
			t.Errorf("path %q: the refusal does not name the argument: %s", path, text)
		}
	}
}

// Kubernetes' namespace is a path segment: "..", "." and "" would name
// another resource, and are refused before anything is sent.
func TestDotSegmentsAndEmptyPathValuesAreRefused(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "k8s-swagger.json"), "")
	for _, ns := range []string{`".."`, `"."`, `""`} {
		text := refused(t, cat, "listCoreV1NamespacedPod", `{"namespace":`+ns+`}`)
		if !strings.Contains(text, `"namespace"`) {
			t.Errorf("namespace %s: the refusal does not name the argument: %s", ns, text)
		}
	}
	got := sent(t, cat, "listCoreV1NamespacedPod", `{"namespace":"..default","labelSelector":"app=web,tier!=db","limit":5}`)
	if want := "/api/v1/namespaces/..default/pods?labelSelector=app%3Dweb%2Ctier%21%3Ddb&limit=5"; got.Target != want {
		t.Errorf("sent %s, want %s", got.Target, want)
	}
	// A merge patch is sent as one: the document offers JSON patches first.
	got = sent(t, cat, "patchCoreV1NamespacedPod", `{"namespace":"default","name":"web-1","body":{"metadata":{"labels":{"tier":"db"}}}}`)
	if got.Method != "PATCH" || got.Target != "/api/v1/namespaces/default/pods/web-1" ||
		got.Header.Get("Content-Type") != "application/merge-patch+json" || got.Body != `{"metadata":{"labels":{"tier":"db"}}}` {
		t.Errorf("patch sent %s %s %q %s", got.Method, got.Target, got.Header.Get("Content-Type"), got.Body)
	}
}

// Stripe's list filters are deepObject query parameters: created[gte]=...
func TestStripeDeepObjectQuery(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "stripe-spec3-2022.json"), "")
	got := sent(t, cat, "GetCustomers", `{"created":{"gte":1700000000,"lt":1800000000},"email":"a+b@example.com","expand":["data.default_source"],"limit":3}`)
	want := "/v1/customers?created[gte]=1700000000&created[lt]=1800000000&email=a%2Bb%40example.com&expand[0]=data.default_source&limit=3"
	if got.Target != want {
		t.Errorf("sent %s\nwant %s", got.Target, want)
	}
	// created may also be a timestamp.
	if got := sent(t, cat, "GetCustomers", `{"created":1700000000}`); got.Target != "/v1/customers?created=1700000000" {
		t.Errorf("sent %s", got.Target)
	}
}

// Stripe's bodies are forms whose objects and lists are written as its
// libraries write them: metadata[order]=42, items[0][price]=p.
func TestStripeFormBodies(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "stripe-spec3-2022.json"), "")
	for _, tt := range []struct{ tool, args, want string }{
		{"PostCustomers", `{"body":{"email":"ada@example.com","name":"Ada L","metadata":{"order":"42"},"expand":["tax"]}}`,
			"email=ada%40example.com&expand[0]=tax&metadata[order]=42&name=Ada+L"},
		{"PostSubscriptions", `{"body":{"customer":"cus_1","items":[{"price":"p","quantity":2},{"price":"q","metadata":{"k":"v w"}}],"default_tax_rates":[]}}`,
			"customer=cus_1&default_tax_rates=&items[0][price]=p&items[0][quantity]=2&items[1][metadata][k]=v+w&items[1][price]=q"},
	} {
		got := sent(t, cat, tt.tool, tt.args)
		if got.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || got.Body != tt.want {
			t.Errorf("%s: sent %q %s\nwant %s", tt.tool, got.Header.Get("Content-Type"), got.Body, tt.want)
		}
	}
}

// Slack's methods take Swagger 2.0 formData parameters: a form body.
func TestSlackFormBodies(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "slack-v2.json"), "")
	got := sent(t, cat, "chat_postMessage", `{"body":{"channel":"C1","text":"hi & bye","mrkdwn":false,"attachments":"[{\"pretext\":\"x\"}]"}}`)
	want := "attachments=%5B%7B%22pretext%22%3A%22x%22%7D%5D&channel=C1&mrkdwn=false&text=hi+%26+bye"
	if got.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || got.Body != want {
		t.Errorf("sent %q %s\nwant %s", got.Header.Get("Content-Type"), got.Body, want)
	}
	// A thread's timestamp is a number with six decimals: sent as written.
	got = sent(t, cat, "files_upload", `{"body":{"channels":"C1","content":"hello","thread_ts":1234567890.123456}}`)
	if want := "channels=C1&content=hello&thread_ts=1234567890.123456"; got.Body != want {
		t.Errorf("files.upload sent %s, want %s", got.Body, want)
	}
	// The form's fields keep their descriptions.
	s, err := cat.InputSchema(cat.Lookup("chat_postMessage"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s), "Channel, private group, or IM channel to send message to") {
		t.Errorf("chat_postMessage's fields lost their descriptions: %s", s)
	}
}

// OpenAPI 3's styles for path, query, header and cookie parameters, and
// same-named parameters in different locations.
const stylesDoc = `
openapi: 3.0.3
info: {title: styles, version: "1"}
paths:
  /p/{simple}/{label}/{matrix}/{exploded}:
    get:
      operationId: paths
      parameters:
        - {name: simple, in: path, required: true, schema: {type: array, items: {type: string}}}
        - {name: label, in: path, required: true, style: label, schema: {type: array, items: {type: string}}}
        - {name: matrix, in: path, required: true, style: matrix, explode: true, schema: {type: array, items: {type: string}}}
        - {name: exploded, in: path, required: true, explode: true, schema: {type: object}}
      responses: {"200": {description: ok}}
  /q:
    get:
      operationId: queries
      parameters:
        - {name: form, in: query, schema: {type: array, items: {type: string}}}
        - {name: csv, in: query, explode: false, schema: {type: array, items: {type: string}}}
        - {name: space, in: query, style: spaceDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: pipe, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: point, in: query, schema: {type: object}}
        - {name: filter, in: query, content: {application/json: {schema: {type: object}}}}
        - {name: next, in: query, allowReserved: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /items/{id}:
    post:
      operationId: twins
      parameters:
        - {name: id, in: query, schema: {type: string}, description: the version}
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: id, in: header, schema: {type: string}}
        - {name: id, in: cookie, schema: {type: string}}
        - {name: trace, in: header, schema: {type: array, items: {type: string}}}
        - {name: prefs, in: cookie, schema: {type: string}}
        - {name: Cookie, in: header, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {type: object}
      responses: {"200": {description: ok}}
`

func TestParameterStyles(t *testing.T) {
	t.Parallel()
	cat := catalog(t, stylesDoc, "")
	got := sent(t, cat, "paths", `{"simple":["a b","c/d"],"label":["x","y"],"matrix":["m","n"],"exploded":{"k":"v","z":"1,2"}}`)
	if want := "/p/a%20b,c%2Fd/.x,y/;matrix=m;matrix=n/k=v,z=1%2C2"; got.Target != want {
		t.Errorf("paths: sent %s\nwant %s", got.Target, want)
	}
	got = sent(t, cat, "queries", `{"form":["a","b c"],"csv":["a","b,c"],"space":["a","b"],"pipe":["a","b|c"],"point":{"x":1,"y":2},"filter":{"state":"open"},"next":"/a?b=c&d#e"}`)
	want := "/q?form=a&form=b%20c&csv=a,b%2Cc&space=a%20b&pipe=a|b%7Cc&x=1&y=2&filter=%7B%22state%22%3A%22open%22%7D&next=/a?b%3Dc%26d%23e"
	if got.Target != want {
		t.Errorf("queries: sent %s\nwant %s", got.Target, want)
	}
	got = sent(t, cat, "twins", `{"id":"7","query_id":"v2","header_id":"h","cookie_id":"c; admin=1","trace":["a","b"],"prefs":"dark mode","body":{"n":1}}`)
	if want := "/items/7?id=v2"; got.Target != want {
		t.Errorf("twins: sent %s, want %s", got.Target, want)
	}
	if got.Header.Get("Id") != "h" || got.Header.Get("Trace") != "a,b" {
		t.Errorf("twins: headers %v", got.Header)
	}
	if c := got.Header.Values("Cookie"); len(c) != 1 || c[0] != "id=c%3B%20admin%3D1; prefs=dark%20mode" {
		t.Errorf("twins: cookies %q", c)
	}
	var schema struct {
		Properties map[string]struct{ Description string }
		Required   []string
	}
	s, err := cat.InputSchema(cat.Lookup("twins"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(s, &schema)
	for name, want := range map[string]string{"id": "", "query_id": `query parameter "id"`, "header_id": "header id", "cookie_id": "cookie id", "body": ""} {
		p, ok := schema.Properties[name]
		if !ok || !strings.Contains(p.Description, want) {
			t.Errorf("argument %s: %+v (listed %v); want a description with %q", name, p, ok, want)
		}
	}
	if _, ok := schema.Properties["Cookie"]; ok || len(schema.Properties) != 7 {
		t.Errorf("arguments %v: want id, query_id, header_id, cookie_id, trace, prefs and body, never Cookie", schema.Properties)
	}
	// A header value cannot start another header.
	refused(t, cat, "twins", `{"id":"7","header_id":"h\r\nX-Admin: 1"}`)
}

// Swagger 2.0: collectionFormat, the bounds of non-body parameters, and
// files in formData.
const swagger2Doc = `{
  "swagger": "2.0", "info": {"title": "s2", "version": "1"}, "host": "api.example", "basePath": "/v1",
  "paths": {
    "/search/{ids}": {"get": {"operationId": "search", "parameters": [
      {"name": "ids", "in": "path", "required": true, "type": "array", "items": {"type": "integer"}, "collectionFormat": "pipes"},
      {"name": "csv", "in": "query", "type": "array", "items": {"type": "string"}},
      {"name": "ssv", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "ssv"},
      {"name": "tsv", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "tsv"},
      {"name": "multi", "in": "query", "type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "collectionFormat": "multi"},
      {"name": "count", "in": "query", "type": "integer", "minimum": 1, "maximum": 100},
      {"name": "ratio", "in": "query", "type": "number", "minimum": 0, "exclusiveMinimum": true, "multipleOf": 0.5},
      {"name": "code", "in": "query", "type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[A-Z]+$"},
      {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2, "uniqueItems": true},
      {"name": "X-Mode", "in": "header", "type": "array", "items": {"type": "string"}, "collectionFormat": "csv"}],
      "responses": {"200": {"description": "ok"}}}},
    "/pets/{id}/photo": {"post": {"operationId": "uploadPhoto", "consumes": ["multipart/form-data"], "parameters": [
      {"name": "id", "in": "path", "required": true, "type": "integer"},
      {"name": "caption", "in": "formData", "type": "string", "maxLength": 20},
      {"name": "photo", "in": "formData", "type": "file", "required": true}],
      "responses": {"200": {"description": "ok"}}}}
  }
}`

func TestSwagger2Parameters(t *testing.T) {
	t.Parallel()
	cat := catalog(t, swagger2Doc, "")
	got := sent(t, cat, "search", `{"ids":[1,2],"csv":["a","b"],"ssv":["a","b"],"tsv":["a","b"],"multi":["a","b"],"count":100,"ratio":1.5,"code":"AB","tags":["x"],"X-Mode":["fast","safe"]}`)
	if want := "/search/1%7C2?csv=a,b&ssv=a%20b&tsv=a%09b&multi=a&multi=b&count=100&ratio=1.5&code=AB&tags=x"; got.Target != want {
		t.Errorf("sent %s\nwant %s", got.Target, want)
	}
	if got.Header.Get("X-Mode") != "fast,safe" {
		t.Errorf("header %q", got.Header.Get("X-Mode"))
	}
	for _, bad := range []string{`{"ids":[1],"count":0}`, `{"ids":[1],"count":101}`, `{"ids":[1],"ratio":0}`, `{"ids":[1],"ratio":0.7}`,
		`{"ids":[1],"code":"A"}`, `{"ids":[1],"code":"ABCD"}`, `{"ids":[1],"code":"ab"}`, `{"ids":[1],"tags":[]}`,
		`{"ids":[1],"tags":["x","y","z"]}`, `{"ids":[1],"tags":["x","x"]}`, `{"ids":[1],"multi":["c"]}`} {
		refused(t, cat, "search", bad)
	}

	got = sent(t, cat, "uploadPhoto", `{"id":7,"body":{"caption":"Rex","photo":{"filename":"rex.png","content_base64":"iVBORw0KGgo=","content_type":"image/png"}}}`)
	checkMultipart(t, got, "--B\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nRex\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"rex.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\r\n--B--\r\n")
	refused(t, cat, "uploadPhoto", `{"id":7,"body":{"caption":"a caption far too long for it","photo":{"filename":"a.png","content":"x"}}}`)
}

// checkMultipart checks a multipart/form-data request's exact body; B in
// want stands for the boundary the request chose.
func checkMultipart(t *testing.T, got recorded, want string) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q: want multipart/form-data with a boundary", got.Header.Get("Content-Type"))
	}
	want = strings.ReplaceAll(want, "--B", "--"+params["boundary"])
	if got.Body != want {
		t.Errorf("multipart body\n got %q\nwant %q", got.Body, want)
	}
}

// OpenAI's file uploads are multipart only: a file part from a base64
// argument with its file name, and other fields as text parts.
const openAIDoc = `
openapi: 3.0.0
info: {title: OpenAI API, version: "2.3.0"}
paths:
  /audio/transcriptions:
    post:
      operationId: createTranscription
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: {$ref: '#/components/schemas/CreateTranscriptionRequest'}
      responses: {"200": {description: OK}}
components:
  schemas:
    CreateTranscriptionRequest:
      type: object
      required: [file, model]
      properties:
        file: {type: string, format: binary, description: "The audio file object (not file name) to transcribe."}
        model:
          anyOf:
            - type: string
            - {type: string, enum: [whisper-1]}
        temperature: {type: number, default: 0}
        timestamp_granularities[]:
          type: array
          items: {type: string, enum: [word, segment]}
        chunking_strategy: {type: object, properties: {type: {type: string}}}
`

func TestMultipartBodies(t *testing.T) {
	t.Parallel()
	cat := catalog(t, openAIDoc, "")
	s, err := cat.InputSchema(cat.Lookup("createTranscription"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s), `"content_base64"`) || !strings.Contains(string(s), `"filename"`) {
		t.Errorf("the file argument is not described: %s", s)
	}
	got := sent(t, cat, "createTranscription", `{"body":{"file":{"filename":"talk.mp3","content_base64":"SUQzBA=="},"model":"whisper-1","temperature":0.2,"timestamp_granularities[]":["word","segment"],"chunking_strategy":{"type":"auto"}}}`)
	checkMultipart(t, got, "--B\r\nContent-Disposition: form-data; name=\"chunking_strategy\"\r\nContent-Type: application/json\r\n\r\n{\"type\":\"auto\"}\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"temperature\"\r\n\r\n0.2\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"timestamp_granularities[]\"\r\n\r\nword\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"timestamp_granularities[]\"\r\n\r\nsegment\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"talk.mp3\"\r\nContent-Type: application/octet-stream\r\n\r\nID3\x04\r\n--B--\r\n")
	for _, bad := range []string{
		`{"body":{"file":"SUQzBA==","model":"whisper-1"}}`,                                                 // not a file object
		`{"body":{"file":{"content_base64":"SUQzBA=="},"model":"whisper-1"}}`,                              // no file name
		`{"body":{"file":{"filename":"a.mp3","content_base64":"not base64!"},"model":"whisper-1"}}`,        // not base64
		`{"body":{"file":{"filename":"a.mp3","content":"x","content_base64":"eA=="},"model":"whisper-1"}}`, // both
		`{"body":{"file":{"filename":"a\r\nX: 1.mp3","content":"x"},"model":"whisper-1"}}`,                 // a header in the name
	} {
		refused(t, cat, "createTranscription", bad)
	}

	// Stripe's file upload: deepObject fields become one part each.
	stripe := catalog(t, testspecs.Corpus(t, "stripe-spec3-2022.json"), "")
	got = sent(t, stripe, "PostFiles", `{"body":{"purpose":"dispute_evidence","file":"%PDF-1.4","file_link_data":{"create":true},"expand":["links"]}}`)
	checkMultipart(t, got, "--B\r\nContent-Disposition: form-data; name=\"expand[0]\"\r\n\r\nlinks\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n%PDF-1.4\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"file_link_data[create]\"\r\n\r\ntrue\r\n"+
		"--B\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\ndispute_evidence\r\n--B--\r\n")
}

// A binary body is a file argument; a text body a string.
func TestBinaryAndTextBodies(t *testing.T) {
	t.Parallel()
	cat := catalog(t, `
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /assets:
    post:
      operationId: upload
      parameters: [{name: name, in: query, required: true, schema: {type: string}}]
      requestBody:
        required: true
        content: {application/octet-stream: {schema: {type: string, format: binary}}}
      responses: {"201": {description: ok}}
  /render:
    post:
      operationId: render
      requestBody:
        content: {text/plain: {schema: {type: string}}, text/x-markdown: {schema: {type: string}}}
      responses: {"200": {description: ok}}
`, "")
	got := sent(t, cat, "upload", `{"name":"a.zip","body":{"content_base64":"UEsDBA==","content_type":"application/zip"}}`)
	if got.Target != "/assets?name=a.zip" || got.Header.Get("Content-Type") != "application/zip" || got.Body != "PK\x03\x04" {
		t.Errorf("upload sent %s %q %q", got.Target, got.Header.Get("Content-Type"), got.Body)
	}
	got = sent(t, cat, "render", `{"body":"# Title & more"}`)
	if got.Header.Get("Content-Type") != "text/plain" || got.Body != "# Title & more" {
		t.Errorf("render sent %q %q", got.Header.Get("Content-Type"), got.Body)
	}
}

// Integers keep their digits: a 19-digit ID is not rounded.
func TestNumbersAreSentAsWritten(t *testing.T) {
	t.Parallel()
	cat := catalog(t, swagger2Doc, "")
	got := sent(t, cat, "search", `{"ids":[9007199254740993,1234567890123456789]}`)
	if want := "/search/9007199254740993%7C1234567890123456789"; got.Target != want {
		t.Errorf("sent %s, want %s", got.Target, want)
	}
}
