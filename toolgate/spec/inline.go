package spec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	s, _, err := d.inline(raw, where, limits{maxNodes: maxSchemaNodes, maxDepth: maxSchemaDepth})
	return s, err
}

// SchemaWhole is Schema for a schema that is worth giving only whole: it
// returns nil, and stops early, once the schema grows past maxNodes
// subschemas or the depth limit.
func (d *Document) SchemaWhole(raw json.RawMessage, where string, maxNodes int) (any, error) {
	s, _, err := d.inline(raw, where, limits{maxNodes: maxNodes, maxDepth: maxSchemaDepth, whole: true})
	if errors.Is(err, ErrTooLarge) {
		return nil, nil
	}
	return s, err
}

// SchemaBrief is Schema as an agent reads it in a list of tools: cut
// below depth (0 keeps the schema's own keywords and cuts its
// subschemas; -1 cuts the schema itself), with descriptions shortened to
// their first sentence. Each cut part keeps its type, if it has one, and
// says, in its description, which of the document's schemas gives its
// shape, and that the server checks it in full. The result never refuses
// what Schema accepts. cut says whether anything was left out. Past
// maxNodes subschemas it stops, and returns ErrTooLarge.
func (d *Document) SchemaBrief(raw json.RawMessage, where string, depth, maxNodes int) (s any, cut bool, err error) {
	s, cuts, err := d.inline(raw, where, limits{maxNodes: maxNodes, maxDepth: min(depth, maxSchemaDepth), brief: true})
	return s, cuts > 0, err
}

// ErrTooLarge says that a schema has more subschemas than its caller
// wants.
var ErrTooLarge = errors.New("the schema is too large")

// limits bound an inlining.
type limits struct {
	// maxNodes caps the subschemas, maxDepth the depth; whole says to
	// give up rather than cut the schema short.
	maxNodes, maxDepth int
	whole              bool
	// brief shortens descriptions, has cuts say where the shape of what
	// they leave out is, and gives up past maxNodes.
	brief bool
}

// inline inlines raw within lim, and counts the places it cut.
func (d *Document) inline(raw json.RawMessage, where string, lim limits) (out any, cuts int, err error) {
	if len(raw) == 0 {
		return nil, 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		// As for loading: a panic here is a bug, and a server must not
		// stop over one tool's schema.
		if p := recover(); p != nil {
			out, cuts, err = nil, 0, fmt.Errorf("%s: its schema could not be described (internal error: %v)", where, p)
		}
	}()
	s, err := d.schemaOf(raw, where, where)
	if err != nil {
		return nil, 0, err
	}
	in := inliner{d: d, where: where, active: map[*schema]bool{}, limits: lim}
	out, err = in.schema(s, 0)
	return out, in.cuts, err
}

// BriefCutNote starts the description of a part of a brief schema that
// is left out.
const BriefCutNote = "Not described here"

// tooLarge is the open schema that stands for what the limits cut.
const tooLarge = "(too deep or too large to describe here)"

type inliner struct {
	d      *Document
	where  string           // the operation, for notes
	active map[*schema]bool // schemas being inlined by reference on the current path
	nodes  int
	limits
	// deepest is the depth the walk reached; cuts counts the places where
	// it left a schema open (recursion or limits).
	deepest, cuts int
	// within is the referenced schema being inlined, and withinName its
	// name, which brief cuts give as where to read the shape of what
	// they leave out.
	within     *schema
	withinName string
}

// expansion is a referenced schema inlined once, to be reused wherever
// the same reference appears. Only expansions that cut nothing are kept:
// they come out the same in any context, as long as they fit its limits.
type expansion struct {
	schema        any
	nodes, height int
}

// cut stands for s, which the limits leave out (nil for what is left of
// a list): an open schema that says so, or, for a schema given whole or
// not at all, or brief past its budget, ErrTooLarge.
func (in *inliner) cut(s *schema) (any, error) {
	if in.whole || in.brief && in.spent() {
		return nil, ErrTooLarge
	}
	in.cuts++
	in.nodes++
	if !in.brief {
		return map[string]any{"description": tooLarge}, nil
	}
	out := map[string]any{}
	var desc string
	name := in.withinName
	if s != nil {
		if s.ref != "" {
			name = refName(s.ref)
		}
		t, d := in.head(s)
		if t != nil {
			out["type"] = t
		}
		if d != "" {
			desc = Brief(d, briefSchemaText) + " "
		}
		in.constrain(out, s, t)
	}
	shape := "its shape is in the API's document"
	switch {
	case s != nil && (s.ref != "" || s == in.within):
		shape = "its shape is " + name + " in the API's document"
	case name != "":
		shape = "its shape is part of " + name + " in the API's document"
	}
	if named, ok := out["description"].(string); ok {
		desc += named // a long enum, counted
	}
	out["description"] = desc + "(" + BriefCutNote + ": " + shape + "; the server checks it in full.)"
	return out, nil
}

