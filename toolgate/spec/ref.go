package spec

import (
	"bytes"
	"fmt"
	"net/url"
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
	return fmt.Sprintf("%s: the reference %q leaves the document; only local references (#/...) are followed", e.Where, e.Ref)
}

// maxPointerTokens is how many steps a reference may take into the
// document. Real references take a dozen at most; the limit keeps
// following many deep ones linear in the document's size.
const maxPointerTokens = 64

// span is a value's place in the document's bytes: whichever slice of the
// document holds a value, the value has one span.
type span struct{ off, n int }

// spanOf returns raw's place in the document, and false if raw is not a
// slice of it (a schema made up while loading a Swagger document).
// Slices of the document end where its capacity ends.
func (d *Document) spanOf(raw []byte) (span, bool) {
	if cap(raw) == 0 || cap(raw) > cap(d.rawBytes) {
		return span{}, false
	}
	all, r := d.rawBytes[:cap(d.rawBytes)], raw[:cap(raw)]
	if &r[len(r)-1] != &all[len(all)-1] {
		return span{}, false
	}
	return span{off: cap(d.rawBytes) - cap(raw), n: len(raw)}, true
}

// refOf returns the $ref of an object, if it has one. It reads the
// object's top-level keys and skips their values, without decoding them:
// every parameter, body and response goes through here.
func refOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '{' || !bytes.Contains(raw, []byte(`"$ref"`)) && !bytes.Contains(raw, []byte(`\u`)) {
		return "", false // neither the key nor an escape that could spell it
	}
	s := refScanner{data: raw}
	for i := s.space(1); i < len(raw) && raw[i] != '}'; {
		key, j := s.str(i)
		j = s.space(s.space(j) + 1)
		if key == "$ref" {
			if j < len(raw) && raw[j] == '"' {
				ref, _ := s.str(j)
				return ref, ref != ""
			}
			return "", false
		}
		if i = s.space(s.skip(j)); i < len(raw) && raw[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return "", false
}

// topLevel returns an object's members, as slices of raw, found by
// skipping their values rather than decoding them; nil if raw is not an
// object. Decoding the object into a struct is what checks it.
func topLevel(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	m := map[string]json.RawMessage{}
	s := refScanner{data: raw}
	for i := s.space(1); i < len(raw) && raw[i] != '}'; {
		key, j := s.str(i)
		j = s.space(s.space(j) + 1)
		end := s.skip(j)
		m[key] = bytes.TrimRight(raw[j:end], " \t\r\n")
		if i = s.space(end); i < len(raw) && raw[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return m
}

// deref follows raw's $ref, and the $refs it leads to, to the object they
// name.
func (d *Document) deref(raw json.RawMessage, where string) (json.RawMessage, error) {
	first, ok := refOf(raw)
	if !ok {
		return raw, nil
	}
	d.rawMu.Lock()
	v, ok := d.derefs[first]
	d.rawMu.Unlock()
	if ok {
		return v, nil
	}
	seen := map[string]bool{}
	for ref, ok := first, true; ok; ref, ok = refOf(raw) {
		if seen[ref] {
			return nil, fmt.Errorf("%s: the reference %q leads back to itself", where, ref)
		}
		seen[ref] = true
		next, err := d.resolve(ref, where)
		if err != nil {
			return nil, err
		}
		raw = next
	}
	d.rawMu.Lock()
	defer d.rawMu.Unlock()
	if d.derefs == nil {
		d.derefs = map[string]json.RawMessage{}
	}
	d.derefs[first] = raw
	return raw, nil
}

// pointer returns the tokens of a local reference's JSON pointer.
func pointer(ref, where string) ([]string, error) {
	frag, local := strings.CutPrefix(ref, "#")
	switch {
	case !local:
		return nil, &ExternalRefError{Ref: ref, Where: where}
	case frag == "":
		return nil, fmt.Errorf("%s: the reference %q names the whole document", where, ref)
	case frag[0] != '/':
		return nil, fmt.Errorf("%s: the reference %q names an anchor; toolgate follows only JSON pointers (#/...)", where, ref)
	}
	if strings.Contains(frag, "%") {
		// A pointer in a URI fragment is percent-encoded.
		if u, err := url.PathUnescape(frag); err == nil {
			frag = u
		}
	}
	tokens := strings.Split(frag[1:], "/")
	if len(tokens) > maxPointerTokens {
		return nil, fmt.Errorf("%s: the reference %.80q... goes %d levels into the document; toolgate follows at most %d", where, ref, len(tokens), maxPointerTokens)
	}
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// resolve returns the raw value that the local reference ref names.
func (d *Document) resolve(ref, where string) (json.RawMessage, error) {
	tokens, err := pointer(ref, where)
	if err != nil {
		return nil, err
	}
	v, rest := d.base(tokens)
	for _, t := range rest {
		next, err := d.child(v, t)
		if err != nil {
			return nil, fmt.Errorf("%s: the reference %q: %v", where, ref, err)
		}
		if next == nil {
			return nil, fmt.Errorf("%s: the reference %q names nothing in the document", where, ref)
		}
		v = next
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%s: the reference %q names nothing in the document", where, ref)
	}
	return v, nil
}

// base returns where the walk along tokens starts: a component, path item
// or definition that loading decoded already, else the whole document.
func (d *Document) base(tokens []string) (json.RawMessage, []string) {
	named := func(m map[string]json.RawMessage, n int) (json.RawMessage, []string, bool) {
		if len(tokens) < n {
			return nil, nil, false
		}
		v, ok := m[tokens[n-1]]
		return v, tokens[n:], ok
	}
	var v json.RawMessage
	var rest []string
	ok := false
	c := &d.raw.Components
	switch first(tokens) {
	case "components":
		var m map[string]json.RawMessage
		switch first(tokens[1:]) {
		case "schemas":
			m = c.Schemas
		case "parameters":
			m = c.Parameters
		case "requestBodies":
			m = c.RequestBodies
		case "responses":
			m = c.Responses
		case "securitySchemes":
			m = c.SecuritySchemes
		case "pathItems":
			m = c.PathItems
		}
		v, rest, ok = named(m, 3)
	case "definitions":
		v, rest, ok = named(d.raw.Definitions, 2)
	case "parameters":
		v, rest, ok = named(d.raw.Parameters, 2)
	case "responses":
		v, rest, ok = named(d.raw.Responses, 2)
	case "paths":
		if len(tokens) >= 3 {
			v, ok = d.raw.Paths[tokens[1]][tokens[2]]
			rest = tokens[3:]
		}
	}
	if !ok {
		return d.rawBytes, tokens
	}
	return v, rest
}

// child returns the member t of the object v, or its element t if v is an
// array; nil if there is none. What an object or array holds is decoded
// once, so that following many references through it takes time linear in
// its size.
func (d *Document) child(v json.RawMessage, t string) (json.RawMessage, error) {
	if len(v) == 0 {
		return nil, nil
	}
	sp, inDoc := d.spanOf(v)
	d.rawMu.Lock()
	defer d.rawMu.Unlock()
	switch v[0] {
	case '{':
		m, ok := d.members[sp]
		if !ok || !inDoc {
			if err := decode(v, &m); err != nil {
				return nil, err
			}
			if inDoc {
				if d.members == nil {
					d.members = map[span]map[string]json.RawMessage{}
				}
				d.members[sp] = m
			}
		}
		return m[t], nil
	case '[':
		a, ok := d.elements[sp]
		if !ok || !inDoc {
			if err := decode(v, &a); err != nil {
				return nil, err
			}
			if inDoc {
				if d.elements == nil {
					d.elements = map[span][]json.RawMessage{}
				}
				d.elements[sp] = a
			}
		}
		if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(a) && t == strconv.Itoa(i) {
			return a[i], nil
		}
	}
	return nil, nil
}
