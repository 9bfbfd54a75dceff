package risk

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	json "github.com/segmentio/encoding/json"

	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// bodyFacts is what the top level of a request body's schema says: the
// properties that choose an action, with their choices, and the boolean
// properties, by name.
type bodyFacts struct {
	choices  map[string][]string // property → its enum's values
	booleans []string
	names    []string // every property's name
}

// Limits of the walk: the top level of a body, through a few
// combinations (allOf, oneOf, anyOf), is where an action is chosen.
const (
	maxBodyDepth   = 3
	maxBodySchemas = 64
)

// readBody gathers bodyFacts from op's body, following references with
// doc. A body it cannot read gives no facts: the other signals still hold.
func readBody(doc *spec.Document, op *spec.Operation) bodyFacts {
	f := bodyFacts{choices: map[string][]string{}}
	if doc == nil || op.Body == nil || len(op.Body.Schema) == 0 {
		return f
	}
	seen := 0
	var walk func(raw json.RawMessage, depth int)
	walk = func(raw json.RawMessage, depth int) {
		if seen++; seen > maxBodySchemas || depth > maxBodyDepth {
			return
		}
		raw, err := doc.Deref(raw, op.Where)
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			return
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			AllOf      []json.RawMessage          `json:"allOf"`
			OneOf      []json.RawMessage          `json:"oneOf"`
			AnyOf      []json.RawMessage          `json:"anyOf"`
		}
		if json.Unmarshal(raw, &s) != nil {
			return
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			f.property(doc, op, name, s.Properties[name])
		}
		for _, list := range [][]json.RawMessage{s.AllOf, s.OneOf, s.AnyOf} {
			for _, sub := range list {
				walk(sub, depth+1)
			}
		}
	}
	walk(op.Body.Schema, 0)
	return f
}

func (f *bodyFacts) property(doc *spec.Document, op *spec.Operation, name string, raw json.RawMessage) {
	f.names = append(f.names, name)
	if !actionProperties[strings.ToLower(name)] && !flagName(name) {
		return // only its name matters
	}
	raw, err := doc.Deref(raw, op.Where)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return
	}
	var p struct {
		Type  json.RawMessage `json:"type"`
		Enum  []any           `json:"enum"`
		Const any             `json:"const"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	if bytes.Contains(p.Type, []byte(`"boolean"`)) {
		f.booleans = append(f.booleans, name)
	}
	if !actionProperties[strings.ToLower(name)] {
		return
	}
	for _, v := range append(p.Enum, p.Const) {
		if s, ok := v.(string); ok && !contains(f.choices[name], s) {
			f.choices[name] = append(f.choices[name], s)
		}
	}
}

// flagName says whether a boolean property of this name could force a
// change or move money.
func flagName(name string) bool {
	_, _, k := verbIn(splitWords(name), verbSlot, irreversible, movesMoney)
	return k != none || strings.EqualFold(name, "confirm")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// body applies what the request body says: an action chosen among
// destructive ones, a flag that forces the change or confirms a payment,
// a spending limit.
func (a *Assessment) body(doc *spec.Document, v *view) {
	f := readBody(doc, v.op)
	props := make([]string, 0, len(f.choices))
	for p := range f.choices {
		props = append(props, p)
	}
	sort.Strings(props)
	for _, p := range props {
		var bad, good, approving []string
		for _, c := range f.choices[p] {
			w := splitWords(c)
			switch _, _, k := verbIn(w, verbSlot, destroys, reachesIn, approves); k {
			case approves:
				approving = append(approving, c)
			case none:
				good = append(good, c)
			default:
				bad = append(bad, c)
			}
		}
		if len(bad) > 0 {
			a.raise(Destructive, fmt.Sprintf("its body chooses the action, and some choices destroy or undo (%s: %s)", p, list(bad, 4)))
			if len(good) > 0 {
				a.flag(fmt.Sprintf("its body's %s chooses among destructive actions (%s) and harmless ones (%s): hidden for the destructive ones", p, list(bad, 3), list(good, 3)))
			}
		}
		if len(approving) > 0 {
			a.flag(fmt.Sprintf("its body can approve (%s: %s): an approval may unlock what needs one", p, list(approving, 2)))
		}
	}
	before := a.Class
	for _, b := range f.booleans {
		w := splitWords(b)
		if _, verb, _ := verbIn(w, verbSlot, irreversible); verb == "force" {
			a.raise(Destructive, fmt.Sprintf("its body can force the change (%q), which may discard others' work", b))
		}
		_, _, k := verbIn(w, verbSlot, movesMoney)
		if k == movesMoney || len(w) == 1 && w[0] == "confirm" && a.moneyContext(v) != "" {
			a.raise(Destructive, fmt.Sprintf("its body can move money at once (%q)", b))
			if before == Write {
				a.flag(fmt.Sprintf("only its body's %q makes it move money: without it, it is a write", b))
			}
		}
	}
	for _, n := range f.names {
		// The last word of a property's name is what it holds: "base_role"
		// holds a role, "permissions_opt_out" a choice.
		if w := splitWords(n); len(w) > 0 && grantNouns[w[len(w)-1]] {
			a.raise(Privileged, fmt.Sprintf("its body can set who may do what (%q)", n))
			break
		}
	}
	for _, n := range f.names {
		w := splitWords(n)
		if contains(w, "budget") || (contains(w, "spend") || contains(w, "spending")) && (contains(w, "limit") || contains(w, "limits")) {
			a.raise(Privileged, fmt.Sprintf("it changes billing or spending limits (%q in its body)", n))
			break
		}
	}
}

// grantNouns are what a body property that grants rights holds.
var grantNouns = set("role roles permission permissions privilege privileges admin scopes")

// list joins at most n items, and says how many more there are.
func list(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
