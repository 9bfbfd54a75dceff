package input

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string // "" for accepted
	}{
		{"order-7", 10, ""},
		{"héllo😀", 10, ""},
		{"0123456789x", 10, "at most 10"},
		{"a\x00b", 10, "NUL"},
		{"a\xffb", 10, "UTF-8"},
	} {
		err := Text("key", tt.s, tt.max)
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Text(%q): %v, want %q", tt.s, err, tt.want)
		}
	}
	err := Text("key", strings.Repeat("\x00", 1<<20), 0)
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("a megabyte of NUL: the message is %d bytes", len(err.Error()))
	}
}

func TestClean(t *testing.T) {
	got := Clean("a\x00b\xffc", 0)
	if got != "a\uFFFDb\uFFFDc" {
		t.Errorf("Clean = %q", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got = Clean(long, 51)
	if len(got) > 51 || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("Clean of 200 bytes to 51: %d bytes, %q", len(got), got)
	}
	if Clean("short", 51) != "short" {
		t.Error("Clean changed valid short text")
	}
}

func TestJSON(t *testing.T) {
	type inner struct {
		Name string
		skip string
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{map[string]any{"id": "x", "n": json.Number("1")}, ""},
		{map[string]any{"id": "a\x00"}, `evidence["id"]`},
		{map[string]any{"a\xff": 1}, "key"},
		{map[string]any{"l": []any{1, "\x00"}}, `evidence["l"][1]`},
		{map[string]any{"s": inner{Name: "\xff"}}, `evidence["s"].Name`},
		{map[string]any{"s": inner{skip: "\x00"}}, ""},
		{map[string]any{"b": []byte{0, 0xff}}, ""},
		{map[string]any{"f": math.NaN()}, "NaN"},
		{map[string]any{"c": make(chan int)}, "cannot be stored as JSON"},
		{map[string]any{"big": strings.Repeat("x", 100)}, "at most 50"},
	} {
		_, err := JSON("evidence", tt.v, 50)
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("JSON(%v): %v, want %q", tt.v, err, tt.want)
		}
	}
}
