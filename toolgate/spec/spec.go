// Package spec loads an OpenAPI 3.0 or 3.1 document, or a Swagger 2.0
// document converted on load, into the operations that toolgate turns into
// tools. It decodes only what tools need and resolves local $refs lazily,
// cycles included: GitHub's 13 MB description loads in a fraction of the
// time and memory that a full object model takes.
//
// A document is untrusted input. Size and nesting are limited before
// anything is decoded. Only local references ("#/...") are followed,
// wherever they are (a path item, an operation, a parameter, a body, a
// response, a schema); a reference to a file or a URL, or one that names
// nothing, is refused when the document loads, with the location that
// holds it. Schemas are converted, when a tool is first listed, to JSON
// Schema 2020-12 that clients compile: what they could not compile is
// dropped, and said so in the document's notes. Malformed documents get
// an error that says where.
package spec

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	// The description is decoded with segmentio's decoder, about twice as
	// fast as the standard library's on a large document: cold start is
	// dominated by it. Schemas, decoded into trees, go through the
	// standard library's, which is faster at that and takes time linear
	// in their nesting.
	json "github.com/segmentio/encoding/json"
)

// Document is a loaded API description.
type Document struct {
	// Version is "3.0.x", "3.1.x", or "2.0" for a converted Swagger document.
	Version string
	Title   string
	// Servers are the base URLs the document names, in its order.
	Servers    []Server
	Operations []*Operation
	// SecuritySchemes are the document's security schemes, by name.
	SecuritySchemes map[string]*SecurityScheme

	raw      rawDocument
	rawBytes []byte

	// rawMu guards what references resolve to, each decoded once.
	rawMu    sync.Mutex
	members  map[span]map[string]json.RawMessage // an object's members, by its place in rawBytes
	elements map[span][]json.RawMessage          // an array's elements
	derefs   map[string]json.RawMessage          // a reference → the object it leads to

	// What loading checked: schemas scanned for references, and the
	// references followed.
	scanned  map[span]bool
	followed map[string]bool

	// mu guards what follows: schemas converted, once, and what inlining
	// them found.
	mu        sync.Mutex
	converted map[span]*schema   // a schema, converted
	madeUp    map[string]*schema // a schema not in rawBytes, by its text, converted
	targets   map[string]*schema // a schema reference → the schema it names
	// namesTargets are objects of schemas given by reference (properties:
	// {$ref: ...}), converted; namesActive those being converted.
	namesTargets map[string][]property
	namesActive  map[string]bool
	notes        []Note
	noted        map[string]bool // the notes' places and texts
}

// Operation is one method on one path.
type Operation struct {
	ID          string // operationId, possibly empty
	Method      string // upper case
	Path        string
	Summary     string
	Description string
	Tags        []string
	Deprecated  bool
	Parameters  []Parameter
	Body        *Body
	// Output is the schema of the first 2xx JSON response, if any.
	Output json.RawMessage
	// Answers are the media types the operation's responses come in:
	// those of its successes (2xx), then those of its other responses,
	// each list sorted. Swagger 2.0's produces gives both.
	Answers, ErrorAnswers []string
	// Security lists the requirements that apply, alternatives of which
	// one must be met: scheme → scopes. An empty requirement means that
	// none is needed.
	Security []map[string][]string
	// Servers are the operation's own servers, or its path item's, where
	// the document gives them: they replace the document's.
	Servers []Server
	// Extensions holds the operation's x- fields.
	Extensions map[string]json.RawMessage
	// Where is the operation's location in the document, for messages.
	Where string
}

