package spec

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestRefOfReadsOnlyTheTopLevel(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"a": {"$ref": "#/x"}, "$ref": "#/y"}`:            "#/y",
		`{"a": "\"$ref\": \"#/x\"", "b": 1}`:               "",
		`{"$ref": 5}`:                                      "",
		`{"x": [1, {"$ref": "#/z"}, "]}"], "$ref": "#/q"}`: "#/q",
		`{ "$ref" : "#/components/parameters/a" }`:         "#/components/parameters/a",
		`{"\u0024ref": "#/escaped"}`:                       "#/escaped",
		`{"description": "no reference"}`:                  "",
		`[{"$ref": "#/in-an-array"}]`:                      "",
	} {
		got, ok := refOf([]byte(raw))
		if got != want || ok != (want != "") {
			t.Errorf("refOf(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
}

// The scan finds references where inlining follows them, and only there.
func TestScanFindsReferencesWhereInliningFollowsThem(t *testing.T) {
	t.Parallel()
	schema := `{"type": "object",
	  "properties": {"a": {"$ref": "#/a"}, "$ref": {"$ref": "#/named-ref"}, "b": {"items": {"$ref": "#/b"}}},
	  "patternProperties": {"^x": {"$ref": "#/p"}}, "dependentSchemas": {"$ref": "#/names"},
	  "allOf": [{"$ref": "#/all"}, true, {"not": {"$ref": "#/not"}}], "items": [{"$ref": "#/tuple"}],
	  "example": {"$ref": "#/example"}, "default": [{"$ref": "#/default"}], "x-ext": {"$ref": "#/ext"},
	  "enum": [{"$ref": "#/enum"}], "description": "{\"$ref\": \"#/text\"}",
	  "oneOf": [{"$ref": "#/with-siblings", "properties": {"c": {"$ref": "#/beside"}}}]}`
	for v31, want := range map[bool][]string{
		false: {"#/a", "#/named-ref", "#/b", "#/p", "#/names", "#/all", "#/not", "#/tuple", "#/with-siblings"},
		true:  {"#/a", "#/named-ref", "#/b", "#/p", "#/names", "#/all", "#/not", "#/tuple", "#/with-siblings", "#/beside"},
	} {
		s := refScanner{v31: v31}
		s.schema([]byte(schema), "#/components/schemas/S")
		var got []string
		for _, f := range s.found {
			got = append(got, f.ref)
			if f.ref == "#/b" && f.at.String() != "#/components/schemas/S/properties/b/items" {
				t.Errorf("#/b found at %s", f.at)
			}
			if f.names != (f.ref == "#/names") {
				t.Errorf("%s: names %v", f.ref, f.names)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("3.1 %v: found %v\nwant %v", v31, got, want)
		}
	}
}

// FuzzScanMatchesConversion checks that the scan at load finds the
// references that inlining follows: those of the converted schema.
func FuzzScanMatchesConversion(f *testing.F) {
	f.Add(false, []byte(`{"properties": {"a": {"$ref": "#/a"}, "b": {"items": [{"$ref": "#/b"}]}}, "example": {"$ref": "#/x"}}`))
	f.Add(true, []byte(`{"$ref": "#/a", "allOf": [{"$ref": "#/b"}, {"not": {"$ref": "#/c", "if": {"$ref": "#/d"}}}]}`))
	f.Add(false, []byte(`{"dependencies": {"a": ["b"], "c": {"$ref": "#/c"}}, "patternProperties": {"(": {"$ref": "#/p"}}}`))
	f.Fuzz(func(t *testing.T, v31 bool, raw []byte) {
		v, err := decodeTree(raw)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
			return
		}
		version := "3.0.3"
		if v31 {
			version = "3.1.0"
		}
		c := converter{d: &Document{Version: version}, v31: v31}
		var converted []string
		var walk func(s *schema)
		walk = func(s *schema) {
			if s.ref != "" {
				converted = append(converted, s.ref)
			}
			for _, k := range s.kws {
				switch x := k.v.(type) {
				case *schema:
					walk(x)
				case []*schema:
					for _, e := range x {
						walk(e)
					}
				case []property:
					for _, p := range x {
						walk(p.s)
					}
				}
			}
		}
		walk(c.convert(v, &loc{token: "#"}))
		if c.err != nil {
			return // a reference standing for properties, which the scan reports apart
		}
		sc := refScanner{v31: v31}
		sc.schema(bytes.TrimSpace(raw), "#")
		var scanned []string
		for _, f := range sc.found {
			if !f.names {
				scanned = append(scanned, f.ref)
			}
		}
		slices.Sort(converted)
		slices.Sort(scanned)
		if !slices.Equal(converted, scanned) {
			t.Fatalf("%s: conversion follows %q, the scan found %q", raw, converted, scanned)
		}
	})
}
