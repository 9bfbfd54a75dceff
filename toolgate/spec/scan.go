package spec

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/segmentio/encoding/json"
)

// prepare checks, when the document loads, that every reference the
// schemas of op hold where inlining follows them can be followed: a tool
// whose schema leaves the document, or names nothing, cannot be
// described, and a document with one is refused. The schemas are scanned,
// not decoded: converting them waits until a tool is listed, and most of a
// large document's never are.
func (d *Document) prepare(ctx context.Context, op *Operation) error {
	sc := refScanner{v31: strings.HasPrefix(d.Version, "3.1")}
	roots := func(raw json.RawMessage, base string) {
		if len(raw) == 0 {
			return
		}
		if sp, ok := d.spanOf(raw); ok {
			if d.scanned[sp] {
				return
			}
			if d.scanned == nil {
				d.scanned = map[span]bool{}
			}
			d.scanned[sp] = true
		}
		sc.schema(raw, base)
	}
	for _, p := range op.Parameters {
		roots(p.Schema, op.Where+": parameter "+p.Name)
	}
	if op.Body != nil {
		roots(op.Body.Schema, op.Where+": request body")
	}
	roots(op.Output, op.Where+": response")
	for n := 0; len(sc.found) > 0; n++ {
		if n%1024 == 0 {
			if err := context.Cause(ctx); err != nil {
				return err
			}
		}
		f := sc.found[len(sc.found)-1]
		sc.found = sc.found[:len(sc.found)-1]
		key := f.ref
		if f.names {
			key = "properties " + key
		}
		if d.followed[key] {
			continue
		}
		if d.followed == nil {
			d.followed = map[string]bool{}
		}
		d.followed[key] = true
		raw, err := d.resolve(f.ref, f.at.String())
		if err != nil {
			return err
		}
		if f.names {
			sc.names(raw, f.ref)
		} else {
			sc.schema(raw, f.ref)
		}
	}
	return nil
}

// foundRef is a reference a scan found: a schema's, or one that stands for
// an object of schemas (properties: {$ref: ...}), and where, said in words
// only if an error needs it.
type foundRef struct {
	ref   string
	at    *loc
	names bool
}

// refScanner finds the references in raw schemas, without decoding them,
// where conversion follows them: in subschemas, not in examples, defaults
// or extensions, and in OpenAPI 3.0 not beside a $ref. Its input is JSON
// that the document's decoding has checked.
type refScanner struct {
	v31  bool
	data []byte
	base string
	path []string // tokens from base to where the scan is
	// locs are the places of path's prefixes, made when a reference needs
	// one: each once, however many references are found below it.
	locs  []*loc
	found []foundRef
}

func (s *refScanner) schema(raw []byte, base string) {
	s.data, s.base, s.path, s.locs = raw, base, s.path[:0], s.locs[:0]
	s.value(s.space(0), true)
}

func (s *refScanner) names(raw []byte, base string) {
	s.data, s.base, s.path, s.locs = raw, base, s.path[:0], s.locs[:0]
	s.namesAt(s.space(0), false)
}

func (s *refScanner) push(token string) { s.path = append(s.path, token) }

func (s *refScanner) pop() {
	s.path = s.path[:len(s.path)-1]
	s.locs = s.locs[:min(len(s.locs), len(s.path)+1)]
}

// where says where the scan is, as the converter's notes do.
func (s *refScanner) where() *loc {
	if len(s.locs) == 0 {
		s.locs = append(s.locs, &loc{token: s.base})
	}
	for len(s.locs) <= len(s.path) {
		s.locs = append(s.locs, &loc{parent: s.locs[len(s.locs)-1], token: s.path[len(s.locs)-1]})
	}
	return s.locs[len(s.path)]
}

// value scans the value at i, a schema if schema is true, and returns
// where it ends.
func (s *refScanner) value(i int, schema bool) int {
	if i >= len(s.data) {
		return i
	}
	if schema && s.data[i] == '{' {
		return s.object(i)
	}
	return s.skip(i)
}

