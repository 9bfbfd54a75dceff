package config_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/doccheck"
	"github.com/rubicon-go/rubicon/toolgate/config"
)

// TestDocsExamples: every configuration the documents show loads. A
// block marked toolgate-upstream holds settings of upstream, shown
// without it; one marked toolgate-config may hold several configurations
// separated by ---.
func TestDocsExamples(t *testing.T) {
	for _, kind := range []string{"toolgate-config", "toolgate-upstream"} {
		for _, b := range doccheck.Examples(t, kind) {
			text := b.Text
			if kind == "toolgate-upstream" {
				text = "upstream:\n  " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n  ") + "\n"
			}
			for i, doc := range strings.Split(text, "\n---\n") {
				if _, err := config.Parse([]byte(doc)); err != nil {
					t.Errorf("%s:%d: configuration %d of the block does not load: %v\n%s", b.File, b.Line, i+1, err, doc)
				}
			}
		}
	}
}

// everySetting reaches into every mapping a configuration may hold, so
// that Settings lists them all.
const everySetting = `
upstream:
  url: https://api.example.com
  auth: {type: bearer, env: API_TOKEN}
  schemes: {s: {type: bearer, env: S_TOKEN}}
defaults: {expose: {show: read, confirm: write}, rate_limit: {write: {per_minute: 10}}}
tags: {t: {expose: {show: read, confirm: write}, rate_limit: {per_minute: 2}}}
tools: {o: {retry: opted_in, rate_limit: {per_minute: 2}}}
`

// TestDocsListEverySetting: docs/configuration.md's table has a row for
// each setting the loader accepts, and none for a setting it does not.
func TestDocsListEverySetting(t *testing.T) {
	paths, err := config.Settings([]byte(everySetting))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`^(tags|tools|upstream\.schemes|upstream\.variables)\.[^.]+`)
	class := regexp.MustCompile(`^defaults\.rate_limit\.[a-z]+\.`)
	var accepted []string
	for _, p := range paths {
		p = named.ReplaceAllString(p, "$1.NAME")
		p = class.ReplaceAllString(p, "defaults.rate_limit.CLASS.")
		if !slices.Contains(accepted, p) {
			accepted = append(accepted, p)
		}
	}
	var documented []string
	row := regexp.MustCompile("^\\| `([a-zA-Z_.]+)` \\|")
	for _, b := range doccheck.Sections(t, "docs/configuration.md", "Every setting") {
		for _, line := range strings.Split(b, "\n") {
			if m := row.FindStringSubmatch(line); m != nil {
				documented = append(documented, m[1])
			}
		}
	}
	for _, p := range accepted {
		if !slices.Contains(documented, p) {
			t.Errorf("the setting %s has no row in docs/configuration.md's table of every setting", p)
		}
	}
	for _, d := range documented {
		if !slices.Contains(accepted, d) {
			t.Errorf("docs/configuration.md's table has a row for %s, which the loader does not accept", d)
		}
	}
	if len(accepted) < 20 {
		t.Fatalf("only %d settings found: %v", len(accepted), accepted)
	}
}
