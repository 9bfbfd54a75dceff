package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &r) != nil || r.Ref == "" {
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
			if err := json.Unmarshal(v, &m); err != nil {
				return nil, fmt.Errorf("spec: %s: the reference %q: %v", where, ref, err)
			}
			next = m[t]
		case len(v) > 0 && v[0] == '[':
			var a []json.RawMessage
			if err := json.Unmarshal(v, &a); err != nil {
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
// so. External references are refused.
func (d *Document) Inline(raw json.RawMessage, where string) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("spec: %s: %v", where, err)
	}
	in := inliner{d: d, where: where, active: map[string]bool{}}
	out, err := in.value(v, 0, false)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// namesMaps are the keywords whose object's keys are names, not keywords.
var namesMaps = map[string]bool{"properties": true, "patternProperties": true, "definitions": true, "$defs": true, "dependentSchemas": true}

type inliner struct {
	d      *Document
	where  string
	active map[string]bool // references being inlined on the current path
	nodes  int
}

// value inlines v; names is true when v's keys are names (properties)
// rather than keywords, which are then all kept.
func (in *inliner) value(v any, depth int, names bool) (any, error) {
	in.nodes++
	if depth > maxSchemaDepth || in.nodes > maxSchemaNodes {
		return map[string]any{"description": "(too deep or too large to describe here)"}, nil
	}
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && !names {
			name := ref[strings.LastIndex(ref, "/")+1:]
			if in.active[ref] {
				return map[string]any{"description": "(recursive: another " + name + ")"}, nil
			}
			raw, err := in.d.resolve(ref, in.where)
			if err != nil {
				return nil, err
			}
			var target any
			if err := json.Unmarshal(raw, &target); err != nil {
				return nil, fmt.Errorf("spec: %s: the reference %q: %v", in.where, ref, err)
			}
			in.active[ref] = true
			out, err := in.value(target, depth+1, false)
			delete(in.active, ref)
			return out, err
		}
		out := make(map[string]any, len(x))
		if !names && !strings.HasPrefix(in.d.Version, "3.1") {
			// OpenAPI 3.0's "nullable" is JSON Schema's null type.
			if n, _ := x["nullable"].(bool); n {
				if t, ok := x["type"].(string); ok {
					x["type"] = []any{t, "null"}
				}
			}
			delete(x, "nullable")
		}
		for k, e := range x {
			if !names && (dropped[k] || strings.HasPrefix(k, "x-")) {
				continue
			}
			c, err := in.value(e, depth+1, !names && namesMaps[k])
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := in.value(e, depth+1, false)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}