// object scans a schema object.
func (s *refScanner) object(i int) int {
	start, own := len(s.found), -1
	i = s.space(i + 1)
	for i < len(s.data) && s.data[i] != '}' {
		var key string
		key, i = s.str(i)
		i = s.space(s.space(i) + 1) // the colon
		s.push(key)
		switch {
		case key == "$ref" && i < len(s.data) && s.data[i] == '"':
			var ref string
			ref, i = s.str(i)
			if ref != "" { // conversion drops an empty one
				own = len(s.found)
				s.pop() // the reference is the object's
				s.found = append(s.found, foundRef{ref: ref, at: s.where()})
				s.push(key)
			}
		case subschemaKeywords[key] || key == "items" && i < len(s.data) && s.data[i] == '{':
			i = s.value(i, true)
		case key == "items" || key == "allOf" || key == "anyOf" || key == "oneOf" || key == "prefixItems":
			i = s.list(i)
		case key == "properties" || key == "dependentSchemas" || key == "dependencies":
			i = s.namesAt(i, false)
		case key == "patternProperties":
			i = s.namesAt(i, true)
		default:
			i = s.skip(i)
		}
		s.pop()
		i = s.space(i)
		if i < len(s.data) && s.data[i] == ',' {
			i = s.space(i + 1)
		}
	}
	if own >= 0 && !s.v31 {
		// OpenAPI 3.0 ignores what is beside a $ref, and so does
		// conversion, but for annotations, which hold no schemas.
		s.found = append(s.found[:start], s.found[own])
	}
	return i + 1
}

// list scans an array of schemas.
func (s *refScanner) list(i int) int {
	if i >= len(s.data) || s.data[i] != '[' {
		return s.skip(i)
	}
	i = s.space(i + 1)
	for n := 0; i < len(s.data) && s.data[i] != ']'; n++ {
		s.push(strconv.Itoa(n))
		i = s.space(s.value(i, true))
		s.pop()
		if i < len(s.data) && s.data[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return i + 1
}

// namesAt scans an object of schemas, or the reference that stands for
// one. Where the names are patterns, those conversion drops are skipped.
func (s *refScanner) namesAt(i int, patterns bool) int {
	if i >= len(s.data) || s.data[i] != '{' {
		return s.skip(i)
	}
	// {"$ref": "..."} alone is a reference to the object.
	if j := s.space(i + 1); j < len(s.data) && s.data[j] == '"' {
		if key, k := s.str(j); key == "$ref" {
			k = s.space(s.space(k) + 1)
			if k < len(s.data) && s.data[k] == '"' {
				ref, end := s.str(k)
				if end = s.space(end); end < len(s.data) && s.data[end] == '}' && ref != "" {
					s.found = append(s.found, foundRef{ref: ref, at: s.where(), names: true})
					return end + 1
				}
			}
		}
	}
	i = s.space(i + 1)
	for i < len(s.data) && s.data[i] != '}' {
		var name string
		name, i = s.str(i)
		i = s.space(s.space(i) + 1)
		s.push(name)
		i = s.space(s.value(i, !patterns || checkPattern(name) == nil))
		s.pop()
		if i < len(s.data) && s.data[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return i + 1
}

// str reads the string at i and returns it and where it ends.
func (s *refScanner) str(i int) (string, int) {
	if i >= len(s.data) || s.data[i] != '"' {
		return "", s.skip(i)
	}
	end := stringEnd(s.data, i+1)
	raw := s.data[i+1 : min(end, len(s.data))]
	if !bytes.Contains(raw, []byte(`\`)) && utf8.Valid(raw) {
		return string(raw), end + 1
	}
	var v string
	stdjson.Unmarshal(s.data[i:min(end+1, len(s.data))], &v)
	return v, end + 1
}

// skip returns where the value at i ends.
func (s *refScanner) skip(i int) int {
	depth := 0
	for ; i < len(s.data); i++ {
		switch s.data[i] {
		case '"':
			i = stringEnd(s.data, i+1)
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing value
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

func (s *refScanner) space(i int) int {
	for i < len(s.data) && (s.data[i] == ' ' || s.data[i] == '\n' || s.data[i] == '\t' || s.data[i] == '\r') {
		i++
	}
	return i
}
