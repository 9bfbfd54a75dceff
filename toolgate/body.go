package toolgate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// bodyKind is how a request body is built from its argument.
type bodyKind int

const (
	jsonBody      bodyKind = iota // the argument as JSON
	formBody                      // an object, as application/x-www-form-urlencoded
	multipartBody                 // an object, as multipart/form-data; binary properties are files
	binaryBody                    // a file argument, its bytes as the body
	textBody                      // a string, as it is
	yamlBody                      // a string as it is, any other value as JSON, which YAML reads
)

// kindOf says how a body of t of media type ct with the schema raw is
// built, from its media type and, where that is not enough, its schema,
// which it returns then (nil otherwise).
func (c *Catalog) kindOf(t *Tool, ct string, raw json.RawMessage) (bodyKind, any, error) {
	m := mediaType(ct)
	switch {
	case strings.Contains(m, "json"):
		return jsonBody, nil, nil
	case m == "application/x-www-form-urlencoded":
		return formBody, nil, nil
	case strings.HasSuffix(m, "yaml"):
		return yamlBody, nil, nil
	}
	schema, err := c.Doc.Schema(raw, t.op.Where)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case m == "multipart/form-data":
		return multipartBody, schema, nil
	case isBinary(schema) || m == "application/octet-stream" || m == "application/pdf" || m == "application/zip" ||
		m == "application/gzip" || strings.HasPrefix(m, "image/") || strings.HasPrefix(m, "audio/") || strings.HasPrefix(m, "video/"):
		return binaryBody, schema, nil
	}
	return textBody, schema, nil
}