// rawDocument is the document's top level, kept raw below it.
type rawDocument struct {
	OpenAPI string `json:"openapi"`
	Swagger string `json:"swagger"`
	Info    struct {
		Title string `json:"title"`
	} `json:"info"`
	Servers  json.RawMessage                       `json:"servers"`
	Host     string                                `json:"host"`
	BasePath string                                `json:"basePath"`
	Schemes  []string                              `json:"schemes"`
	Paths    map[string]map[string]json.RawMessage `json:"paths"`
	Security []map[string][]string                 `json:"security"`
	Consumes []string                              `json:"consumes"`
	Produces []string                              `json:"produces"`

	Components struct {
		Schemas         map[string]json.RawMessage `json:"schemas"`
		Parameters      map[string]json.RawMessage `json:"parameters"`
		RequestBodies   map[string]json.RawMessage `json:"requestBodies"`
		Responses       map[string]json.RawMessage `json:"responses"`
		SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
		PathItems       map[string]json.RawMessage `json:"pathItems"`
	} `json:"components"`
	// Swagger 2.0
	Definitions         map[string]json.RawMessage `json:"definitions"`
	Parameters          map[string]json.RawMessage `json:"parameters"`
	Responses           map[string]json.RawMessage `json:"responses"`
	SecurityDefinitions map[string]json.RawMessage `json:"securityDefinitions"`
	// OpenAPI 3.1: requests the API sends, not operations to call.
	Webhooks map[string]json.RawMessage `json:"webhooks"`
}

