package toolgate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// constraintKeywords bound a value without naming a subschema.
var constraintKeywords = []string{"enum", "const", "pattern", "format", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "required", "minProperties", "maxProperties"}

// hidden returns the constraints of full, a whole input schema, that
// listed, the same schema as tools/list gives it, leaves out where it
// keeps the part that has them: where each part listed is, the listed
// part must have the same constraints, or, for an enum too long to
// keep, say how many values it has.
func hidden(listed, full any, path string) []string {
	l, lok := listed.(map[string]any)
	f, fok := full.(map[string]any)
	if !lok || !fok {
		return nil
	}
	var out []string
	cut := strings.Contains(fmt.Sprint(l["description"]), spec.BriefCutNote)
	want := f
	if branches, ok := l["anyOf"].([]any); ok && cut {
		// A cut part kept its alternatives' constraints.
		alts, _ := flat(f)["anyOf"].([]any)
		if alts == nil {
			alts, _ = flat(f)["oneOf"].([]any)
		}
		var out []string
		for i := range min(len(alts), len(branches)) {
			out = append(out, hidden(branches[i], alts[i], fmt.Sprintf("%s.anyOf[%d]", path, i))...)
		}
		return out
	}
	if cut {
		want = flat(f)
	}
	for _, k := range constraintKeywords {
		fv, ok := want[k]
		if !ok {
			continue
		}
		lv, kept := l[k]
		switch {
		case k == "enum" && !kept && strings.Contains(fmt.Sprint(l["description"]), fmt.Sprintf("One of %d values", len(fv.([]any)))):
		case k == "enum" && kept && sameValues(withoutNull(lv), withoutNull(fv)):
		case !kept || !reflect.DeepEqual(lv, fv):
			out = append(out, fmt.Sprintf("%s: %s is %v in the whole schema, %v as listed", path, k, fv, lv))
		}
	}
	if cut {
		// A cut part keeps its items' constraints where they are a
		// scalar's.
		if items, ok := flat(f)["items"].(map[string]any); ok && l["items"] != nil {
			out = append(out, hidden(l["items"], items, path+".items")...)
		}
		return out
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		out = append(out, hidden(l[k], f[k], path+"."+k)...)
	}
	lp, _ := l["properties"].(map[string]any)
	fp, _ := f["properties"].(map[string]any)
	for name, sub := range lp {
		out = append(out, hidden(sub, fp[name], path+"."+name)...)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems"} {
		fl, _ := f[k].([]any)
		ll, _ := l[k].([]any)
		if k == "oneOf" && ll == nil {
			ll, _ = l["anyOf"].([]any) // a cut oneOf is listed as anyOf
		}
		for i := range min(len(ll), len(fl)) {
			out = append(out, hidden(ll[i], fl[i], fmt.Sprintf("%s.%s[%d]", path, k, i))...)
		}
	}
	return out
}

// flat returns the constraints of a whole schema that a cut part stands
// for: its own, those of the parts it is allOf, and those of the one
// branch that is not null where it is nullable.
func flat(f map[string]any) map[string]any {
	out := map[string]any{}
	add := func(m map[string]any) {
		for k, v := range m {
			if _, seen := out[k]; !seen {
				out[k] = v
			}
		}
	}
	add(f)
	all, _ := f["allOf"].([]any)
	for _, sub := range all {
		if m, ok := sub.(map[string]any); ok {
			add(flat(m))
		}
	}
	if alts, _ := f["anyOf"].([]any); len(alts) == 2 {
		for i, sub := range alts {
			if m, _ := sub.(map[string]any); m["type"] == "null" && len(m) == 1 {
				if other, ok := alts[1-i].(map[string]any); ok {
					add(flat(other))
				}
			}
		}
	}
	return out
}

func withoutNull(v any) []any {
	l, _ := v.([]any)
	return slices.DeleteFunc(slices.Clone(l), func(e any) bool { return e == nil })
}

func sameValues(a, b []any) bool { return reflect.DeepEqual(a, b) }

// Every part of a listed input schema keeps the enums, required
// properties, bounds and patterns that the full check applies, on every
// corpus document (and GitHub's and OpenAI's): Twilio's AccountSid keeps
// its pattern, Stripe's allowed_categories their values.
func TestListedSchemasKeepTheirConstraints(t *testing.T) {
	t.Parallel()
	docs := append(testspecs.CorpusDocuments(t), openaiDoc)
	if p := os.Getenv(testspecs.GitHubEnv); p != "" {
		docs = append(docs, p)
	}
	for _, path := range docs {
		doc, err := spec.Load(path)
		if err != nil {
			continue // the corpus's refusals are TestCorpusSchemasCompile's
		}
		cat := catalog(t, path, "")
		checked, cutTools := 0, 0
		for _, tool := range cat.Tools {
			listed, err := cat.ListedInputSchema(tool)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(listed), spec.BriefCutNote) {
				continue // listed whole, with shorter descriptions
			}
			whole, err := cat.InputSchema(tool)
			if err != nil {
				t.Fatal(err)
			}
			var l, f any
			json.Unmarshal(listed, &l)
			json.Unmarshal(whole, &f)
			cutTools++
			for _, h := range hidden(l, f, tool.Name) {
				checked++
				if checked <= 20 {
					t.Errorf("%s: %s", testspecs.Name(path), h)
				}
			}
		}
		if checked > 20 {
			t.Errorf("%s: %d more constraints hidden", testspecs.Name(path), checked-20)
		}
		t.Logf("%s: %d of %d tools listed cut", testspecs.Name(path), cutTools, len(doc.Operations))
	}
}

// Stripe's merchant categories are 288 values, more than a listed schema
// keeps: it counts them, and a refusal of a value lists them all.
func TestLongEnumsAreCountedAndListedOnRefusal(t *testing.T) {
	t.Parallel()
	cat := catalog(t, testspecs.Corpus(t, "stripe-spec3-2022.json"), "")
	listed, err := cat.ListedInputSchema(cat.Lookup("PostIssuingCards"))
	if err != nil || !strings.Contains(string(listed), `"allowed_categories":{"items":{"description":"One of 288 values; a call with another is refused with the list.`) {
		t.Fatalf("the listed schema: %s", listed)
	}
	text := refused(t, cat, "PostIssuingCards", `{"body":{"currency":"usd","type":"virtual","spending_controls":{"allowed_categories":["fast_food"]}}}`)
	if !strings.Contains(text, `body.spending_controls.allowed_categories[0] is "fast_food"; it must be one of "ac_refrigeration_repair"`) ||
		!strings.Contains(text, `"wrecking_and_salvage_yards"`) || strings.Contains(text, "more)") {
		t.Errorf("the refusal: %s", text)
	}
}
