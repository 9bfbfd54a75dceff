package spec

import (
	"bytes"
	"cmp"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	json "github.com/segmentio/encoding/json"
)

// A schema is one of the document's schemas converted, once, to JSON
// Schema 2020-12 that clients compile (ajv's draft-07 and 2020 classes,
// and Go's jsonschema): OpenAPI's own keywords are translated, keywords
// no validator needs are dropped, and values clients would refuse are
// dropped or repaired, each with a note. Its references are substituted
// when it is inlined.
type schema struct {
	isBool, value bool // a boolean schema: true or false

	kws []keyword // by name
	// nullable says that null is allowed besides what the rest allows,
	// where the rest could not say so itself (a reference, an allOf...).
	nullable bool
	// ref is a local reference to inline, refAt where it is, and target
	// the schema it names, once resolved.
	ref    string
	refAt  *loc
	target *schema
	// cost is the schema's own share of an inlining budget: one, and more
	// for long lists and texts.
	cost int
	// exp is its inlining, kept once an inlining cut nothing, and
	// briefExp its brief one.
	exp, briefExp *expansion
}

// keyword is a keyword and its converted value: a literal (decoded JSON
// with float64 numbers), a *schema, a []*schema or a []property.
type keyword struct {
	name string
	v    any
}

// property is a named subschema: of properties, patternProperties or
// dependentSchemas.
type property struct {
	name string
	s    *schema
}

// A Note says what converting one of the document's schemas changed so
// that clients accept it: a keyword dropped or repaired, and why.
type Note struct {
	// Operation is the operation whose tool first needed the schema, as
	// its location ("paths./pets.post").
	Operation string `json:"operation"`
	// At is where the schema is: a JSON pointer for a schema reached by
	// reference, else the operation's part and a pointer within it.
	At   string `json:"at"`
	Text string `json:"text"`
}

func (n Note) String() string { return n.At + ": " + n.Text }

// Notes returns what converting the schemas inlined so far changed,
// sorted by place: those of the tools listed, once they are.
func (d *Document) Notes() []Note {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Clone(d.notes)
	slices.SortFunc(out, func(a, b Note) int { return strings.Compare(a.At+"\x00"+a.Text, b.At+"\x00"+b.Text) })
	return out
}

// loc is a place in a schema, kept as a chain so that it costs nothing
// until a note or an error needs it in words.
type loc struct {
	parent *loc
	token  string // a JSON pointer token, or the base
}

func (l *loc) child(tokens ...string) *loc {
	for _, t := range tokens {
		l = &loc{parent: l, token: t}
	}
	return l
}

// String returns the base and a JSON pointer from it: "#/components/
// schemas/Pet/properties/name", or "paths./pets.post: request body, at
// /properties/name".
func (l *loc) String() string {
	var tokens []string
	for ; l.parent != nil; l = l.parent {
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(l.token, "~", "~0"), "/", "~1"))
	}
	if len(tokens) == 0 {
		return l.token
	}
	slices.Reverse(tokens)
	p := "/" + strings.Join(tokens, "/")
	if strings.HasPrefix(l.token, "#") {
		return l.token + p
	}
	return l.token + ", at " + p
}

// schemaOf returns the converted schema that raw holds, converting it the
// first time; at names raw's place, where the operation converting it.
// The references it holds are resolved when inlining reaches them.
func (d *Document) schemaOf(raw json.RawMessage, at, where string) (*schema, error) {
	sp, inDoc := d.spanOf(raw)
	if s, ok := d.converted[sp]; ok && inDoc {
		return s, nil
	}
	// A schema made up while loading (Swagger 2.0's parameters and forms)
	// is not in the document's bytes: it is known by its text.
	if s, ok := d.madeUp[string(raw)]; ok && !inDoc {
		return s, nil
	}
	v, err := decodeTree(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", at, err)
	}
	c := converter{d: d, where: where, v31: strings.HasPrefix(d.Version, "3.1")}
	s := c.convert(v, &loc{token: at})
	if c.err != nil {
		return nil, c.err
	}
	if inDoc {
		if d.converted == nil {
			d.converted = map[span]*schema{}
		}
		d.converted[sp] = s
	} else {
		if d.madeUp == nil {
			d.madeUp = map[string]*schema{}
		}
		d.madeUp[string(raw)] = s
	}
	return s, nil
}

