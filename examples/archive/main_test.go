package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemo keeps the quick start's first command honest.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, t.TempDir()); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"5 files added (4 new contents)",
		"2 requests paid for in this run; 2 recordings done, 2 ambiguous",
		"charged=true",
		"resolved as applied",
		"charged=false",
		"resolved as not_applied",
		"0 files and 1 requests queued again",
		"4 recordings done, 0 ambiguous",
		"spent $0.001",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}
}
