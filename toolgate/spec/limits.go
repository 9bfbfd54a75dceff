package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	json "github.com/segmentio/encoding/json"
	"go.yaml.in/yaml/v3"
)

// Limits on a document, which is untrusted input. Both are far above what
// real API descriptions need: GitHub's, among the largest, is 13 MB and
// nests 21 levels deep.
const (
	// MaxDocumentBytes is the size of the largest document toolgate reads,
	// and of the largest JSON a YAML document's aliases may expand to.
	MaxDocumentBytes = 64 << 20
	// MaxNesting is how many levels deep a document may nest objects and
	// arrays. Decoding recurses once per level; a Go stack overflow cannot
	// be recovered from, so deeper input is refused before it is decoded.
	MaxNesting = 1000
)

// readLimited reads the file at path, up to MaxDocumentBytes: a larger
// file is refused without being read, and so is anything that is not a
// regular file once it passes the limit. Reading stops when ctx is done.
func readLimited(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > MaxDocumentBytes {
		return nil, tooBig(info.Size())
	}
	// A pipe or a device can be read from forever; a deadline in the past
	// ends a read that waits on one.
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	// Read one byte more than the limit, into a buffer of the size the
	// file says it has: what grows while it is read is still caught.
	data := make([]byte, 0, info.Size()+512)
	for len(data) <= MaxDocumentBytes && err == nil {
		if len(data) == cap(data) {
			data = slices.Grow(data, min(len(data), MaxDocumentBytes+1-len(data)))
		}
		var n int
		n, err = f.Read(data[len(data):min(cap(data), MaxDocumentBytes+1)])
		data = data[:len(data)+n]
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocumentBytes {
		return nil, tooBig(-1)
	}
	return data, nil
}

func tooBig(size int64) error {
	if size < 0 {
		return fmt.Errorf("spec: the document is larger than %d MiB, the most toolgate reads", MaxDocumentBytes>>20)
	}
	return fmt.Errorf("spec: the document is %.1f MiB; toolgate reads at most %d MiB", float64(size)/(1<<20), MaxDocumentBytes>>20)
}

// checkNesting scans JSON for objects and arrays nested deeper than
// MaxNesting, skipping strings, in one pass that does not recurse.
func checkNesting(data []byte) error {
	depth, deepest, at := 0, 0, -1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i+1)
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if depth > MaxNesting && at < 0 {
					at = i
				}
			}
		case '}', ']':
			depth--
		}
	}
	if at < 0 {
		return nil
	}
	line, col := position(data, int64(at))
	return nestingError(deepest, line, col+1)
}

// stringEnd returns the index of the quote that closes the JSON string
// starting at i, or len(data).
func stringEnd(data []byte, i int) int {
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return len(data)
		}
		q += i
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for j := q - 1; j >= i && data[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

func nestingError(depth, line, col int) error {
	return fmt.Errorf("spec: the document nests %d levels deep at line %d, column %d; toolgate reads at most %d", depth, line, col, MaxNesting)
}

// yamlToJSON converts a YAML document to JSON, once its nesting and what
// its aliases expand to are known to be within the limits.
func yamlToJSON(data []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("spec: neither JSON nor YAML: %v", err)
	}
	if err := checkYAML(&root); err != nil {
		return nil, err
	}
	var v any
	if err := root.Decode(&v); err != nil {
		return nil, fmt.Errorf("spec: neither JSON nor YAML: %v", err)
	}
	return json.Marshal(jsonCompatible(v))
}

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
		return fmt.Errorf("spec: the YAML document's aliases expand it to more than %d MiB; toolgate reads at most %d MiB", MaxDocumentBytes>>20, MaxDocumentBytes>>20)
	}
	return nil
}

// jsonCompatible turns YAML's map[string]any trees, and any map with
// non-string keys, into what encoding/json accepts; an infinite or NaN
// number, which JSON cannot hold, becomes a string.
func jsonCompatible(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonCompatible(e)
		}
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonCompatible(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonCompatible(e)
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return v
}

var errEmpty = errors.New("spec: the document is empty")
