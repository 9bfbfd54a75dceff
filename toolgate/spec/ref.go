package spec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	json "github.com/segmentio/encoding/json"
)

// ExternalRefError reports a reference to a file or a URL, which toolgate
// does not follow: a document is untrusted, and such a reference could
// read local files or reach the network.
type ExternalRefError struct {
	Ref, Where string
}

func (e *ExternalRefError) Error() string {
	return fmt.Sprintf("spec: %s: the reference %q leaves the document; only local references (#/...) are followed", e.Where, e.Ref)
}

// deref follows raw's $ref, and the $refs it leads to, to the object they
// name.
func (d *Document) deref(raw json.RawMessage, where string) (json.RawMessage, error) {
	seen := map[string]bool{}
	for {
		var r struct {
			Ref string `json:"$ref"`
		}
		if len(raw) == 0 || raw[0] != '{' || decode(raw, &r) != nil || r.Ref == "" {
			return raw, nil
		}
		if seen[r.Ref] {
			return nil, fmt.Errorf("spec: %s: the reference %q leads back to itself", where, r.Ref)
		}
		seen[r.Ref] = true
		next, err := d.resolve(r.Ref, where)
		if err != nil {
			return nil, err
		}
		raw = next
	}
}

// resolve returns the raw value that the local reference ref names.
func (d *Document) resolve(ref, where string) (json.RawMessage, error) {
	if !strings.HasPrefix(ref, "#/") {
		if ref == "#" {
			return nil, fmt.Errorf("spec: %s: the reference %q names the whole document", where, ref)
		}
		return nil, &ExternalRefError{Ref: ref, Where: where}
	}
	tokens := strings.Split(ref[2:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	var base json.RawMessage
	var rest []string
	c := &d.raw.Components
	switch {
	case len(tokens) >= 3 && tokens[0] == "components":
		kinds := map[string]map[string]json.RawMessage{"schemas": c.Schemas, "parameters": c.Parameters,
			"requestBodies": c.RequestBodies, "responses": c.Responses, "securitySchemes": c.SecuritySchemes}
		if m, ok := kinds[tokens[1]]; ok {
			base, rest = m[tokens[2]], tokens[3:]
		}
	case len(tokens) >= 2 && tokens[0] == "definitions":
		base, rest = d.raw.Definitions[tokens[1]], tokens[2:]
	case len(tokens) >= 2 && tokens[0] == "parameters":
		base, rest = d.raw.Parameters[tokens[1]], tokens[2:]
	case len(tokens) >= 2 && tokens[0] == "responses":
		base, rest = d.raw.Responses[tokens[1]], tokens[2:]
	}
	if base == nil {
		// Anywhere else in the document: walk the whole of it.
		base, rest = d.rawBytes, tokens
	}
	v := base
	for _, t := range rest {
		var next json.RawMessage
		switch {
		case len(v) > 0 && v[0] == '{':
			var m map[string]json.RawMessage
			if err := decode(v, &m); err != nil {
				return nil, fmt.Errorf("spec: %s: the reference %q: %v", where, ref, err)
			}
			next = m[t]
		case len(v) > 0 && v[0] == '[':
			var a []json.RawMessage
			if err := decode(v, &a); err != nil {
				return nil, fmt.Errorf("spec: %s: the reference %q: %v", where, ref, err)
			}
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(a) {
				next = a[i]
			}
		}
		if next == nil {
			return nil, fmt.Errorf("spec: %s: the reference %q names nothing in the document", where, ref)
		}
		v = next
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("spec: %s: the reference %q names nothing in the document", where, ref)
	}
	return v, nil
}

// Schema limits: how deep an inlined schema goes, and how large it grows,
// before the rest is left open. They keep a hostile or vast document from
// producing an unbounded tool description.
const (
	maxSchemaDepth = 24
	maxSchemaNodes = 4000
)

// dropped are schema keywords that describe documentation, not input: they
// cost an agent tokens and tell it nothing it needs to call the tool.
var dropped = map[string]bool{"example": true, "examples": true, "externalDocs": true, "xml": true, "discriminator": true}

// Inline returns the schema raw with every local reference replaced by
// what it names: a self-contained JSON Schema, as MCP tools need. A
// reference back to a schema being inlined becomes an open schema that says
// so, and so does what lies past the size and depth limits. External
// references are refused.
func (d *Document) Inline(raw json.RawMessage, where string) (json.RawMessage, error) {
	s, err := d.Schema(raw, where)
	if err != nil || s == nil {
		return nil, err
	}
	return json.Marshal(s)
}

// Schema is Inline before encoding: the schema as decoded JSON values
// (maps, slices, strings, float64s, booleans). Parts of it are shared
// with other schemas of the document; a caller must not change it.
func (d *Document) Schema(raw json.RawMessage, where string) (any, error) {
	return d.inline(raw, where, maxSchemaNodes, false)
}

// SchemaWhole is Schema for a schema that is worth giving only whole: it
// returns nil, and stops early, once the schema grows past maxNodes
// subschemas or the depth limit.
func (d *Document) SchemaWhole(raw json.RawMessage, where string, maxNodes int) (any, error) {
	s, err := d.inline(raw, where, maxNodes, true)
	if errors.Is(err, errTooLarge) {
		return nil, nil
	}
	return s, err
}

var errTooLarge = errors.New("spec: the schema is too large")

func (d *Document) inline(raw json.RawMessage, where string, maxNodes int, whole bool) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("spec: %s: %v", where, err)
	}
	in := inliner{d: d, where: where, active: map[string]bool{}, maxNodes: maxNodes, whole: whole}
	return in.value(v, 0)
}

