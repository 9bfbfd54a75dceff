package toolgate_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rubicon-go/rubicon/internal/testkit"
	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// The judge of toolgate's requests is Stoplight Prism, a mock server
// that validates each request against the document: its parameters, its
// body in the media type sent, its Accept and its credentials. .ci/run
// installs it from npm at a pinned version; it runs with the Node 22
// installed beside it.
const (
	prismPackage = "@stoplight/prism-cli"
	prismVersion = "5.14.2" // the last that runs on Node 22
)

// prismEnv names an environment variable that limits the judge to the
// documents whose names contain its value.
const prismEnv = "TOOLGATE_PRISM_ONLY"

// TestPrismFindsEveryRequestValid calls every operation of every corpus
// document (and OpenAI's) through toolgate, with arguments made from the
// tool's input schema and every credential its schemes take, against
// Prism serving the same document on loopback, and fails on each request
// Prism finds invalid: a parameter, a body, a media type, an Accept or a
// credential that the document does not allow, or a path it does not
// have. Each document is made loopback-only first: its servers,
// callbacks and links are removed, so that nothing is called elsewhere.
func TestPrismFindsEveryRequestValid(t *testing.T) {
	testkit.Long(t) // the judge calls every operation of the corpus
	n := testspecs.Node(t, "18.20", prismPackage)
	prism := filepath.Join(n.Modules, "@stoplight", "prism-cli", "dist", "index.js")
	if v := installedVersion(t, n.Modules, prismPackage); v != prismVersion {
		t.Logf("Prism %s is installed; the judge is pinned at %s", v, prismVersion)
	}
	docs := append(testspecs.CorpusDocuments(t), openaiDoc)
	var total judged
	var mu sync.Mutex
	t.Cleanup(func() {
		t.Logf("Prism %s judged %d requests for %d operations of %d documents: %d valid, %d invalid, %d it cannot read as the document means them; "+
			"%d operations without arguments the test could make, %d that Prism could not answer",
			prismVersion, total.sent, total.operations, total.documents, total.valid, total.invalid, total.beyond, total.unmade, total.unanswered)
	})
	for _, path := range docs {
		name := testspecs.Name(path)
		if only := os.Getenv(prismEnv); only != "" && !strings.Contains(name, only) {
			continue
		}
		if _, err := spec.Load(path); err != nil {
			continue // a document the corpus keeps to be refused
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // a Prism each: one starts while another answers
			j := judge(t, n.Node, prism, path)
			mu.Lock()
			total.add(j)
			mu.Unlock()
		})
	}
}

// judged counts what the judge did.
type judged struct {
	documents, operations, sent, valid, invalid, unmade, unanswered, beyond int
}

func (j *judged) add(o judged) {
	j.documents += o.documents
	j.operations += o.operations
	j.sent += o.sent
	j.valid += o.valid
	j.invalid += o.invalid
	j.unmade += o.unmade
	j.unanswered += o.unanswered
	j.beyond += o.beyond
}