// decodeTree decodes JSON into maps, slices and the rest, numbers as
// float64s, or as json.Numbers if one of them is too large for a float64.
// The standard library's decoder takes time linear in the depth of
// nesting, where segmentio's does not.
func decodeTree(raw []byte) (any, error) {
	var v any
	err := stdjson.Unmarshal(raw, &v)
	var te *stdjson.UnmarshalTypeError
	if errors.As(err, &te) {
		dec := stdjson.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		v = nil
		err = dec.Decode(&v)
	}
	return v, err
}

// schemaRef returns the schema the local reference ref names. A
// reference into a component schema ("#/components/schemas/A/properties/
// b") finds its part of the component converted: parts are not converted
// twice however many references name them.
func (d *Document) schemaRef(ref, at, where string) (*schema, error) {
	if s, ok := d.targets[ref]; ok {
		return s, nil
	}
	s, err := d.schemaPart(ref, at, where)
	if s == nil && err == nil {
		var raw json.RawMessage
		if raw, err = d.resolve(ref, at); err == nil {
			s, err = d.schemaOf(raw, ref, where)
		}
	}
	if err != nil {
		return nil, err
	}
	if d.targets == nil {
		d.targets = map[string]*schema{}
	}
	d.targets[ref] = s
	return s, nil
}

// schemaPart returns the part of a component schema that ref names, or
// nil if ref does not name one through converted keywords.
func (d *Document) schemaPart(ref, at, where string) (*schema, error) {
	tokens, err := pointer(ref, at)
	if err != nil {
		return nil, err
	}
	var base json.RawMessage
	n := 0
	switch {
	case len(tokens) > 3 && tokens[0] == "components" && tokens[1] == "schemas":
		base, n = d.raw.Components.Schemas[tokens[2]], 3
	case len(tokens) > 2 && tokens[0] == "definitions":
		base, n = d.raw.Definitions[tokens[1]], 2
	}
	if base == nil {
		return nil, nil
	}
	s, err := d.schemaOf(base, "#/"+strings.Join(escapeTokens(tokens[:n]), "/"), where)
	if err != nil {
		return nil, err
	}
	return s.walk(tokens[n:]), nil
}

// walk follows JSON pointer tokens through the schema's converted
// keywords; nil if they lead elsewhere.
func (s *schema) walk(tokens []string) *schema {
	for len(tokens) > 0 {
		k := tokens[0]
		tokens = tokens[1:]
		switch v := s.get(k).(type) {
		case *schema:
			s = v
			continue
		case []*schema:
			if i, err := strconv.Atoi(first(tokens)); err == nil && i >= 0 && i < len(v) && first(tokens) == strconv.Itoa(i) {
				s, tokens = v[i], tokens[1:]
				continue
			}
		case []property:
			name := first(tokens)
			if i, ok := slices.BinarySearchFunc(v, name, func(p property, n string) int { return strings.Compare(p.name, n) }); ok && len(tokens) > 0 {
				s, tokens = v[i].s, tokens[1:]
				continue
			}
		}
		return nil
	}
	return s
}

func first(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	return tokens[0]
}

// escapeTokens escapes JSON pointer tokens.
func escapeTokens(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return out
}

// converter converts the schemas of one decoding.
type converter struct {
	d     *Document
	where string
	v31   bool
	err   error // the first reference that could not be followed
}

func (c *converter) note(at *loc, format string, args ...any) {
	n := Note{Operation: c.where, At: at.String(), Text: fmt.Sprintf(format, args...)}
	key := n.At + "\x00" + n.Text
	if c.d.noted[key] {
		return
	}
	if c.d.noted == nil {
		c.d.noted = map[string]bool{}
	}
	c.d.noted[key] = true
	c.d.notes = append(c.d.notes, n)
}

// convert converts the decoded schema v, found at at.
func (c *converter) convert(v any, at *loc) *schema {
	switch x := v.(type) {
	case bool:
		return &schema{isBool: true, value: x, cost: 1}
	case map[string]any:
		return c.object(x, at)
	}
	c.note(at, "%s is not a schema: left open", describe(v))
	return &schema{cost: 1}
}

// jsonTypes are JSON Schema's types.
var jsonTypes = setOf("string number integer boolean array object null")

// refSiblings are the keywords kept beside a $ref in OpenAPI 3.0 and
// Swagger 2.0, where the others are ignored: annotations, and nullable,
// which documents put there to make a referenced schema nullable.
var refSiblings = setOf("description title default deprecated readOnly writeOnly nullable")

// counts are the keywords whose value is a count: a non-negative integer,
// which Go's jsonschema holds in 32 bits.
var counts = setOf("minLength maxLength minItems maxItems minProperties maxProperties minContains maxContains")

// subschemaKeywords take one schema.
var subschemaKeywords = setOf("not if then else additionalProperties propertyNames contains unevaluatedItems unevaluatedProperties")