// head returns the type s declares, with null when s is nullable, or nil
// if it declares none, and its description; those of the schema it refers
// to where it has none of its own.
func (in *inliner) head(s *schema) (types any, desc string) {
	nullable := s.nullable
	t := s.get("type")
	desc, _ = s.get("description").(string)
	for hops := 0; (t == nil || desc == "") && s.ref != "" && hops < 8; hops++ {
		target := s.target
		if target == nil {
			var err error
			if target, err = in.d.schemaRef(s.ref, s.refAt.String(), in.where); err != nil {
				break
			}
			s.target = target
		}
		s = target
		nullable = nullable || s.nullable
		if t == nil {
			t = s.get("type")
		}
		if desc == "" {
			desc, _ = s.get("description").(string)
		}
	}
	switch x := t.(type) {
	case string:
		if nullable && x != "null" {
			return []any{x, "null"}, desc
		}
	case []any:
		if nullable && !slices.Contains(x, any("null")) {
			return append(slices.Clip(x), "null"), desc
		}
	}
	return t, desc
}

// constraintKeywords bound a value without naming a subschema. A cut
// part keeps them, and a list's items keep theirs where they are not
// objects, so that a listed schema shows what the full check applies
// (Twilio's AccountSid pattern, an enum of categories).
var constraintKeywords = setOf("enum const pattern format minLength maxLength minimum maximum exclusiveMinimum exclusiveMaximum " +
	"multipleOf minItems maxItems uniqueItems required minProperties maxProperties")

// maxKeptEnum bounds an enum a cut part keeps, in values: a longer one is
// counted in its description instead, and the full check's refusal of a
// value lists them (Stripe's 288 merchant categories).
const maxKeptEnum = 64

// maxKeptBranches bounds the alternatives a cut part keeps.
const maxKeptBranches = 8

// constrain copies into out, a cut part whose type is types, the
// constraints of s and of the schemas it refers to, those of its items
// when they are a scalar's, and, for a part that is one of a few
// alternatives (OpenAPI 3.1's nullable enum: anyOf a string enum and
// null), each alternative's constraints.
func (in *inliner) constrain(out map[string]any, s *schema, types any) {
	in.keep(out, s, types)
	if types != nil {
		return
	}
	alts := in.alternatives(s)
	if len(alts) == 0 || len(alts) > maxKeptBranches {
		return
	}
	branches := make([]any, 0, len(alts))
	for _, a := range alts {
		t, _ := in.head(a)
		m := map[string]any{}
		if t != nil {
			m["type"] = t
		}
		in.keep(m, a, t)
		if len(m) == 0 {
			return // an open alternative: the part allows anything
		}
		branches = append(branches, m)
	}
	out["anyOf"] = branches
}

// keep copies into out, a cut part whose type is types, the constraints
// of s, and those of its items when they are a scalar's.
func (in *inliner) keep(out map[string]any, s *schema, types any) {
	in.copyConstraints(out, s, types, 0)
	if items := in.keyword(s, "items"); items != nil {
		t, _ := in.head(items)
		if t != nil && t != "object" && t != "array" {
			m := map[string]any{"type": t}
			in.copyConstraints(m, items, t, 0)
			if len(m) > 1 {
				out["items"] = m
			}
		}
	}
}

// alternatives returns the subschemas of s's anyOf or oneOf, by
// reference if it has none of its own.
func (in *inliner) alternatives(s *schema) []*schema {
	for hops := 0; s != nil && hops < 8; hops++ {
		for _, k := range []string{"anyOf", "oneOf"} {
			if l, ok := s.get(k).([]*schema); ok {
				return l
			}
		}
		s = in.targetOf(s)
	}
	return nil
}

