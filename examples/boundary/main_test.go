package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// columns splits a tabwriter row: cells are padded by at least two spaces.
var columns = regexp.MustCompile(`\s{2,}`)

// TestRunPrintsTheTable keeps the quick start's first command honest.
func TestRunPrintsTheTable(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	want := map[string][]string{
		"refused twice":          {"3", "1", "answered 200, applied"},
		"read, then connection":  {"1", "1", "ambiguous"},
		"no answer past":         {"1", "1", "ambiguous"},
		"503 Service":            {"1", "1", "answered 503, ambiguous"},
		"reset, 503, then 200":   {"3", "3", "answered 200, applied"},
		"(opted in)":             {"2", "2", "answered 200, applied"},
		"429 Retry-After 60s, 1": {"1", "1", "answered 429, not_applied: stopped at once"},
	}
	for name, cols := range want {
		found := false
		for _, l := range lines {
			if !strings.Contains(l, name) {
				continue
			}
			found = true
			got := columns.Split(strings.TrimSpace(l), -1)
			if len(got) != 5 || got[2] != cols[0] || got[3] != cols[1] || !strings.HasPrefix(got[4], cols[2]) {
				t.Errorf("row %q = %q; want attempts %s, effects %s, result %s...", name, got, cols[0], cols[1], cols[2])
			}
		}
		if !found {
			t.Errorf("no row for %q in:\n%s", name, out.String())
		}
	}
}