func (c *converter) object(m map[string]any, at *loc) *schema {
	s := &schema{cost: 1}
	if r, ok := m["$ref"]; ok {
		if ref, ok := r.(string); ok && ref != "" {
			s.ref, s.refAt = ref, at
		} else {
			c.note(at, "$ref is %s, not a reference: dropped", describe(r))
		}
	}
	var exclusive [2]*bool // boolean exclusiveMinimum and exclusiveMaximum
	file := false
	s.kws = make([]keyword, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s.ref != "" && !c.v31 && !refSiblings[k] {
			continue
		}
		val := m[k]
		var out any
		switch {
		case k == "nullable":
			if b, ok := val.(bool); ok {
				s.nullable = b
			} else {
				c.dropped(at, k, val, "a boolean")
			}
		case k == "type":
			var isFile bool
			out, isFile = c.types(val, at)
			file = file || isFile
		case k == "enum":
			if a, ok := val.([]any); ok {
				out = c.literal(a, at, k)
				s.cost += len(a) / 8
			} else {
				c.dropped(at, k, val, "an array")
			}
		case k == "const" || k == "default":
			out = c.literal(val, at, k)
		case k == "required":
			out = c.required(val, at)
			if r, ok := out.([]any); ok {
				s.cost += len(r) / 8
			}
		case k == "title" || k == "description" || k == "format" || k == "contentEncoding" || k == "contentMediaType":
			if str, ok := val.(string); ok {
				out = str
				s.cost += len(str) / 512
			} else {
				c.dropped(at, k, val, "a string")
			}
		case k == "pattern":
			str, ok := val.(string)
			if !ok {
				c.dropped(at, k, val, "a string")
			} else if err := checkPattern(str); err != nil {
				c.note(at, "the pattern %q is %v: dropped", str, err)
			} else {
				out = str
			}
		case k == "uniqueItems" || k == "readOnly" || k == "writeOnly" || k == "deprecated":
			if b, ok := val.(bool); ok {
				out = b
			} else {
				c.dropped(at, k, val, "a boolean")
			}
		case k == "minimum" || k == "maximum":
			if f, ok := number(val); ok {
				out = f
			} else {
				c.dropped(at, k, val, "a number")
			}
		case k == "multipleOf":
			if f, ok := number(val); ok && f > 0 {
				out = f
			} else {
				c.dropped(at, k, val, "a positive number")
			}
		case k == "exclusiveMinimum" || k == "exclusiveMaximum":
			if b, ok := val.(bool); ok {
				exclusive[boolIndex(k == "exclusiveMaximum")] = &b
			} else if f, ok := number(val); ok {
				out = f
			} else {
				c.dropped(at, k, val, "a number")
			}
		case counts[k]:
			if f, ok := number(val); ok && f >= 0 && f <= math.MaxInt32 && f == math.Trunc(f) {
				out = f
			} else {
				c.dropped(at, k, val, "a count (0 to 2147483647)")
			}
		case subschemaKeywords[k] || k == "items" && !isArray(val):
			if isSchema(val) {
				out = c.convert(val, at.child(k))
			} else {
				c.dropped(at, k, val, "a schema")
			}
		case k == "items": // an array of schemas: a tuple, prefixItems since 2020-12
			if _, ok := m["prefixItems"]; !ok {
				if l := c.list("items", val, at); l != nil {
					s.kws = append(s.kws, keyword{name: "prefixItems", v: l})
				}
			}
		case k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems":
			if l := c.list(k, val, at); l != nil {
				out = l
			}
		case k == "properties" || k == "patternProperties" || k == "dependentSchemas":
			if p := c.names(k, val, at); p != nil {
				out = p
			}
		case k == "dependentRequired":
			if dr := c.dependentRequired(val, at, k); dr != nil {
				out = dr
			}
		case k == "dependencies":
			c.dependencies(m, val, at, s)
		}
		// Anything else is documentation (example, externalDocs, xml,
		// discriminator), an extension, an identifier or meta-schema
		// ($id, id, $schema, $anchor) that would clash once schemas are
		// inlined, or a keyword clients do not know: dropped.
		if out != nil {
			s.kws = append(s.kws, keyword{name: k, v: out})
		}
	}
	c.exclusiveBounds(s, exclusive, at)
	if file {
		// Swagger 2.0's file type: the file's content, as a string.
		desc, _ := s.get("description").(string)
		s.set("description", strings.TrimSpace(desc+" (a file: its content as a string)"))
	}
	slices.SortFunc(s.kws, func(a, b keyword) int { return strings.Compare(a.name, b.name) })
	c.foldNullable(s)
	return s
}