func installedVersion(t *testing.T, modules, pkg string) string {
	data, err := os.ReadFile(filepath.Join(modules, filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Version string }
	json.Unmarshal(data, &p)
	return p.Version
}

// judge has Prism judge a call of every operation of the document at path.
func judge(t *testing.T, node, prism, path string) judged {
	doc := loopbackOnly(t, path)
	d, err := spec.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, env := credentialsFor(d)
	// Every call is judged once, at once: no rate limit holds them back,
	// and none is answered from an earlier one.
	cfg += "defaults:\n  rate_limit: {read: none, write: none, destructive: none, privileged: none}\n  replay: 0\n"
	parsed, err := config.Parse([]byte(cfg))
	if err != nil {
		t.Fatalf("%s\n%s", err, cfg)
	}
	cat, err := toolgate.Build(d, parsed)
	if err != nil {
		t.Fatal(err)
	}
	url := startPrism(t, node, prism, doc)
	rec := &answers{base: http.DefaultTransport}
	c, err := toolgate.NewCaller(cat, url, parsed.Upstream, func(k string) string { return env[k] }, &http.Client{Transport: rec, Timeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := judged{documents: 1, operations: len(cat.Tools)}
	var failures []string
	kinds := map[string]int{} // of the answers Prism could not make
	var unansweredBy []string
	for _, tool := range cat.Tools {
		args, res, ok := made(t, cat, tool, c)
		if !ok {
			j.unmade++
			continue
		}
		for i, args := range withEachBody(t, tool, args) {
			if i > 0 {
				res = c.Call(context.Background(), tool, args, nil)
			}
			a := rec.take()
			if a == nil {
				failures = append(failures, fmt.Sprintf("%s %s: nothing was sent: %s", tool.Name, args, res.Text))
				j.invalid++
				continue
			}
			j.sent++
			switch why, verdict := a.verdict(); verdict {
			case invalid:
				j.invalid++
				failures = append(failures, fmt.Sprintf("%s: %s %s\n  %s\n  arguments %.600s\n  body %.600s", tool.Name, a.method, a.target, why, args, a.sent))
			case unanswered:
				j.unanswered++
				kinds[why]++
				unansweredBy = append(unansweredBy, tool.Name)
			case beyond:
				j.beyond++
				kinds[why]++
			default:
				j.valid++
			}
		}
	}
	if len(unansweredBy) > 0 {
		t.Logf("Prism could not answer %s", strings.Join(unansweredBy, ", "))
	}
	for i, f := range failures {
		if i == 20 {
			t.Errorf("%d more invalid requests", len(failures)-20)
			break
		}
		t.Errorf("Prism finds invalid: %s", f)
	}
	t.Logf("%d operations: %d requests sent, %d valid, %d invalid, %d Prism cannot read as the document means them; "+
		"%d without arguments the test could make, %d that Prism could not answer; %v",
		j.operations, j.sent, j.valid, j.invalid, j.beyond, j.unmade, j.unanswered, kinds)
	return j
}

// made calls tool through c with arguments made from its input schema:
// with the optional parameters, else only the required ones, until the
// caller's own check of them passes. It returns the arguments and the
// result, or false when none passed.
func made(t *testing.T, cat *toolgate.Catalog, tool *toolgate.Tool, c *toolgate.Caller) (json.RawMessage, toolgate.Result, bool) {
	raw, err := cat.InputSchema(tool)
	if err != nil {
		t.Fatalf("%s: %v", tool.Name, err)
	}
	var schema any
	json.Unmarshal(raw, &schema)
	tries := []testspecs.Values{{Optional: true, OptionalDepth: 1}, {}}
	if b := tool.Operation().Body; b != nil && b.ContentType == "application/x-www-form-urlencoded" {
		// Prism builds every object of a deepObject form's schema, sent
		// or not, reads a part whose schema is anyOf as a scalar, and no
		// list of objects (deserializers/style/deepObject.ts,
		// validators/body.ts): such a form is judged with its objects
		// whole, a scalar where one is allowed, and without its optional
		// lists of objects.
		for i := range tries {
			tries[i].Objects, tries[i].NoObjectLists, tries[i].ScalarsFirst = true, true, true
		}
	}
	for _, g := range tries {
		v, ok := g.Make(schema)
		if !ok {
			continue
		}
		args, _ := json.Marshal(v)
		res := c.Call(context.Background(), tool, args, nil)
		if !strings.Contains(res.Text, "The arguments do not fit") {
			return args, res, true
		}
	}
	return nil, toolgate.Result{}, false
}

// withEachBody returns args, and, for a tool whose body offers a choice
// of media types (a PATCH), the same arguments with the body in each
// other media type: a JSON Patch as a list of operations, any other the
// body as made.
func withEachBody(t *testing.T, tool *toolgate.Tool, args json.RawMessage) []json.RawMessage {
	out := []json.RawMessage{args}
	b := tool.Operation().Body
	if b == nil || len(b.Choices) == 0 {
		return out
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		t.Fatal(err)
	}
	body := toolgate.BodyArgument(tool)
	for _, ch := range b.Choices[1:] {
		with := maps.Clone(a)
		with[body+"_content_type"] = ch.ContentType
		if ch.ContentType == spec.JSONPatch {
			with[body] = []any{map[string]any{"op": "add", "path": "/metadata/labels/judge", "value": "prism"}}
		}
		data, _ := json.Marshal(with)
		out = append(out, data)
	}
	return out
}

// answers records, for the judge, the last request a caller sent and the
// answer it got.
type answers struct {
	base http.RoundTripper
	mu   sync.Mutex
	last *answer
}

// answer is a request as sent and the upstream's answer to it.
type answer struct {
	method, target, contentType string
	sent                        []byte // the request's body
	status                      int
	header                      http.Header
	body                        []byte
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	resp, err := a.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	a.mu.Lock()
	a.last = &answer{method: req.Method, target: req.URL.RequestURI(), contentType: req.Header.Get("Content-Type"), sent: sent, status: resp.StatusCode, header: resp.Header.Clone(), body: body}
	a.mu.Unlock()
	return resp, nil
}

// take returns the last answer, and forgets it.
func (a *answers) take() *answer {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := a.last
	a.last = nil
	return last
}

// Verdicts of the judge.
const (
	valid = iota
	invalid
	unanswered // Prism could not make an answer; the request was not found wrong
	beyond     // Prism cannot read the request as its document means it
)

// misread says how Prism misread the request, when each of errs, what it
// found wrong, is one of the ways it reads a form otherwise than OpenAPI
// (and the API) do, and the request shows it; "" otherwise.
//
//   - a list of objects in a URL-encoded form, written as the document's
//     deepObject encoding says (Stripe's line_items[0][price]=p), which
//     Prism reads only as JSON (validators/body.ts);
//   - a nullable list in a form, which Prism reads as one value: its
//     form style reads a list only where the type is "array" alone
//     (deserializers/style/form.ts);
//   - an object in a multipart form, sent as a JSON part as OpenAPI has
//     it, which Prism reads as text (validators/body.ts);
//   - a JSON Patch, a list as RFC 6902 has it, where the document gives
//     every kind of patch one object schema (Kubernetes');
//   - a YAML body (Kubernetes' apply patch, sent as JSON, which YAML
//     reads), which Prism reads as text.
func (a *answer) misread(errs []string) string {
	var why []string
	for _, e := range errs {
		list := bytes.HasPrefix(bytes.TrimSpace(a.sent), []byte("["))
		switch m := prismProperty.FindStringSubmatch(e); {
		case e == "body: Request body must be object" && strings.HasPrefix(a.contentType, spec.JSONPatch) && list:
			why = append(why, "a JSON Patch, a list")
		case e == "body: Request body must be object" && strings.HasSuffix(a.contentType, "yaml") && json.Valid(a.sent):
			why = append(why, "a YAML body")
		case strings.Contains(e, "Cannot deserialize JSON object array in form data") && objectList.Match(a.sent):
			why = append(why, "a form's list of objects, deepObject")
		case m != nil && m[2] == "array,null" && regexp.MustCompile(`(^|&)`+regexp.QuoteMeta(m[1])+`=`).Match(a.sent):
			why = append(why, "a form's nullable list")
		case m != nil && m[2] == "object" && bytes.Contains(a.sent, []byte(`name="`+m[1]+"\"\r\nContent-Type: application/json")):
			why = append(why, "a multipart form's JSON part")
		default:
			return ""
		}
	}
	slices.Sort(why)
	return strings.Join(slices.Compact(why), ", ")
}

// prismProperty reads the property and the type of Prism's message that a
// form's property has another type.
var prismProperty = regexp.MustCompile(`^body\.([^:]+): Request body property (?:\S+) must be ([a-z,]+)$`)

// objectList finds, in a form, a list of objects written as its
// document's deepObject encoding says (Stripe's line_items[0][price]=p),
// which Prism reads only as JSON.
var objectList = regexp.MustCompile(`(^|&)[^=&]+\[[0-9]+\]\[`)

// requestProblems are the problems Prism reports about a request (its
// router's and its validator's); the others are about the answer it
// could not make.
var requestProblems = []string{"UNPROCESSABLE_ENTITY", "NOT_ACCEPTABLE", "UNAUTHORIZED", "INVALID_CONTENT_TYPE", "NO_PATH_MATCHED_ERROR",
	"NO_METHOD_MATCHED_ERROR", "NO_SERVER_MATCHED_ERROR", "NO_RESOURCE_PROVIDED_ERROR", "NO_BASE_URL_ERROR"}

// verdict says whether Prism found the request valid, and why not.
func (a *answer) verdict() (string, int) {
	if v := a.header.Get("Sl-Violations"); v != "" {
		var violations []struct {
			Location []string `json:"location"`
			Severity string   `json:"severity"`
			Message  string   `json:"message"`
		}
		json.Unmarshal([]byte(v), &violations)
		var errs []string
		for _, x := range violations {
			if x.Severity == "Error" && len(x.Location) > 0 && x.Location[0] == "request" {
				errs = append(errs, strings.Join(x.Location[1:], ".")+": "+x.Message)
			}
		}
		if why := a.misread(errs); why != "" {
			return why, beyond
		}
		if len(errs) > 0 {
			return strings.Join(errs, "; "), invalid
		}
	}
	if !strings.Contains(a.header.Get("Content-Type"), "problem+json") {
		return "", valid
	}
	var p struct {
		Type       string `json:"type"`
		Detail     string `json:"detail"`
		Validation []struct {
			Location []string `json:"location"`
			Severity string   `json:"severity"`
			Message  string   `json:"message"`
		} `json:"validation"`
	}
	if json.Unmarshal(a.body, &p) != nil || !strings.HasPrefix(p.Type, "https://stoplight.io/prism/errors#") {
		return "", valid // the document's own problem, mocked
	}
	kind := strings.TrimPrefix(p.Type, "https://stoplight.io/prism/errors#")
	if !slices.Contains(requestProblems, kind) {
		return kind, unanswered
	}
	var errs []string
	for _, v := range p.Validation {
		if v.Severity == "Error" {
			errs = append(errs, strings.Join(v.Location, ".")+": "+v.Message)
		}
	}
	if why := a.misread(errs); why != "" && len(errs) > 0 {
		return why, beyond
	}
	return fmt.Sprintf("%d %s: %s; %s", a.status, kind, p.Detail, strings.Join(errs, "; ")), invalid
}

// loopbackOnly writes the copy of the document at path that toolgate and
// Prism are given: it names no server, callback or link (Prism calls a
// callback's URL, and toolgate a server an operation names: nothing
// leaves loopback only when none is left), and its answers keep their
// media types without their schemas, as do the schemas no request refers
// to: toolgate's requests do not depend on them, and Prism takes longer
// than a CI run to start on Stripe's document with them (more than ten
// minutes, where it starts in seconds without).
func loopbackOnly(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if strings.HasSuffix(path, ".json") {
		err = json.Unmarshal(data, &d)
	} else {
		err = yaml.Unmarshal(data, &d)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"servers", "host", "basePath", "schemes"} {
		delete(d, k)
	}
	if c, ok := d["components"].(map[string]any); ok {
		delete(c, "callbacks")
		delete(c, "links")
		responses, _ := c["responses"].(map[string]any)
		for _, r := range responses {
			if m, ok := r.(map[string]any); ok {
				delete(m, "links")
			}
		}
	}
	paths, _ := d["paths"].(map[string]any)
	components, _ := d["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for _, item := range paths {
		item, _ := item.(map[string]any)
		delete(item, "servers")
		for _, op := range item {
			op, ok := op.(map[string]any)
			if !ok {
				continue
			}
			delete(op, "servers")
			delete(op, "callbacks")
			formArrays(op, schemas)
			responses, _ := op["responses"].(map[string]any)
			for _, r := range responses {
				if m, ok := r.(map[string]any); ok {
					delete(m, "links")
				}
			}
		}
	}
	withoutAnswerSchemas(d)
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".json")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// withoutAnswerSchemas drops the schemas of d's JSON responses, keeping
// their media types (those of other media types, such as an image, are
// small, and Prism answers them only with their schema), and then the
// component schemas (definitions, in Swagger 2.0) that nothing refers to
// any longer.
func withoutAnswerSchemas(d map[string]any) {
	emptied := func(responses any) {
		list, _ := responses.(map[string]any)
		for _, r := range list {
			r, _ := r.(map[string]any)
			delete(r, "schema") // Swagger 2.0
			content, _ := r["content"].(map[string]any)
			for ct := range content {
				if strings.Contains(ct, "json") {
					content[ct] = map[string]any{"schema": map[string]any{}}
				}
			}
			delete(r, "headers")
		}
	}
	paths, _ := d["paths"].(map[string]any)
	for _, item := range paths {
		item, _ := item.(map[string]any)
		for _, op := range item {
			if op, ok := op.(map[string]any); ok {
				emptied(op["responses"])
			}
		}
	}
	emptied(d["responses"])
	schemas, prefix := d["definitions"], "#/definitions/"
	components, _ := d["components"].(map[string]any)
	if components != nil {
		emptied(components["responses"])
		schemas, prefix = components["schemas"], "#/components/schemas/"
	}
	all, _ := schemas.(map[string]any)
	if all == nil {
		return
	}
	// The schemas that the rest of the document refers to, and those they
	// refer to in turn.
	reached := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, prefix) {
				name, _, _ := strings.Cut(strings.TrimPrefix(ref, prefix), "/")
				if !reached[name] {
					reached[name] = true
					walk(all[name])
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for k, v := range d {
		if k != "definitions" && k != "components" {
			walk(v)
		}
	}
	for k, v := range components {
		if k != "schemas" {
			walk(v)
		}
	}
	for name := range all {
		if !reached[name] {
			delete(all, name)
		}
	}
}

// formArrays writes out, in a form body of op (URL-encoded or multipart),
// the encoding that OpenAPI gives a list property by default (style
// form, exploded: a pair or a part per item), which changes nothing it
// means: Prism reads a list from a form only when its encoding is written
// (packages/http/src/validator/validators/body.ts keeps the last of
// repeated names otherwise).
func formArrays(op map[string]any, schemas map[string]any) {
	body, _ := op["requestBody"].(map[string]any)
	content, _ := body["content"].(map[string]any)
	for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data"} {
		if form, ok := content[ct].(map[string]any); ok {
			formArraysOf(form, schemas)
		}
	}
}

func formArraysOf(form, schemas map[string]any) {
	schema, _ := form["schema"].(map[string]any)
	if ref, ok := schema["$ref"].(string); ok {
		schema, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	props, _ := schema["properties"].(map[string]any)
	encoding, _ := form["encoding"].(map[string]any)
	for name, p := range props {
		p, _ := p.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			p, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		if types, _ := p["type"].([]any); p["type"] != "array" && !slices.Contains(types, any("array")) {
			continue
		}
		if _, given := encoding[name]; given {
			continue
		}
		if encoding == nil {
			encoding = map[string]any{}
			form["encoding"] = encoding
		}
		encoding[name] = map[string]any{"style": "form", "explode": true}
	}
}

// credentialsFor returns a configuration that gives every scheme of the
// document a credential of the kind it takes, and the environment that
// holds them.
func credentialsFor(d *spec.Document) (string, map[string]string) {
	var b strings.Builder
	b.WriteString("upstream:\n  schemes:\n")
	env := map[string]string{}
	names := slices.Sorted(maps.Keys(d.SecuritySchemes))
	for i, name := range names {
		s := d.SecuritySchemes[name]
		key := fmt.Sprintf("SECRET_%d", i)
		var kind string
		switch {
		case s.Type == spec.TypeAPIKey:
			kind, env[key] = config.AuthAPIKey, "key-"+key
		case s.Type == spec.TypeHTTP && s.Scheme == "basic":
			kind, env[key] = config.AuthBasic, "user:pass-"+key
		case s.Bearer():
			kind, env[key] = config.AuthBearer, "token-"+key
		default:
			fmt.Fprintf(&b, "    %q: {type: none}\n", name)
			continue
		}
		fmt.Fprintf(&b, "    %q: {type: %s, env: %s}\n", name, kind, key)
	}
	if len(names) == 0 {
		return "", env
	}
	return b.String(), env
}

// startPrism serves the document at doc with Prism's mock, validating
// requests, on a port of loopback, and returns its URL once it listens.
func startPrism(t *testing.T, node, prism, doc string) string {
	// Prism is given a port that was free a moment before; another
	// process (the rest of the suite runs beside this test) may take it
	// first, and then Prism is started again on another.
	for range 5 {
		if url, ok := tryPrism(t, node, prism, doc); ok {
			return url
		}
	}
	t.Fatal("Prism found each of 5 free ports taken")
	return ""
}

// tryPrism starts Prism on a free port, and reports false if the port was
// taken before Prism could listen on it.
func tryPrism(t *testing.T, node, prism, doc string) (string, bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(node, prism, "mock", "--host", "127.0.0.1", "--port", port, "--errors", doc)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "Prism is listening") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok && strings.Contains(stderr.String(), "EADDRINUSE") {
			return "", false
		}
		if !ok {
			t.Fatalf("Prism stopped before it listened: %s", stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("Prism did not listen within 3 minutes: %s", stderr.String())
	}
	return "http://127.0.0.1:" + port, true
}