// decode decodes part of the document into v. RawMessages in v point
// into the document instead of copying it: the document's bytes are kept,
// and never changed, for as long as the Document lives. Field names match
// exactly, as OpenAPI spells them.
func decode(data []byte, v any) error {
	rest, err := json.Parse(data, v, json.DontCopyRawMessage|json.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(bytes.TrimSpace(rest)) > 0 {
		err = errors.New("unexpected data after the value")
	}
	return err
}

// Load reads the document at path.
func Load(path string) (*Document, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext reads the document at path, and stops early, with
// context.Cause(ctx), once ctx is done. A file larger than
// MaxDocumentBytes is refused without being read.
func LoadContext(ctx context.Context, path string) (*Document, error) {
	data, err := readLimited(ctx, path)
	if err == nil {
		var doc *Document
		if doc, err = ParseContext(ctx, data); err == nil {
			return doc, nil
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: loading stopped: %w", path, context.Cause(ctx))
	}
	var perr *os.PathError
	if errors.As(err, &perr) {
		return nil, fmt.Errorf("cannot read the document: %w", err)
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// Parse reads a document from JSON or YAML bytes.
func Parse(data []byte) (*Document, error) {
	return ParseContext(context.Background(), data)
}

// ParseContext is Parse that stops early, with context.Cause(ctx), once
// ctx is done.
func ParseContext(ctx context.Context, data []byte) (doc *Document, err error) {
	defer func() {
		// The loader must never panic on hostile input; a panic here is a
		// bug, reported as an error rather than a crash.
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("the document could not be read (internal error: %v)", p)
		}
	}()
	if len(data) > MaxDocumentBytes {
		return nil, tooBig(int64(len(data)))
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errEmpty
	}
	fromYAML := data[0] != '{'
	if fromYAML {
		if data, err = yamlToJSON(data); err != nil {
			return nil, err
		}
	} else if err := checkNesting(data); err != nil {
		return nil, err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	d := &Document{}
	if err := decode(data, &d.raw); err != nil {
		// The fast decoder does not say where; the standard one does.
		var probe any
		if serr := stdjson.Unmarshal(data, &probe); serr != nil {
			err = serr
		} else if serr := stdjson.Unmarshal(data, &rawDocument{}); serr != nil {
			err = serr
		}
		return nil, jsonError(data, err, fromYAML)
	}
	d.rawBytes = data
	switch {
	case strings.HasPrefix(d.raw.OpenAPI, "3."):
		d.Version = d.raw.OpenAPI
	case d.raw.Swagger == "2.0":
		d.Version = "2.0"
	case d.raw.OpenAPI != "":
		return nil, fmt.Errorf("openapi %q is not supported: use 3.0, 3.1, or Swagger 2.0", d.raw.OpenAPI)
	default:
		return nil, errors.New("neither an \"openapi\" nor a \"swagger\" field: is this an OpenAPI document?")
	}
	if len(d.raw.Paths) == 0 {
		if n := len(d.raw.Webhooks); n > 0 {
			return nil, fmt.Errorf("the document has no paths, only webhooks (%d): webhooks are requests the API sends, not operations to call, so there are no tools", n)
		}
		return nil, errors.New("the document has no paths, so no operations")
	}
	d.Title = d.raw.Info.Title
	if err := d.servers(); err != nil {
		return nil, err
	}
	if err := d.securitySchemes(); err != nil {
		return nil, err
	}
	if err := d.operations(ctx); err != nil {
		return nil, err
	}
	if len(d.Operations) == 0 {
		return nil, fmt.Errorf("the document's %d paths have no operations", len(d.raw.Paths))
	}
	return d, nil
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// rawOperation is an operation before its references are resolved.
type rawOperation struct {
	OperationID string                     `json:"operationId"`
	Summary     string                     `json:"summary"`
	Description string                     `json:"description"`
	Tags        []string                   `json:"tags"`
	Deprecated  bool                       `json:"deprecated"`
	Parameters  []json.RawMessage          `json:"parameters"`
	RequestBody json.RawMessage            `json:"requestBody"`
	Responses   map[string]json.RawMessage `json:"responses"`
	Security    *[]map[string][]string     `json:"security"`
	Servers     json.RawMessage            `json:"servers"`
	Consumes    []string                   `json:"consumes"` // Swagger 2.0
	Produces    []string                   `json:"produces"` // Swagger 2.0
}

func (d *Document) operations(ctx context.Context) error {
	paths := make([]string, 0, len(d.raw.Paths))
	for p := range d.raw.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		item, err := d.pathItem(d.raw.Paths[path], "paths."+path)
		if err != nil {
			return err
		}
		var shared []json.RawMessage
		if raw, ok := item["parameters"]; ok {
			if err := decode(raw, &shared); err != nil {
				return fmt.Errorf("paths.%s.parameters: %v", path, err)
			}
		}
		var servers []Server
		if d.Version != "2.0" {
			if servers, err = readServers(item["servers"], "paths."+path+".servers"); err != nil {
				return err
			}
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			where := "paths." + path + "." + m
			op, err := d.operation(path, m, raw, shared, where)
			if err != nil {
				return err
			}
			if op.Servers == nil {
				op.Servers = servers
			}
			if err := d.prepare(ctx, op); err != nil {
				return err
			}
			d.Operations = append(d.Operations, op)
		}
	}
	return nil
}

// pathItem returns a path item's fields, those of the path item its $ref
// names included (its own fields win).
func (d *Document) pathItem(item map[string]json.RawMessage, where string) (map[string]json.RawMessage, error) {
	seen := map[string]bool{}
	for {
		var ref string
		if raw, ok := item["$ref"]; !ok || decode(raw, &ref) != nil || ref == "" {
			return item, nil
		}
		if seen[ref] {
			return nil, fmt.Errorf("%s: the reference %q leads back to itself", where, ref)
		}
		seen[ref] = true
		raw, err := d.resolve(ref, where)
		if err != nil {
			return nil, err
		}
		var target map[string]json.RawMessage
		if err := decode(raw, &target); err != nil {
			return nil, fmt.Errorf("%s: the reference %q: not a path item: %v", where, ref, err)
		}
		merged := make(map[string]json.RawMessage, len(item)+len(target))
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range item {
			if k != "$ref" {
				merged[k] = v
			}
		}
		item = merged
	}
}

func (d *Document) operation(path, method string, raw json.RawMessage, shared []json.RawMessage, where string) (*Operation, error) {
	all := topLevel(raw)
	if _, ok := all["$ref"]; ok {
		// An operation given by reference is not OpenAPI, but documents
		// split into files do it.
		var err error
		if raw, err = d.deref(raw, where); err != nil {
			return nil, err
		}
		all = topLevel(raw)
	}
	var ro rawOperation
	if err := decode(raw, &ro); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	op := &Operation{ID: ro.OperationID, Method: strings.ToUpper(method), Path: path, Summary: ro.Summary,
		Description: ro.Description, Tags: ro.Tags, Deprecated: ro.Deprecated, Where: where, Extensions: map[string]json.RawMessage{}}
	for k, v := range all {
		if strings.HasPrefix(k, "x-") {
			op.Extensions[k] = v
		}
	}
	if ro.Security != nil {
		op.Security = *ro.Security
	} else {
		op.Security = d.raw.Security
	}
	if d.Version != "2.0" {
		servers, err := readServers(ro.Servers, where+".servers")
		if err != nil {
			return nil, err
		}
		op.Servers = servers
	}
	// Path-level parameters apply unless the operation redefines them.
	params := map[string]Parameter{}
	var order []string
	for i, list := range [][]json.RawMessage{shared, ro.Parameters} {
		for j, p := range list {
			loc := fmt.Sprintf("%s.parameters[%d]", where, j)
			if i == 0 {
				loc = fmt.Sprintf("paths.%s.parameters[%d]", path, j)
			}
			par, body, err := d.parameter(p, loc)
			if err != nil {
				return nil, err
			}
			if body != nil { // Swagger 2.0 body parameter
				op.Body = body
				continue
			}
			if par.In == "formData" && d.Version != "2.0" {
				continue
			}
			key := par.In + ":" + par.Name
			if _, seen := params[key]; !seen {
				order = append(order, key)
			}
			params[key] = par
		}
	}
	for _, k := range order {
		p := params[k]
		p.Credential = d.credentialOf(p.In, p.Name, op.Security)
		op.Parameters = append(op.Parameters, p)
	}
	if d.Version == "2.0" {
		d.swagger2Body(op, ro)
	} else if len(ro.RequestBody) > 0 {
		body, err := d.requestBody(ro.RequestBody, op.Method, where+".requestBody")
		if err != nil {
			return nil, err
		}
		op.Body = body
	}
	if err := d.output(op, ro, where+".responses"); err != nil {
		return nil, err
	}
	return op, nil
}

// output reads an operation's responses: the schema of its first 2xx
// JSON answer, and the media types of its answers, successes and others
// apart, each sorted by preference (JSON first). A response other than a
// success that cannot be read is left out: it only names a media type.
func (d *Document) output(op *Operation, ro rawOperation, where string) error {
	codes := make([]string, 0, len(ro.Responses))
	for c := range ro.Responses {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	success, other := map[string]bool{}, map[string]bool{}
	for _, c := range codes {
		ok := strings.HasPrefix(c, "2")
		raw, err := d.deref(ro.Responses[c], where+"."+c)
		if err != nil && ok {
			return err
		}
		var r struct {
			Content map[string]struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"content"`
			Schema json.RawMessage `json:"schema"` // Swagger 2.0
		}
		if err == nil {
			err = decode(raw, &r)
		}
		switch {
		case err != nil && ok:
			return fmt.Errorf("%s.%s: %v", where, c, err)
		case err != nil:
			continue
		}
		types := other
		if ok {
			types = success
		}
		for ct := range r.Content {
			types[ct] = true
		}
		if !ok || op.Output != nil {
			continue
		}
		if len(r.Schema) > 0 {
			op.Output = r.Schema
		} else if ct := pickContentType(r.Content); ct != "" && strings.Contains(ct, "json") {
			op.Output = r.Content[ct].Schema
		}
	}
	if d.Version == "2.0" {
		produces := ro.Produces
		if produces == nil {
			produces = d.raw.Produces
		}
		for _, ct := range produces {
			success[ct], other[ct] = true, true
		}
	}
	op.Answers, op.ErrorAnswers = preferred(success), preferred(other)
	return nil
}

// jsonError turns a decoding error into one that says where: the line
// and column in a JSON document, the field in one converted from YAML.
func jsonError(data []byte, err error, fromYAML bool) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("malformed JSON at line %d, column %d: %v", line, col, se)
	case errors.As(err, &te) && te.Field == "":
		return fmt.Errorf("the document is %s, not an object: is this an OpenAPI document?", jsonValue[te.Value])
	case errors.As(err, &te):
		what := fmt.Sprintf("%s where %s was expected", jsonValue[te.Value], jsonKind(te.Type))
		if fromYAML {
			return fmt.Errorf("%s: %s", te.Field, what)
		}
		line, col := position(data, te.Offset)
		return fmt.Errorf("at line %d, column %d (%s): %s", line, col, te.Field, what)
	}
	return fmt.Errorf("the document cannot be read: %v", err)
}

// jsonValue names the kinds of JSON value a decoding error reports.
var jsonValue = map[string]string{"object": "an object", "array": "an array", "string": "a string",
	"number": "a number", "bool": "a boolean", "null": "null"}

// jsonKind says what kind of JSON value decodes into t.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Interface:
		return "a value"
	}
	return "a number"
}

func position(data []byte, offset int64) (line, col int) {
	line = 1
	for i := int64(0); i < offset && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 0
		} else {
			col++
		}
	}
	return line, col
}
