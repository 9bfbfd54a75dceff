package spec

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	json "github.com/segmentio/encoding/json"
)

// Parameter is a path, query, header or cookie parameter.
type Parameter struct {
	Name, In    string
	Required    bool
	Description string
	Schema      json.RawMessage
	// Style and Explode say how the value is written, as OpenAPI 3 defines
	// them; Swagger 2.0's collectionFormat is converted to them. Style is
	// never empty: a parameter without one has its location's default.
	Style   string
	Explode bool
	// AllowReserved lets a query value keep RFC 3986's reserved characters.
	AllowReserved bool
	// ContentType is the media type of a parameter given by "content"
	// rather than by a schema: its value is written in that type (JSON).
	ContentType string
	// MultiSegment marks a path parameter whose value may span several
	// segments (GitHub's x-multi-segment, as in a file's path): its "/"
	// stay separators, and every segment is encoded on its own.
	MultiSegment bool
	// Credential names the security scheme whose credential the
	// parameter carries: the API key an apiKey scheme names, or the token
	// of an OAuth2 or bearer scheme the operation requires, where the
	// document takes it as a parameter named token or access_token
	// (Slack's). Such a parameter is filled by whoever authenticates the
	// call, never given as an argument.
	Credential string
}

// Body is a request body.
type Body struct {
	Required bool
	// ContentType is the media type toolgate sends, chosen among those the
	// document offers: JSON first, then forms, then multipart.
	ContentType string
	Schema      json.RawMessage
	// Encoding says how the properties of a form or multipart body are
	// written, by property name; a property without an entry has the
	// default encoding.
	Encoding map[string]Encoding
	// Choices are the media types a caller chooses among, each with its
	// schema, the preferred one (ContentType) first: for a PATCH, whose
	// media types are different kinds of change (a merge patch, a JSON
	// Patch, Kubernetes' strategic merge and apply patches), every one
	// the document offers that can be built; empty otherwise. A JSON
	// Patch whose schema is not a list has RFC 6902's.
	Choices []BodyChoice
	// Credentials are the form fields that carry a scheme's credential
	// (Swagger 2.0 formData parameters, as Parameter.Credential says),
	// left out of the schema: field → scheme.
	Credentials map[string]string
}

// BodyChoice is one media type a body may be sent in.
type BodyChoice struct {
	ContentType string
	Schema      json.RawMessage
	Encoding    map[string]Encoding
}

// JSONPatch is the media type of RFC 6902's JSON Patch.
const JSONPatch = "application/json-patch+json"

// jsonPatchSchema is RFC 6902's JSON Patch, for a document that gives a
// JSON Patch body a schema that is not a list (Kubernetes gives one
// object schema to every kind of patch).
const jsonPatchSchema = `{"type":"array","description":"A JSON Patch (RFC 6902): operations applied in order.",` +
	`"items":{"type":"object","required":["op","path"],"properties":{` +
	`"op":{"type":"string","enum":["add","remove","replace","move","copy","test"]},` +
	`"path":{"type":"string","description":"A JSON Pointer (RFC 6901) to the part changed, such as /metadata/labels/app."},` +
	`"value":{"description":"The value, for add, replace and test."},` +
	`"from":{"type":"string","description":"A JSON Pointer to the part moved or copied, for move and copy."}}}}`

// Encoding is how one property of a form or multipart body is written:
// OpenAPI 3's encoding object, or Swagger 2.0's collectionFormat.
type Encoding struct {
	// ContentType is the media type of the property's part.
	ContentType string
	// Style is empty when the document gives no style, explode or
	// allowReserved: the property is then written by its content type
	// (an object as JSON).
	Style         string
	Explode       bool
	AllowReserved bool
}

// Serialization styles of OpenAPI 3.
const (
	StyleSimple         = "simple"
	StyleLabel          = "label"
	StyleMatrix         = "matrix"
	StyleForm           = "form"
	StyleSpaceDelimited = "spaceDelimited"
	StylePipeDelimited  = "pipeDelimited"
	StyleDeepObject     = "deepObject"
	// StyleTabDelimited is Swagger 2.0's collectionFormat "tsv", which
	// OpenAPI 3 does not have.
	StyleTabDelimited = "tabDelimited"
)

// styles are the styles each location allows, its default first.
var styles = map[string][]string{
	"path":     {StyleSimple, StyleLabel, StyleMatrix},
	"query":    {StyleForm, StyleSpaceDelimited, StylePipeDelimited, StyleDeepObject},
	"header":   {StyleSimple},
	"cookie":   {StyleForm},
	"formData": {StyleForm, StyleSpaceDelimited, StylePipeDelimited, StyleDeepObject},
}

