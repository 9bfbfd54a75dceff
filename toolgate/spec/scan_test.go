package spec

import (
	"slices"
	"testing"
)

func TestRefOfReadsOnlyTheTopLevel(t *testing.T) {
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
			if f.ref == "#/b" && f.where != "#/components/schemas/S/properties/b/items" {
				t.Errorf("#/b found at %s", f.where)
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
