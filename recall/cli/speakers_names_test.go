package cli

import (
	"maps"
	"strings"
	"testing"
)

// TestParseNames reads speakers' names as the command line gives them,
// apart from any archive: LABEL=NAME, the name kept as given (spaces and
// = too), an empty one to take a name away, and an error naming what
// is wrong otherwise (a usage error: speakers_test.go runs one).
func TestParseNames(t *testing.T) {
	names, err := parseNames([]string{"A=Alice", "B=Bob = Smith", " C =", "Speaker D=Dee"})
	want := map[string]string{"A": "Alice", "B": "Bob = Smith", "C": "", "Speaker D": "Dee"}
	if err != nil || !maps.Equal(names, want) {
		t.Errorf("parseNames: %v, %v; want %v", names, err, want)
	}
	if names, err := parseNames(nil); err != nil || len(names) != 0 {
		t.Errorf("no names: %v, %v", names, err)
	}
	for arg, why := range map[string]string{"Alice": "names no speaker", "=Alice": "no label", "A=x A=y": "named twice"} {
		_, err := parseNames(strings.Fields(arg))
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseNames(%q): %v; want an error saying it %s", arg, err, why)
		}
	}
}