// namesMaps are the keywords whose object's keys are names, not keywords.
var namesMaps = map[string]bool{"properties": true, "patternProperties": true, "definitions": true, "$defs": true, "dependentSchemas": true}

// literal are the keywords whose values are data, not schemas: they are
// copied as they are.
var literal = map[string]bool{"default": true, "const": true, "enum": true, "required": true, "type": true,
	"title": true, "description": true, "format": true, "pattern": true}

// tooLarge is the open schema that stands for what the limits cut.
const tooLarge = "(too deep or too large to describe here)"

type inliner struct {
	d      *Document
	where  string
	active map[string]bool // references being inlined on the current path
	nodes  int
	// maxNodes caps the subschemas; whole says to give up rather than
	// cut the schema short.
	maxNodes int
	whole    bool
	// deepest is the depth the walk reached; cuts counts the places where
	// it left a schema open (recursion or limits).
	deepest, cuts int
}

// expansion is a referenced schema inlined once, to be reused wherever
// the same reference appears. Only expansions that cut nothing are kept:
// they come out the same in any context, as long as they fit its limits.
type expansion struct {
	schema        any
	nodes, height int
}

// value inlines the schema v. It walks keys in order, so that the limits
// cut the same places on every run, and never changes v, which may be
// shared through the document's cache of referenced schemas.
func (in *inliner) value(v any, depth int) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		in.nodes++
		in.deepest = max(in.deepest, depth)
		if depth > maxSchemaDepth || in.nodes > in.maxNodes {
			if in.whole {
				return nil, errTooLarge
			}
			in.cuts++
			return map[string]any{"description": tooLarge}, nil
		}
		if ref, ok := x["$ref"].(string); ok {
			return in.ref(ref, depth+1)
		}
		legacy := !strings.HasPrefix(in.d.Version, "3.1")
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e := x[k]
			switch {
			case dropped[k] || strings.HasPrefix(k, "x-") || (legacy && k == "nullable"):
			case literal[k]:
				out[k] = e
			case namesMaps[k]:
				named, ok := e.(map[string]any)
				if !ok {
					continue // not a map of schemas: meaningless, dropped
				}
				m := make(map[string]any, len(named))
				for _, name := range slices.Sorted(maps.Keys(named)) {
					c, err := in.value(named[name], depth+1)
					if err != nil {
						return nil, err
					}
					m[name] = c
				}
				out[k] = m
			default:
				c, err := in.value(e, depth+1)
				if err != nil {
					return nil, err
				}
				out[k] = c
			}
		}
		if legacy {
			// OpenAPI 3.0's exclusive bounds are flags on minimum and
			// maximum; JSON Schema's are the bounds themselves.
			for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if flag, ok := out[b[0]].(bool); ok {
					delete(out, b[0])
					if bound, ok := out[b[1]]; ok && flag {
						out[b[0]] = bound
						delete(out, b[1])
					}
				}
			}
		}
		if n, _ := x["nullable"].(bool); n && legacy {
			// OpenAPI 3.0's "nullable" is JSON Schema's null type, and
			// null must then pass an enum too.
			if t, ok := out["type"].(string); ok {
				out["type"] = []any{t, "null"}
			}
			if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, nil) {
				out["enum"] = append(slices.Clip(enum), nil)
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := in.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// ref inlines the schema that ref names, at depth.
func (in *inliner) ref(ref string, depth int) (any, error) {
	if in.active[ref] {
		in.cuts++
		return map[string]any{"description": "(recursive: another " + ref[strings.LastIndex(ref, "/")+1:] + ")"}, nil
	}
	if e, ok := in.d.expanded.Load(ref); ok {
		e := e.(*expansion)
		if in.nodes+e.nodes <= in.maxNodes && depth+e.height <= maxSchemaDepth {
			in.nodes += e.nodes
			in.deepest = max(in.deepest, depth+e.height)
			return e.schema, nil
		}
	}
	target, err := in.d.decoded(ref, in.where)
	if err != nil {
		return nil, err
	}
	nodes, deepest, cuts := in.nodes, in.deepest, in.cuts
	in.deepest = depth
	in.active[ref] = true
	out, err := in.value(target, depth)
	delete(in.active, ref)
	if err == nil && in.cuts == cuts {
		in.d.expanded.Store(ref, &expansion{schema: out, nodes: in.nodes - nodes, height: in.deepest - depth})
	}
	in.deepest = max(in.deepest, deepest)
	return out, err
}

// decoded returns the value the local reference ref names, decoded once
// and then shared: inlining never changes it.
func (d *Document) decoded(ref, where string) (any, error) {
	if v, ok := d.refs.Load(ref); ok {
		return v, nil
	}
	raw, err := d.resolve(ref, where)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("spec: %s: the reference %q: %v", where, ref, err)
	}
	d.refs.Store(ref, v)
	return v, nil
}
