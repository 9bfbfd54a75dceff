package spec

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	json "github.com/segmentio/encoding/json"
)

// Schema limits: how deep an inlined schema goes, and how large it grows,
// before the rest is left open. They keep a hostile or vast document from
// producing an unbounded tool description, and inlining a tool's schema
// from taking time that grows with more than the tool's own schema.
const (
	maxSchemaDepth = 24
	maxSchemaNodes = 4000
)

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

func (d *Document) inline(raw json.RawMessage, where string, maxNodes int, whole bool) (out any, err error) {
	if len(raw) == 0 {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		// As for loading: a panic here is a bug, and a server must not
		// stop over one tool's schema.
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("spec: %s: its schema could not be described (internal error: %v)", where, p)
		}
	}()
	s, err := d.schemaOf(raw, where, where)
	if err != nil {
		return nil, err
	}
	in := inliner{d: d, where: where, active: map[*schema]bool{}, maxNodes: maxNodes, whole: whole}
	return in.schema(s, 0)
}

// tooLarge is the open schema that stands for what the limits cut.
const tooLarge = "(too deep or too large to describe here)"

type inliner struct {
	d      *Document
	where  string           // the operation, for notes
	active map[*schema]bool // schemas being inlined by reference on the current path
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

// cut stands for a schema the limits leave out: an open schema that says
// so, or, for a schema given whole or not at all, errTooLarge.
func (in *inliner) cut() (any, error) {
	if in.whole {
		return nil, errTooLarge
	}
	in.cuts++
	in.nodes++
	return map[string]any{"description": tooLarge}, nil
}

// spent says whether the budget is spent, so that what is left of a list
// goes undescribed.
func (in *inliner) spent() bool { return in.nodes >= in.maxNodes }

// schema inlines s at depth. Keywords come in order, so that the limits
// cut the same places on every run. Where a cut would make the schema
// refuse what the document allows (inside not or if, or a branch of
// oneOf), the keyword goes or becomes a looser one.
func (in *inliner) schema(s *schema, depth int) (any, error) {
	if s.isBool {
		in.nodes++
		return s.value, nil
	}
	in.deepest = max(in.deepest, depth)
	if depth > maxSchemaDepth || in.nodes+s.cost > in.maxNodes {
		return in.cut()
	}
	in.nodes += s.cost
	out := make(map[string]any, len(s.kws)+1)
	oneOfCut, ifCut := false, false
	for _, k := range s.kws {
		cuts := in.cuts
		switch v := k.v.(type) {
		case *schema:
			c, err := in.schema(v, depth+1)
			if err != nil {
				return nil, err
			}
			if k.name == "not" && in.cuts > cuts {
				continue // an open part would make "not" refuse what it should allow
			}
			ifCut = ifCut || k.name == "if" && in.cuts > cuts
			out[k.name] = c
		case []*schema:
			items := make([]any, 0, len(v))
			for _, e := range v {
				if in.spent() {
					if _, err := in.cut(); err != nil {
						return nil, err
					}
					if k.name == "anyOf" || k.name == "oneOf" {
						items = append(items, map[string]any{"description": tooLarge})
					}
					break
				}
				c, err := in.schema(e, depth+1)
				if err != nil {
					return nil, err
				}
				items = append(items, c)
			}
			oneOfCut = oneOfCut || k.name == "oneOf" && in.cuts > cuts
			out[k.name] = items
		case []property:
			m := make(map[string]any, min(len(v), in.maxNodes))
			for _, p := range v {
				if in.spent() {
					if _, err := in.cut(); err != nil {
						return nil, err
					}
					break
				}
				c, err := in.schema(p.s, depth+1)
				if err != nil {
					return nil, err
				}
				m[p.name] = c
			}
			out[k.name] = m
		default:
			out[k.name] = v
		}
	}
	if ifCut {
		delete(out, "if")
		delete(out, "then")
		delete(out, "else")
	}
	if oneOfCut {
		// An open branch matches beside any other, which oneOf refuses.
		branches := out["oneOf"]
		delete(out, "oneOf")
		if _, ok := out["anyOf"]; !ok {
			out["anyOf"] = branches
		} else {
			all, _ := out["allOf"].([]any)
			out["allOf"] = append(all, map[string]any{"anyOf": branches})
		}
	}
	var result any = out
	if s.ref != "" {
		target, err := in.ref(s, depth+1)
		if err != nil {
			return nil, err
		}
		result = withSiblings(target, out)
	}
	if s.nullable {
		result = map[string]any{"anyOf": []any{result, map[string]any{"type": "null"}}}
	}
	return result, nil
}

// annotations are keywords that describe a schema without constraining
// it.
var annotations = setOf("title description default deprecated readOnly writeOnly")

// withSiblings joins a referenced schema and the keywords beside its
// reference: annotations override the target's, anything else applies
// as well as the target.
func withSiblings(target any, siblings map[string]any) any {
	if len(siblings) == 0 {
		return target
	}
	onlyAnnotations := true
	for k := range siblings {
		onlyAnnotations = onlyAnnotations && annotations[k]
	}
	if m, ok := target.(map[string]any); ok && onlyAnnotations {
		m = maps.Clone(m)
		maps.Copy(m, siblings)
		return m
	}
	all, _ := siblings["allOf"].([]any)
	siblings["allOf"] = append([]any{target}, all...)
	return siblings
}

// ref inlines the schema s's reference names, at depth.
func (in *inliner) ref(s *schema, depth int) (any, error) {
	t := s.target
	if t == nil {
		// Resolved, and converted, when first reached: a schema is
		// converted only as deep as inlining goes.
		var err error
		if t, err = in.d.schemaRef(s.ref, s.refAt.String(), in.where); err != nil {
			return nil, err
		}
		s.target = t
	}
	if in.active[t] {
		in.cuts++
		in.nodes++
		return map[string]any{"description": "(recursive: another " + s.ref[strings.LastIndex(s.ref, "/")+1:] + ")"}, nil
	}
	if e := t.exp; e != nil && in.nodes+e.nodes <= in.maxNodes && depth+e.height <= maxSchemaDepth {
		in.nodes += e.nodes
		in.deepest = max(in.deepest, depth+e.height)
		return e.schema, nil
	}
	nodes, deepest, cuts := in.nodes, in.deepest, in.cuts
	in.deepest = depth
	in.active[t] = true
	out, err := in.schema(t, depth)
	delete(in.active, t)
	if err == nil && in.cuts == cuts {
		t.exp = &expansion{schema: out, nodes: in.nodes - nodes, height: in.deepest - depth}
	}
	in.deepest = max(in.deepest, deepest)
	return out, err
}