// keyword returns the subschema s names by keyword name, by reference if
// it has none of its own.
func (in *inliner) keyword(s *schema, name string) *schema {
	for hops := 0; s != nil && hops < 8; hops++ {
		if sub, ok := s.get(name).(*schema); ok {
			return sub
		}
		if s = in.targetOf(s); s == nil {
			return nil
		}
	}
	return nil
}

// targetOf returns the schema s refers to, resolved, or nil.
func (in *inliner) targetOf(s *schema) *schema {
	if s.ref == "" {
		return nil
	}
	if s.target == nil {
		t, err := in.d.schemaRef(s.ref, s.refAt.String(), in.where)
		if err != nil {
			return nil
		}
		s.target = t
	}
	return s.target
}

// copyConstraints copies the constraint keywords of s, of the schemas it
// refers to (its own first) and of those it is allOf, into out, whose
// type is types: an enum of a schema that allows null keeps null, and one
// too long to keep is named instead.
func (in *inliner) copyConstraints(out map[string]any, s *schema, types any, depth int) {
	nullable := false
	if l, ok := types.([]any); ok {
		nullable = slices.Contains(l, any("null"))
	}
	for hops := 0; s != nil && hops < 8; hops++ {
		if all, ok := s.get("allOf").([]*schema); ok && depth < 4 {
			for _, a := range all {
				in.copyConstraints(out, a, types, depth+1)
			}
		}
		for _, k := range s.kws {
			if _, kept := out[k.name]; !constraintKeywords[k.name] || kept {
				continue
			}
			switch v := k.v.(type) {
			case []any:
				if k.name == "enum" && len(v) > maxKeptEnum {
					out["description"] = fmt.Sprintf("One of %d values; a call with another is refused with the list. ", len(v))
					continue
				}
				if k.name == "enum" && nullable && !slices.Contains(v, nil) {
					v = append(slices.Clip(v), nil)
				}
				out[k.name] = v
			default:
				if k.name == "const" && nullable {
					continue
				}
				out[k.name] = v
			}
		}
		s = in.targetOf(s)
	}
}

// refName is the last part of a reference: the schema's name.
func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

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
	if in.brief && in.nodes+s.cost > in.maxNodes {
		return nil, ErrTooLarge
	}
	if depth > in.maxDepth || in.nodes+s.cost > in.maxNodes {
		return in.cut(s)
	}
	if in.brief && s.ref != "" && depth+1 > in.maxDepth {
		// The schema it refers to would be cut: the cut stands for both,
		// so that its note is not lost under the reference's own
		// description.
		return in.cut(s)
	}
	in.nodes += s.cost
	cutsBefore := in.cuts
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
					c, err := in.cut(nil)
					if err != nil {
						return nil, err
					}
					if k.name == "anyOf" || k.name == "oneOf" {
						items = append(items, c)
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
					if _, err := in.cut(nil); err != nil {
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
			if d, ok := v.(string); ok && in.brief && k.name == "description" {
				v = Brief(d, briefSchemaText)
			}
			out[k.name] = v
		}
	}
	if in.cuts > cutsBefore {
		// What a cut part would have evaluated, the rest would refuse.
		delete(out, "unevaluatedProperties")
		delete(out, "unevaluatedItems")
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
		return map[string]any{"description": "(recursive: another " + refName(s.ref) + ")"}, nil
	}
	// Brief expansions have their descriptions shortened: they are kept
	// apart.
	exp := &t.exp
	if in.brief {
		exp = &t.briefExp
	}
	if e := *exp; e != nil && in.nodes+e.nodes <= in.maxNodes && depth+e.height <= in.maxDepth {
		in.nodes += e.nodes
		in.deepest = max(in.deepest, depth+e.height)
		return e.schema, nil
	}
	nodes, deepest, cuts := in.nodes, in.deepest, in.cuts
	within, withinName := in.within, in.withinName
	in.deepest = depth
	in.active[t] = true
	in.within, in.withinName = t, refName(s.ref)
	out, err := in.schema(t, depth)
	in.within, in.withinName = within, withinName
	delete(in.active, t)
	if err == nil && in.cuts == cuts {
		*exp = &expansion{schema: out, nodes: in.nodes - nodes, height: in.deepest - depth}
	}
	in.deepest = max(in.deepest, deepest)
	return out, err
}