// dropped notes that keyword k's value is not what it must be.
func (c *converter) dropped(at *loc, k string, v any, want string) {
	c.note(at, "%s is %s, not %s: dropped", k, describe(v), want)
}

// types converts "type": a JSON type or a list of them. Swagger 2.0's
// "file" is a string.
func (c *converter) types(v any, at *loc) (out any, file bool) {
	var list []any
	single := false
	switch t := v.(type) {
	case string:
		list, single = []any{t}, true
	case []any:
		list = t
	default:
		c.dropped(at, "type", v, "a type or a list of types")
		return nil, false
	}
	var kept []any
	for _, e := range list {
		t, ok := e.(string)
		if ok && t == "file" {
			t, file = "string", true
		} else if !ok || !jsonTypes[t] {
			c.note(at, "type %s is not a JSON type: dropped", describe(e))
			continue
		}
		if !slices.Contains(kept, any(t)) {
			kept = append(kept, t)
		}
	}
	switch {
	case len(kept) == 0:
		return nil, file
	case single:
		return kept[0], file
	}
	return kept, file
}

// required converts "required": a list of distinct names. OpenAPI's
// required: true on a property, and Swagger 2.0 documents' required:
// null, are not JSON Schema.
func (c *converter) required(v any, at *loc) any {
	list, ok := v.([]any)
	if !ok {
		if v != nil { // null says nothing, as if it were absent
			c.dropped(at, "required", v, "a list of property names")
		}
		return nil
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		if name, ok := e.(string); !ok {
			c.note(at, "required lists %s, not a name: dropped", describe(e))
		} else if !slices.Contains(out, any(name)) {
			out = append(out, name)
		}
	}
	return out
}

// literal converts a keyword's data (enum, const, default): numbers become
// float64s. A number a float64 cannot hold drops the keyword.
func (c *converter) literal(v any, at *loc, k string) any {
	out, ok := literal(v)
	if !ok {
		c.note(at, "%s holds a number too large for clients: dropped", k)
		return nil
	}
	return out
}

func literal(v any) (any, bool) {
	switch x := v.(type) {
	case stdjson.Number:
		return number(x)
	case map[string]any:
		for k, e := range x {
			c, ok := literal(e)
			if !ok {
				return nil, false
			}
			x[k] = c
		}
	case []any:
		for i, e := range x {
			c, ok := literal(e)
			if !ok {
				return nil, false
			}
			x[i] = c
		}
	}
	return v, true
}

// number returns a finite number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case stdjson.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// list converts an array of schemas; what is not a schema is dropped, and
// so is an empty list.
func (c *converter) list(k string, v any, at *loc) []*schema {
	a, ok := v.([]any)
	if !ok {
		c.dropped(at, k, v, "a list of schemas")
		return nil
	}
	out := make([]*schema, 0, len(a))
	for i, e := range a {
		if isSchema(e) {
			out = append(out, c.convert(e, at.child(k, strconv.Itoa(i))))
		} else {
			c.note(at.child(k, strconv.Itoa(i)), "%s is not a schema: dropped", describe(e))
		}
	}
	if len(out) == 0 {
		c.note(at, "%s lists no schema: dropped", k)
		return nil
	}
	return out
}

// names converts properties, patternProperties or dependentSchemas.
func (c *converter) names(k string, v any, at *loc) []property {
	m, ok := v.(map[string]any)
	if ref, isRef := m["$ref"].(string); isRef && len(m) == 1 {
		return c.namesRef(k, ref, at)
	}
	if !ok {
		c.dropped(at, k, v, "an object of schemas")
		return nil
	}
	out := make([]property, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		here := at.child(k, name)
		if k == "patternProperties" {
			if err := checkPattern(name); err != nil {
				c.note(here, "the pattern %q is %v: dropped", name, err)
				continue
			}
		}
		e := m[name]
		if !isSchema(e) {
			c.note(here, "%s is not a schema: left open", describe(e))
			out = append(out, property{name: name, s: &schema{cost: 1}})
			continue
		}
		out = append(out, property{name: name, s: c.convert(e, here)})
	}
	return out
}