func mediaType(ct string) string {
	ct, _, _ = strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// isBinary reports whether schema describes bytes rather than text: a
// binary string (OpenAPI 3.0, Swagger 2.0's file), or a string with a
// media type and no encoding (OpenAPI 3.1).
func isBinary(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok || m["type"] != nil && m["type"] != "string" {
		return false
	}
	if m["format"] == "binary" {
		return true
	}
	_, media := m["contentMediaType"]
	return media && m["contentEncoding"] == nil
}

// fileFields returns the properties of a multipart body's schema that are
// files, true for those that are lists of files.
func fileFields(schema any) map[string]bool {
	out := map[string]bool{}
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	for name, p := range props {
		switch {
		case isBinary(p):
			out[name] = false
		case isArray(p) && isBinary(p.(map[string]any)["items"]):
			out[name] = true
		}
	}
	return out
}

func isArray(schema any) bool {
	m, ok := schema.(map[string]any)
	return ok && m["type"] == "array"
}

// fileSchema is the argument that carries a file: its name and its bytes
// in base64 (or, for text, as they are), and its media type. named says
// whether the name is wanted (a multipart part) or not (a whole body).
func fileSchema(description string, named bool) map[string]any {
	props := map[string]any{
		"content_base64": map[string]any{"type": "string", "contentEncoding": "base64",
			"description": "The file's bytes, base64-encoded (standard alphabet)."},
		"content":      map[string]any{"type": "string", "description": "The file's content as text (UTF-8), instead of content_base64."},
		"content_type": map[string]any{"type": "string", "description": "The file's media type, such as image/png (default: application/octet-stream)."},
	}
	d := "A file: its content as content_base64, or as content for text, and optionally its content_type."
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if named {
		props["filename"] = map[string]any{"type": "string", "description": "The file's name, with its extension, such as report.pdf."}
		s["required"] = []any{"filename"}
		d = "A file: its filename, its content as content_base64, or as content for text, and optionally its content_type."
	}
	if description != "" {
		d = strings.TrimSpace(description) + " " + d
	}
	s["description"] = d
	return s
}

// bodySchema is the schema of t's body argument: the document's, as
// inline gives it, with binary parts of a multipart body, or a binary
// body, as file arguments, and a text body as a string. A body whose
// media type the agent chooses takes any of its choices' schemas.
func (c *Catalog) bodySchema(t *Tool, inline func(json.RawMessage) (any, error)) (any, error) {
	b := t.op.Body
	if len(b.Choices) == 0 {
		return c.mediaSchema(t, b.ContentType, b.Schema, inline)
	}
	var alts []any
	seen := map[string]bool{}
	for _, ch := range b.Choices {
		s, err := c.mediaSchema(t, ch.ContentType, ch.Schema, inline)
		if err != nil {
			return nil, err
		}
		text, _ := json.Marshal(s)
		if !seen[string(text)] {
			seen[string(text)] = true
			alts = append(alts, s)
		}
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return map[string]any{"anyOf": alts}, nil
}

// choiceSchema is the schema of the argument that chooses the media type
// of b, whose argument is named body.
func choiceSchema(b *spec.Body, body string) map[string]any {
	types := make([]any, len(b.Choices))
	patch := false
	for i, ch := range b.Choices {
		types[i] = ch.ContentType
		patch = patch || mediaType(ch.ContentType) == spec.JSONPatch
	}
	d := fmt.Sprintf("The media type %s is sent in (default: %s", body, b.Choices[0].ContentType)
	if patch {
		d += "; a list is sent as " + spec.JSONPatch
	}
	return map[string]any{"type": "string", "enum": types, "description": d + ")."}
}

// mediaSchema is the schema of a body of t of media type ct whose
// document's schema is raw.
func (c *Catalog) mediaSchema(t *Tool, ct string, raw json.RawMessage, inline func(json.RawMessage) (any, error)) (any, error) {
	kind, full, err := c.kindOf(t, ct, raw)
	if err != nil {
		return nil, err
	}
	schema, err := inline(raw)
	if err != nil {
		return nil, err
	}
	m, _ := schema.(map[string]any)
	desc, _ := m["description"].(string)
	switch kind {
	case binaryBody:
		return fileSchema(desc, false), nil
	case textBody:
		if m != nil && m["type"] == "string" {
			return m, nil
		}
		return map[string]any{"type": "string", "description": strings.TrimSpace(desc + " The request body, as " + mediaType(ct) + " text.")}, nil
	case multipartBody:
		files := fileFields(full)
		props, _ := m["properties"].(map[string]any)
		if len(files) == 0 || props == nil {
			break // no files, or a brief schema that leaves the parts out
		}
		// Schemas are shared with the rest of the document: copy what
		// changes.
		m = maps.Clone(m)
		props = maps.Clone(props)
		for name, list := range files {
			p, _ := props[name].(map[string]any)
			pd, _ := p["description"].(string)
			if list {
				props[name] = map[string]any{"type": "array", "description": strings.TrimSpace(pd + " A list of files."), "items": fileSchema("", true)}
			} else {
				props[name] = fileSchema(pd, true)
			}
		}
		m["properties"] = props
		return m, nil
	}
	if schema == nil {
		return map[string]any{}, nil
	}
	return schema, nil
}

// chooseBody returns the media type, schema and encoding t's body v is
// sent in: the one the argument choice names (in a, the call's
// arguments), else, for a body that offers a choice, a JSON Patch for a
// list and the preferred type for anything else. A list is never sent as
// a merge patch, nor an object as a JSON Patch.
func (c *Caller) chooseBody(t *Tool, v any, arg string, a map[string]any) (spec.BodyChoice, error) {
	b := t.op.Body
	if len(b.Choices) == 0 {
		return spec.BodyChoice{ContentType: b.ContentType, Schema: b.Schema, Encoding: b.Encoding}, nil
	}
	_, _, choiceArg := arguments(t.op)
	chosen, _ := a[choiceArg].(string)
	_, isList := v.([]any)
	isPatch := func(ch spec.BodyChoice) bool { return mediaType(ch.ContentType) == spec.JSONPatch }
	ch, found := b.Choices[0], false
	for _, c := range b.Choices {
		if chosen != "" && mediaType(chosen) == mediaType(c.ContentType) || chosen == "" && isList == isPatch(c) {
			ch, found = c, true
			break
		}
	}
	switch {
	case !found && chosen != "":
		return ch, fmt.Errorf("the argument %q is %q, which is not a media type the operation takes", choiceArg, chosen)
	case isPatch(ch) && !isList:
		return ch, fmt.Errorf("the argument %q is not a list, and a JSON Patch (%s) is a list of operations: give a list, or another %s", arg, spec.JSONPatch, choiceArg)
	case isList && !isPatch(ch) && !c.cat.listSchema(t, ch.Schema):
		return ch, fmt.Errorf("the argument %q is a list, which %s is not: give an object, or %s %s for a JSON Patch", arg, ch.ContentType, choiceArg, spec.JSONPatch)
	}
	return ch, nil
}

// listSchema reports whether raw, a schema of t's document, is a list.
func (c *Catalog) listSchema(t *Tool, raw json.RawMessage) bool {
	s, err := c.Doc.Schema(raw, t.op.Where)
	m, _ := s.(map[string]any)
	return err == nil && m["type"] == "array"
}

// encodeBody builds t's body from its argument v, named arg, among the
// call's arguments a, with the form fields that carry a credential, and
// returns it with its media type.
func (c *Caller) encodeBody(t *Tool, v any, arg string, a map[string]any, credentials map[string]string) ([]byte, string, error) {
	ch, err := c.chooseBody(t, v, arg, a)
	if err != nil {
		return nil, "", err
	}
	kind, schema, err := c.cat.kindOf(t, ch.ContentType, ch.Schema)
	if err != nil {
		return nil, "", err
	}
	ct := ch.ContentType
	if kind == formBody || kind == multipartBody {
		fields, ok := v.(map[string]any)
		if !ok {
			what := "the fields of the form"
			if kind == multipartBody {
				what = "the parts of the form"
			}
			return nil, "", fmt.Errorf("the argument %q must be an object: %s", arg, what)
		}
		if b := t.op.Body; len(b.Credentials) > 0 {
			// A credential is never the agent's: the caller's, or none.
			fields = maps.Clone(fields)
			for name := range b.Credentials {
				delete(fields, name)
				if value, ok := credentials[name]; ok {
					fields[name] = value
				}
			}
		}
		required := c.cat.requiredFields(t, ch.Schema)
		if kind == formBody {
			return formEncode(fields, ch.Encoding, required), ct, nil
		}
		return multipartEncode(fields, ch.Encoding, fileFields(schema), required, arg)
	}
	switch kind {
	case binaryBody:
		f, err := fileArgument(v, arg, false)
		if err != nil {
			return nil, "", err
		}
		if f.contentType != "" {
			ct = f.contentType
		}
		return f.data, ct, nil
	case textBody:
		s, ok := v.(string)
		if !ok {
			return nil, "", fmt.Errorf("the argument %q must be a string: the body is sent as %s text", arg, mediaType(ct))
		}
		return []byte(s), ct, nil
	case yamlBody:
		if s, ok := v.(string); ok {
			return []byte(s), ct, nil
		}
	}
	return marshal(v), ct, nil
}

// requiredFields returns the fields a form's schema raw requires.
func (c *Catalog) requiredFields(t *Tool, raw json.RawMessage) map[string]bool {
	s, err := c.Doc.Schema(raw, t.op.Where)
	m, _ := s.(map[string]any)
	list, _ := m["required"].([]any)
	if err != nil || len(list) == 0 {
		return nil
	}
	out := make(map[string]bool, len(list))
	for _, r := range list {
		if name, ok := r.(string); ok {
			out[name] = true
		}
	}
	return out
}

// formEscape escapes a form's names and values as
// application/x-www-form-urlencoded does (a space as "+").
func formEscape(s string) string { return url.QueryEscape(s) }

// formEncode writes fields as application/x-www-form-urlencoded, in name
// order. A field the encoding gives a style is written in it (Stripe's
// deepObject: metadata[order]=42); any other object is written as JSON,
// and a list as one pair per item. A field the form requires that is an
// empty list is sent empty (name=), not left out.
func formEncode(fields map[string]any, encoding map[string]spec.Encoding, required map[string]bool) []byte {
	w := writer{esc: formEscape, delim: formDelim}
	var out []string
	for _, name := range sortedKeys(fields) {
		pairs := fieldPairs(w, name, fields[name], encoding[name])
		if len(pairs) == 0 && required[name] && isEmptyList(fields[name]) {
			pairs = [][2]string{{w.esc(name), ""}}
		}
		for _, kv := range pairs {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return []byte(strings.Join(out, "&"))
}

// isEmptyList reports whether v is a list without items.
func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}

// formDelim writes the delimiters of the delimited styles in a form.
func formDelim(d string) string {
	switch d {
	case " ":
		return "+"
	case "\t":
		return "%09"
	}
	return d
}

// fieldPairs writes one field of a form as name-value pairs.
func fieldPairs(w writer, name string, v any, enc spec.Encoding) [][2]string {
	if enc.Style != "" {
		if enc.AllowReserved {
			w.esc = func(s string) string { return strings.ReplaceAll(reservedEscape(s), "%20", "+") }
		}
		return w.pairs(name, v, enc.Style, enc.Explode)
	}
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([][2]string, 0, len(x))
		for _, e := range x {
			out = append(out, [2]string{w.esc(name), w.esc(text(e))})
		}
		return out
	}
	return [][2]string{{w.esc(name), w.esc(text(v))}}
}

// file is a file argument, decoded.
type file struct {
	name, contentType string
	data              []byte
}

// fileArgument decodes a file argument (see fileSchema), named what in
// messages.
func fileArgument(v any, what string, named bool) (file, error) {
	shape := "an object with content_base64 (or content, for text)"
	if named {
		shape = "an object with filename and content_base64 (or content, for text)"
	}
	m, ok := v.(map[string]any)
	if !ok {
		return file{}, fmt.Errorf("the argument %q is a file: give %s", what, shape)
	}
	var f file
	f.name, _ = m["filename"].(string)
	f.contentType, _ = m["content_type"].(string)
	b64, hasB64 := m["content_base64"].(string)
	content, hasText := m["content"].(string)
	switch {
	case hasB64 == hasText:
		return file{}, fmt.Errorf("the argument %q is a file: give exactly one of content_base64 and content", what)
	case hasText:
		f.data = []byte(content)
	default:
		data, err := decodeBase64(b64)
		if err != nil {
			return file{}, fmt.Errorf("the argument %q: content_base64 is not base64 (%v): encode the file's bytes in standard base64", what, err)
		}
		f.data = data
	}
	if named && strings.TrimSpace(f.name) == "" {
		return file{}, fmt.Errorf("the argument %q is a file: give its filename, with its extension", what)
	}
	if !httpguts.ValidHeaderFieldValue(f.name) {
		return file{}, fmt.Errorf("the argument %q: the filename must not contain line breaks or control characters", what)
	}
	if f.contentType != "" {
		if _, _, err := mime.ParseMediaType(f.contentType); err != nil || !httpguts.ValidHeaderFieldValue(f.contentType) {
			return file{}, fmt.Errorf("the argument %q: content_type %q is not a media type such as image/png", what, f.contentType)
		}
	}
	return f, nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not, and
// ignores line breaks.
func decodeBase64(s string) ([]byte, error) {
	s = strings.NewReplacer("\n", "", "\r", "").Replace(strings.TrimSpace(s))
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var data []byte
		if data, err = enc.DecodeString(s); err == nil {
			return data, nil
		}
	}
	return nil, err
}

// multipartEncode writes fields as multipart/form-data: the other fields
// in name order, then the files, which some servers want last. A file
// field is a part with a file name; a field the encoding gives a style is
// one part per pair (Stripe's deepObject); any other object is a JSON
// part, a list one part per item, and a scalar a text part.
func multipartEncode(fields map[string]any, encoding map[string]spec.Encoding, files map[string]bool, required map[string]bool, arg string) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	raw := writer{esc: func(s string) string { return s }, delim: func(s string) string { return s }}
	names := sortedKeys(fields)
	for _, name := range names {
		if _, isFile := files[name]; isFile || fields[name] == nil {
			continue
		}
		v, enc := fields[name], encoding[name]
		if enc.Style != "" {
			for _, kv := range raw.pairs(name, v, enc.Style, enc.Explode) {
				if err := textPart(mw, kv[0], kv[1], ""); err != nil {
					return nil, "", err
				}
			}
			continue
		}
		items := []any{v}
		if list, ok := v.([]any); ok {
			items = list
			if len(list) == 0 && required[name] {
				items = []any{""} // a required list given empty is sent empty
			}
		}
		for _, e := range items {
			ct := enc.ContentType
			switch e.(type) {
			case map[string]any, []any:
				if ct == "" || strings.ContainsAny(ct, "*,") {
					ct = "application/json"
				}
			}
			if strings.ContainsAny(ct, "*,") {
				ct = "" // a range or a list names no one type to send
			}
			if err := textPart(mw, name, text(e), ct); err != nil {
				return nil, "", err
			}
		}
	}
	for _, name := range names {
		list, isFile := files[name]
		if !isFile || fields[name] == nil {
			continue
		}
		items := []any{fields[name]}
		if list {
			l, ok := fields[name].([]any)
			if !ok {
				return nil, "", fmt.Errorf("the argument %q must be a list of files", arg+"."+name)
			}
			items = l
		}
		for i, e := range items {
			what := arg + "." + name
			if list {
				what = fmt.Sprintf("%s[%d]", what, i)
			}
			f, err := fileArgument(e, what, true)
			if err != nil {
				return nil, "", err
			}
			ct := f.contentType
			if ct == "" {
				ct = encoding[name].ContentType
			}
			if ct == "" || strings.ContainsAny(ct, "*,") {
				ct = "application/octet-stream"
			}
			if err := partName(name); err != nil {
				return nil, "", err
			}
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscaper.Replace(name), quoteEscaper.Replace(f.name)))
			h.Set("Content-Type", ct)
			p, err := mw.CreatePart(h)
			if err != nil {
				return nil, "", err
			}
			p.Write(f.data)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// quoteEscaper escapes a quoted string in a part's header, as mime/multipart does.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// textPart writes a part that is not a file, with a media type if ct is
// not empty.
func textPart(mw *multipart.Writer, name, value, ct string) error {
	if err := partName(name); err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, quoteEscaper.Replace(name)))
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	p, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = p.Write([]byte(value))
	return err
}

// partName refuses a part name that could end its header line: names
// come from the document and from the keys of arguments.
func partName(name string) error {
	if !httpguts.ValidHeaderFieldValue(name) {
		return fmt.Errorf("the form field %q must not contain line breaks or control characters", name)
	}
	return nil
}
