package spec

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	json "github.com/segmentio/encoding/json"
	"go.yaml.in/yaml/v3"
)

// yamlToJSON converts a YAML document to JSON, once its nesting and what
// its aliases expand to are known to be within the limits.
func yamlToJSON(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		// The YAML parser stops at 10,000 levels, before toolgate can say.
		if msg := err.Error(); strings.Contains(msg, "exceeded max depth") {
			at := ""
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				at = " at line " + m[1]
			}
			return nil, fmt.Errorf("the document nests more than 10000 levels deep%s; toolgate reads at most %d", at, MaxNesting)
		}
		return nil, fmt.Errorf("neither JSON nor YAML: %v", err)
	}
	if err := checkYAML(&root); err != nil {
		return nil, err
	}
	v, err := (&yamlConverter{done: map[*yaml.Node]any{}, active: map[*yaml.Node]bool{}}).value(&root)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlExtent is what a YAML node expands to, its aliases followed: how
// deep it nests and about how many bytes of JSON it makes.
type yamlExtent struct {
	height int
	bytes  int64
}

// checkYAML refuses a YAML document that nests deeper than MaxNesting or
// whose aliases expand it past MaxDocumentBytes of JSON ("billion
// laughs"). Every node is measured once, aliases included, without
// recursion: a chain of aliases can be as long as the document.
func checkYAML(root *yaml.Node) error {
	ext := map[*yaml.Node]yamlExtent{}
	started := map[*yaml.Node]bool{}
	type frame struct {
		n    *yaml.Node
		done bool
	}
	kids := func(n *yaml.Node) []*yaml.Node {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			return []*yaml.Node{n.Alias}
		}
		return n.Content
	}
	stack := []frame{{n: root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !f.done {
			// A node already measured, or one its own alias names (the
			// decoder refuses those), is not measured again.
			if _, ok := ext[f.n]; ok || started[f.n] {
				continue
			}
			started[f.n] = true
			stack = append(stack, frame{n: f.n, done: true})
			for _, k := range kids(f.n) {
				stack = append(stack, frame{n: k})
			}
			continue
		}
		var e yamlExtent
		for _, k := range kids(f.n) {
			ke := ext[k]
			e.height = max(e.height, ke.height)
			e.bytes = min(e.bytes+ke.bytes+1, MaxDocumentBytes+1)
		}
		switch f.n.Kind {
		case yaml.MappingNode, yaml.SequenceNode:
			e.height++
			e.bytes = min(e.bytes+2, MaxDocumentBytes+1)
		case yaml.ScalarNode:
			e.bytes = int64(len(f.n.Value)) + 2
		}
		ext[f.n] = e
	}
	top := ext[root]
	if top.height > MaxNesting {
		// Follow the deepest branch to where it passes the limit.
		n, depth := root, 0
		for depth <= MaxNesting {
			if n.Kind == yaml.AliasNode && n.Alias != nil {
				n = n.Alias
				continue
			}
			if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
				depth++
			}
			var next *yaml.Node
			for _, k := range n.Content {
				if next == nil || ext[k].height > ext[next].height {
					next = k
				}
			}
			if next == nil || depth > MaxNesting {
				break
			}
			n = next
		}
		return nestingError(top.height, n.Line, n.Column)
	}
	if top.bytes > MaxDocumentBytes {
		return fmt.Errorf("the YAML document's aliases expand it to more than %d MiB; toolgate reads at most %d MiB", MaxDocumentBytes>>20, MaxDocumentBytes>>20)
	}
	return nil
}

// yamlConverter turns YAML nodes into values encoding/json takes. The
// YAML package's own decoder compares every key of a mapping with every
// other, which takes minutes on a large one; this takes time linear in the
// nodes, and converts what an alias names once.
type yamlConverter struct {
	done   map[*yaml.Node]any  // anchored nodes, converted
	active map[*yaml.Node]bool // anchored nodes being converted
}

func (c *yamlConverter) value(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: the alias *%s names nothing", n.Line, n.Value)
		}
		return c.value(n.Alias)
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	if v, ok := c.done[n]; ok {
		return v, nil
	}
	if c.active[n] {
		return nil, fmt.Errorf("line %d: the anchor &%s contains itself", n.Line, n.Anchor)
	}
	if n.Anchor != "" {
		c.active[n] = true
		defer delete(c.active, n)
	}
	var v any
	var err error
	if n.Kind == yaml.SequenceNode {
		v, err = c.sequence(n)
	} else {
		v, err = c.mapping(n)
	}
	if err == nil && n.Anchor != "" {
		c.done[n] = v
	}
	return v, err
}

func (c *yamlConverter) sequence(n *yaml.Node) (any, error) {
	out := make([]any, len(n.Content))
	for i, e := range n.Content {
		v, err := c.value(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// mapping converts a mapping; its keys become strings as written, and
// "<<" merges mappings in without overriding the keys it has.
func (c *yamlConverter) mapping(n *yaml.Node) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	line := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, e := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge") {
			merges = append(merges, e)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key that is not a string", k.Line)
		}
		if first, ok := line[k.Value]; ok {
			return nil, fmt.Errorf("line %d: the key %q is already defined at line %d", k.Line, k.Value, first)
		}
		line[k.Value] = k.Line
		v, err := c.value(e)
		if err != nil {
			return nil, err
		}
		out[k.Value] = v
	}
	for _, m := range merges {
		list := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			list = m.Content
		}
		for _, e := range list {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			from, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("line %d: \"<<\" merges a mapping, not this", e.Line)
			}
			for k, x := range from {
				if _, ok := out[k]; !ok {
					out[k] = x
				}
			}
		}
	}
	return out, nil
}

// yamlScalar converts a scalar as YAML resolves it: null, a boolean, a
// number, or else its text (a timestamp stays as written). An infinite or
// NaN number, which JSON cannot hold, stays text too.
func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return n.Value, nil
		}
		return v, nil
	}
	return n.Value, nil
}