// namesRef converts properties (or patternProperties, dependentSchemas)
// given by reference, as documents split into files do: the object of
// schemas is elsewhere.
func (c *converter) namesRef(k, ref string, at *loc) []property {
	if p, ok := c.d.namesTargets[ref]; ok {
		return p
	}
	if c.d.namesActive[ref] || len(c.d.namesActive) >= maxPointerTokens {
		// Converting one such object converts the next: the chain is kept
		// short so that it cannot exhaust the stack.
		c.note(at, "%s by the reference %q names itself, or too long a chain of such references: left out", k, ref)
		return nil
	}
	raw, err := c.d.resolve(ref, at.child(k).String())
	var v any
	if err == nil {
		if v, err = decodeTree(raw); err != nil {
			err = fmt.Errorf("%s: the reference %q: %v", at.child(k), ref, err)
		}
	}
	if err != nil {
		c.err = cmp.Or(c.err, err)
		return nil
	}
	if c.d.namesActive == nil {
		c.d.namesActive = map[string]bool{}
	}
	c.d.namesActive[ref] = true
	p := c.names(k, v, &loc{token: ref})
	delete(c.d.namesActive, ref)
	if c.d.namesTargets == nil {
		c.d.namesTargets = map[string][]property{}
	}
	c.d.namesTargets[ref] = p
	return p
}

// dependentRequired converts a map of property names to lists of names.
func (c *converter) dependentRequired(v any, at *loc, k string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.dropped(at, k, v, "an object of lists of names")
		return nil
	}
	out := map[string]any{}
	for name, e := range m {
		if r, ok := c.required(e, at.child(k, name)).([]any); ok {
			out[name] = r
		}
	}
	return out
}

// dependencies converts draft-07's dependencies into 2020-12's
// dependentRequired and dependentSchemas, unless the schema has those.
func (c *converter) dependencies(m map[string]any, v any, at *loc, s *schema) {
	deps, ok := v.(map[string]any)
	if !ok {
		c.dropped(at, "dependencies", v, "an object")
		return
	}
	required, schemas := map[string]any{}, map[string]any{}
	for name, e := range deps {
		if isArray(e) {
			required[name] = e
		} else {
			schemas[name] = e
		}
	}
	if _, ok := m["dependentRequired"]; !ok && len(required) > 0 {
		s.kws = append(s.kws, keyword{name: "dependentRequired", v: c.dependentRequired(required, at, "dependencies")})
	}
	if _, ok := m["dependentSchemas"]; !ok && len(schemas) > 0 {
		if p := c.names("dependencies", schemas, at); p != nil {
			s.kws = append(s.kws, keyword{name: "dependentSchemas", v: p})
		}
	}
}

// exclusiveBounds converts OpenAPI 3.0's boolean exclusiveMinimum and
// exclusiveMaximum, flags on minimum and maximum, into JSON Schema's,
// which are the bounds themselves. Documents of any version use them.
func (c *converter) exclusiveBounds(s *schema, flags [2]*bool, at *loc) {
	for i, names := range [2][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if flags[i] == nil || !*flags[i] {
			continue
		}
		j := slices.IndexFunc(s.kws, func(k keyword) bool { return k.name == names[1] })
		if j < 0 {
			c.note(at, "%s: true has no %s to make exclusive: dropped", names[0], names[1])
			continue
		}
		s.kws[j].name = names[0]
	}
}

// foldNullable says null is allowed in the schema's own terms where it
// can: a type list with "null", and null in an enum. Where it cannot (a
// reference, allOf, anyOf, oneOf, not, if, const), the schema is wrapped
// when inlined.
func (c *converter) foldNullable(s *schema) {
	if !s.nullable || s.ref != "" {
		return
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "const"} {
		if s.get(k) != nil {
			return
		}
	}
	switch t := s.get("type").(type) {
	case string:
		if t != "null" {
			s.set("type", []any{t, "null"})
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			s.set("type", append(slices.Clip(t), "null"))
		}
	}
	if enum, ok := s.get("enum").([]any); ok && !slices.Contains(enum, nil) {
		s.set("enum", append(slices.Clip(enum), nil))
	}
	s.nullable = false
}

func (s *schema) get(name string) any {
	for _, k := range s.kws {
		if k.name == name {
			return k.v
		}
	}
	return nil
}

// set sets a keyword; the keywords are sorted again after.
func (s *schema) set(name string, v any) {
	for i, k := range s.kws {
		if k.name == name {
			s.kws[i].v = v
			return
		}
	}
	s.kws = append(s.kws, keyword{name: name, v: v})
	slices.SortFunc(s.kws, func(a, b keyword) int { return strings.Compare(a.name, b.name) })
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isSchema(v any) bool {
	switch v.(type) {
	case map[string]any, bool:
		return true
	}
	return false
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

// describe says what kind of JSON value v is, for notes.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case stdjson.Number:
		return x.String()
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return strconv.Quote(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}
