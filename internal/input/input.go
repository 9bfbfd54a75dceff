// Package input checks what the journal and the ledger are given before it
// reaches a store, so that every store sees the same, storable values and
// refuses nothing the others accept: text is valid UTF-8 without NUL
// (PostgreSQL refuses both in TEXT and JSONB; SQLite stores them), sizes
// are bounded (PostgreSQL's indexes refuse long keys; SQLite's do not),
// and evidence encodes as JSON.
package input

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Text checks s, the value of the input named what: valid UTF-8, no NUL,
// at most max bytes. A zero max means no bound on size.
func Text(what, s string, max int) error {
	switch {
	case max > 0 && len(s) > max:
		return fmt.Errorf("%s is %d bytes (%s): at most %d are stored; use a shorter one", what, len(s), excerpt(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %s is not valid UTF-8: give text, or encode bytes (hex, base64) first", what, excerpt(s))
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s %s contains a NUL character, which no store keeps: remove it, or encode the value first", what, excerpt(s))
	}
	return nil
}

// Clean returns s as text every store keeps: invalid UTF-8 and NUL become
// U+FFFD, and text past max bytes is cut, at a character, with "…" added.
// It is for text a program produces and must not fail to record, such as
// an error message.
func Clean(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if max > 0 && len(s) > max {
		cut := max - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// JSON checks v, the evidence named what: it encodes as JSON in at most
// max bytes, and every string in it, map keys included, is valid UTF-8
// without NUL (encoding/json would silently replace invalid UTF-8, and
// PostgreSQL's JSONB refuses an escaped NUL). It returns the encoding.
func JSON(what string, v any, max int) ([]byte, error) {
	if err := walk(what, reflect.ValueOf(v), 0); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be stored as JSON: %v", what, err)
	}
	if max > 0 && len(b) > max {
		return nil, fmt.Errorf("%s is %d bytes as JSON: at most %d are stored; keep large data elsewhere and record a reference to it", what, len(b), max)
	}
	return b, nil
}

// maxDepth bounds how deep walk follows nested values; encoding/json
// reports cycles and absurd nesting itself.
const maxDepth = 64

func walk(what string, v reflect.Value, depth int) error {
	if !v.IsValid() || depth > maxDepth {
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if v.Type() == reflect.TypeFor[json.Number]() {
			return nil
		}
		return Text(what, v.String(), 0)
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s holds %v, which JSON cannot represent: record it as a string", what, f)
		}
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			return walk(what, v.Elem(), depth+1)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			name := what
			if k.Kind() == reflect.String {
				name = fmt.Sprintf("%s[%q]", what, k.String())
				if err := Text(what+" key", k.String(), 0); err != nil {
					return err
				}
			}
			if err := walk(name, iter.Value(), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes, encoded as base64
		}
		for i := range v.Len() {
			if err := walk(fmt.Sprintf("%s[%d]", what, i), v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if err := walk(what+"."+v.Type().Field(i).Name, v.Field(i), depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// excerpt quotes the start of s for a message, so that a huge or binary
// value does not flood it.
func excerpt(s string) string {
	const n = 40
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}
