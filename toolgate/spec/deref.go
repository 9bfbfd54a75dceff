package spec

import json "github.com/segmentio/encoding/json"

// Deref follows raw's $ref, and the $refs it leads to, to the value they
// name, without inlining what lies below it: a look at a schema's top level
// (its properties, their types and enums) costs one decode, not a whole
// inlined schema. A raw value without $ref comes back as it is.
func (d *Document) Deref(raw json.RawMessage, where string) (json.RawMessage, error) {
	return d.deref(raw, where)
}