// rawParameter is a parameter as OpenAPI 3 or Swagger 2.0 writes it.
type rawParameter struct {
	Name          string          `json:"name"`
	In            string          `json:"in"`
	Required      bool            `json:"required"`
	Description   string          `json:"description"`
	Schema        json.RawMessage `json:"schema"`
	Style         string          `json:"style"`
	Explode       *bool           `json:"explode"`
	AllowReserved bool            `json:"allowReserved"`
	Content       map[string]struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"content"`
	// Swagger 2.0 non-body parameters describe their value in place.
	Type             string `json:"type"`
	CollectionFormat string `json:"collectionFormat"`
	MultiSegment     bool   `json:"x-multi-segment"`
}

// parameter resolves one parameter; a Swagger 2.0 body parameter comes back
// as a Body, whose media type the operation's consumes decides later.
func (d *Document) parameter(raw json.RawMessage, where string) (Parameter, *Body, error) {
	raw, err := d.deref(raw, where)
	if err != nil {
		return Parameter{}, nil, err
	}
	var p rawParameter
	if err := decode(raw, &p); err != nil {
		return Parameter{}, nil, fmt.Errorf("%s: %v", where, err)
	}
	if p.Name == "" || p.In == "" {
		return Parameter{}, nil, fmt.Errorf("%s: a parameter needs a name and an \"in\"", where)
	}
	par := Parameter{Name: p.Name, In: p.In, Required: p.Required || p.In == "path", Description: p.Description,
		Schema: p.Schema, AllowReserved: p.AllowReserved && p.In == "query", MultiSegment: p.MultiSegment && p.In == "path"}
	if d.Version == "2.0" {
		if p.In == "body" {
			return Parameter{}, &Body{Required: p.Required, ContentType: "application/json", Schema: p.Schema}, nil
		}
		var fields map[string]json.RawMessage
		if err := decode(raw, &fields); err != nil {
			return Parameter{}, nil, fmt.Errorf("%s: %v", where, err)
		}
		par.Schema = swagger2Schema(fields)
		par.Style, par.Explode = collectionFormat(p.CollectionFormat, p.In)
		return par, nil, nil
	}
	if len(par.Schema) == 0 && len(p.Content) > 0 {
		// A parameter given by a media type is written in it, whatever
		// the style would say.
		ct := pickContentType(p.Content)
		par.ContentType, par.Schema = ct, p.Content[ct].Schema
	}
	par.Style, par.Explode = style(p.Style, p.Explode, p.In)
	return par, nil, nil
}

// style returns the style and explode of a parameter in location in, with
// OpenAPI 3's defaults; a style the location does not allow falls back to
// its default, the only reading of a wrong document that sends something
// the API understands.
func style(s string, explode *bool, in string) (string, bool) {
	allowed := styles[in]
	if len(allowed) == 0 {
		return s, explode != nil && *explode
	}
	if !slices.Contains(allowed, s) {
		s = allowed[0]
	}
	if explode != nil {
		return s, *explode
	}
	return s, s == StyleForm
}

// collectionFormat converts Swagger 2.0's collectionFormat (csv when not
// given) to a style and explode for a parameter in location in.
func collectionFormat(format, in string) (string, bool) {
	def := StyleSimple
	if in == "query" || in == "formData" || in == "cookie" {
		def = StyleForm
	}
	switch format {
	case "ssv":
		return StyleSpaceDelimited, false
	case "tsv":
		return StyleTabDelimited, false
	case "pipes":
		return StylePipeDelimited, false
	case "multi":
		return StyleForm, true
	}
	return def, false
}

// swagger2Keywords are the fields of a Swagger 2.0 non-body parameter, or
// of its items, that constrain the value: they are kept in its schema so
// that a value out of bounds is refused before anything is sent.
var swagger2Keywords = []string{"type", "format", "enum", "default", "minimum", "maximum", "exclusiveMinimum",
	"exclusiveMaximum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf"}

// swagger2Schema returns the JSON Schema of a Swagger 2.0 non-body
// parameter or items object. A file becomes a binary string, which the
// tool's input schema turns into a file argument.
func swagger2Schema(fields map[string]json.RawMessage) json.RawMessage {
	schema := map[string]json.RawMessage{}
	for _, k := range swagger2Keywords {
		if v, ok := fields[k]; ok {
			schema[k] = v
		}
	}
	if t := fields["type"]; string(t) == `"file"` {
		schema["type"], schema["format"] = json.RawMessage(`"string"`), json.RawMessage(`"binary"`)
	}
	if items := fields["items"]; len(items) > 0 {
		var sub map[string]json.RawMessage
		if decode(items, &sub) == nil && sub["$ref"] == nil {
			schema["items"] = swagger2Schema(sub)
		} else {
			schema["items"] = items
		}
	}
	out, _ := json.Marshal(schema)
	return out
}

// swagger2Body gives a Swagger 2.0 operation's body its media type, from
// the operation's consumes or the document's, and gathers its formData
// parameters into an object body: multipart when it holds a file or
// consumes offers nothing else, a URL-encoded form otherwise.
func (d *Document) swagger2Body(op *Operation, ro rawOperation) {
	consumes := ro.Consumes
	if consumes == nil {
		consumes = d.raw.Consumes
	}
	offered := map[string]bool{}
	for _, ct := range consumes {
		offered[ct] = true
	}
	if op.Body != nil {
		if ct := pickContentType(offered); ct != "" {
			op.Body.ContentType = concrete(ct)
		}
		if op.Method == "PATCH" {
			choices := map[string]BodyChoice{}
			for ct := range offered {
				choices[ct] = BodyChoice{ContentType: ct, Schema: op.Body.Schema}
			}
			op.Body.Choices = d.bodyChoices(choices)
		}
	}
	var keep []Parameter
	props := map[string]any{}
	encoding := map[string]Encoding{}
	var required []string
	file := false
	var credentials map[string]string
	for _, p := range op.Parameters {
		if p.In != "formData" {
			keep = append(keep, p)
			continue
		}
		if p.Credential != "" {
			if credentials == nil {
				credentials = map[string]string{}
			}
			credentials[p.Name] = p.Credential
			continue
		}
		var s map[string]any
		json.Unmarshal(p.Schema, &s)
		if s == nil {
			s = map[string]any{}
		}
		if p.Description != "" {
			s["description"] = p.Description
		}
		props[p.Name] = s
		if s["format"] == "binary" {
			file = true
		}
		if s["type"] == "array" {
			encoding[p.Name] = Encoding{Style: p.Style, Explode: p.Explode}
		}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	op.Parameters = keep
	if len(props) == 0 && len(credentials) > 0 && op.Body == nil {
		// Only the credential is a form field: the form is still sent.
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{}})
		op.Body = &Body{ContentType: "application/x-www-form-urlencoded", Schema: schema, Credentials: credentials}
		return
	}
	if len(props) == 0 || op.Body != nil {
		return // a body parameter and form parameters: the document is wrong; the body wins
	}
	ct := "application/x-www-form-urlencoded"
	if file || offered["multipart/form-data"] && !offered[ct] {
		ct = "multipart/form-data"
	}
	form := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		form["required"] = required
	}
	schema, _ := json.Marshal(form)
	op.Body = &Body{Required: len(required) > 0, ContentType: ct, Schema: schema, Encoding: encoding, Credentials: credentials}
}

// bodyChoices returns the choices of a PATCH body among those the
// document offers, by media type: those toolgate can build, the
// preferred first (see contentPreference), each a JSON Patch given
// RFC 6902's schema when the document's is not a list. With fewer than
// two, there is no choice: nil.
func (d *Document) bodyChoices(offered map[string]BodyChoice) []BodyChoice {
	var out []BodyChoice
	for _, ct := range preferred(offered) {
		if !buildable(ct) {
			continue
		}
		c := offered[ct]
		if mediaType(ct) == JSONPatch && !d.isList(c.Schema) {
			c.Schema = json.RawMessage(jsonPatchSchema)
		}
		out = append(out, c)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// buildable reports whether a body of media type ct can be built from an
// agent's arguments: JSON and what JSON is (YAML), forms, and text.
func buildable(ct string) bool {
	m := mediaType(ct)
	return contentPreference(m) < wildcard && (strings.Contains(m, "json") || strings.HasSuffix(m, "yaml") || isForm(m) ||
		isMultipart(m) || strings.HasPrefix(m, "text/plain"))
}

// isList reports whether a schema, given by reference or not, is a list.
func (d *Document) isList(raw json.RawMessage) bool {
	raw, err := d.deref(raw, "")
	if err != nil {
		return false
	}
	var s struct {
		Type any `json:"type"`
	}
	if decode(raw, &s) != nil {
		return false
	}
	return s.Type == "array"
}

// rawEncoding is OpenAPI 3's encoding object.
type rawEncoding struct {
	ContentType   string `json:"contentType"`
	Style         string `json:"style"`
	Explode       *bool  `json:"explode"`
	AllowReserved *bool  `json:"allowReserved"`
}

func (d *Document) requestBody(raw json.RawMessage, method, where string) (*Body, error) {
	raw, err := d.deref(raw, where)
	if err != nil {
		return nil, err
	}
	var rb struct {
		Required bool `json:"required"`
		Content  map[string]struct {
			Schema   json.RawMessage        `json:"schema"`
			Encoding map[string]rawEncoding `json:"encoding"`
		} `json:"content"`
	}
	if err := decode(raw, &rb); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	ct := pickContentType(rb.Content)
	if ct == "" {
		return nil, nil
	}
	media := rb.Content[ct]
	b := &Body{Required: rb.Required, ContentType: concrete(ct), Schema: media.Schema, Encoding: encodings(ct, media.Encoding)}
	if method == "PATCH" {
		choices := map[string]BodyChoice{}
		for ct, media := range rb.Content {
			choices[ct] = BodyChoice{ContentType: ct, Schema: media.Schema, Encoding: encodings(ct, media.Encoding)}
		}
		b.Choices = d.bodyChoices(choices)
	}
	return b, nil
}

// encodings reads the encoding of a form or multipart body of type ct.
func encodings(ct string, raw map[string]rawEncoding) map[string]Encoding {
	if !isForm(ct) && !isMultipart(ct) {
		return nil
	}
	var out map[string]Encoding
	for name, e := range raw {
		if out == nil {
			out = map[string]Encoding{}
		}
		enc := Encoding{ContentType: e.ContentType}
		if e.Style != "" || e.Explode != nil || e.AllowReserved != nil {
			// Any of the three says the property is written by style,
			// form unless given (OpenAPI 3.1.1, 4.8.15.1).
			enc.Style, enc.Explode = style(e.Style, e.Explode, "formData")
			enc.AllowReserved = e.AllowReserved != nil && *e.AllowReserved
		}
		out[name] = enc
	}
	return out
}

func isForm(ct string) bool      { return mediaType(ct) == "application/x-www-form-urlencoded" }
func isMultipart(ct string) bool { return mediaType(ct) == "multipart/form-data" }

// mediaType is ct without its parameters, in lower case.
func mediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// contentPreference ranks the media types toolgate can build, best first:
// JSON (a merge patch over a JSON patch, which needs a list of operations
// an agent rarely means), then forms, then multipart, then text. Anything
// else comes after, in name order.
func contentPreference(ct string) int {
	m := mediaType(ct)
	switch {
	case m == "application/json":
		return 0
	case m == "application/merge-patch+json":
		return 1
	case strings.HasSuffix(m, "+json") && m != "application/json-patch+json" || strings.HasSuffix(m, "/json"):
		return 2
	case strings.Contains(m, "json") && !strings.Contains(m, "*"):
		return 3
	case m == "application/x-www-form-urlencoded":
		return 4
	case m == "multipart/form-data":
		return 5
	case strings.HasPrefix(m, "text/plain"):
		return 6
	case strings.Contains(m, "*"):
		return wildcard // a wildcard names no type to send
	}
	return 7
}

// wildcard is the preference of a media type range, such as */*.
const wildcard = 8

// concrete is a media type to send for ct, which may be a range such as
// "*/*" that names no type.
func concrete(ct string) string {
	switch m := mediaType(ct); {
	case m == "*/*" || m == "application/*":
		return "application/json"
	case m == "text/*":
		return "text/plain"
	case strings.HasSuffix(m, "/*"):
		return "application/octet-stream"
	}
	return ct
}

// pickContentType picks the media type toolgate sends or reads among
// those content offers (see contentPreference).
func pickContentType[T any](content map[string]T) string {
	if types := preferred(content); len(types) > 0 {
		return types[0]
	}
	return ""
}

// preferred returns the media types content offers, best first (see
// contentPreference), then by name.
func preferred[T any](content map[string]T) []string {
	if len(content) == 0 {
		return nil
	}
	types := make([]string, 0, len(content))
	for ct := range content {
		types = append(types, ct)
	}
	sort.Slice(types, func(i, j int) bool {
		pi, pj := contentPreference(types[i]), contentPreference(types[j])
		if pi != pj {
			return pi < pj
		}
		return types[i] < types[j]
	})
	return types
}
