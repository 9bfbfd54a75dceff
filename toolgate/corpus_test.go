package toolgate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// corpusRefusals are the corpus documents that must be refused, and what
// the error must say.
var corpusRefusals = map[string]string{
	"oai-examples_v2.0_json_petstore-separate_spec_swagger.json": `the reference "parameters.json#/tagsParam" leaves the document`,
	"oai-examples_v2.0_yaml_petstore-separate_spec_swagger.yaml": `the reference "parameters.yaml#/tagsParam" leaves the document`,
	"oai-examples_v3.1_webhook-example.json":                     "no paths, only webhooks",
	"oai-examples_v3.1_webhook-example.yaml":                     "no paths, only webhooks",
}

// corpusExtraEnv names an environment variable that lists more documents
// for TestCorpusSchemasCompile, separated by the system's list separator.
const corpusExtraEnv = "TOOLGATE_CORPUS_EXTRA"

// TestCorpusSchemasCompile loads every document of the corpus, GitHub's
// and those $TOOLGATE_CORPUS_EXTRA lists, and checks that each loads or is refused with an error that
// names it and says what is wrong; that every tool has a valid, unique
// name of at most 64 characters, the same on another load, and a brief
// description; and that every tool's input schema (whole and as listed,
// within its bound) and output schema, exposed or not, compiles with Go's
// jsonschema and, in one node process per document, with ajv as MCP
// clients set it up.
func TestCorpusSchemasCompile(t *testing.T) {
	t.Parallel()
	docs := testspecs.CorpusDocuments(t)
	if p := os.Getenv(testspecs.GitHubEnv); p != "" {
		docs = append(docs, p)
	}
	docs = append(docs, filepath.SplitList(os.Getenv(corpusExtraEnv))...)
	names := map[string]bool{}
	for _, path := range docs {
		names[testspecs.Name(path)] = true
	}
	for name := range corpusRefusals {
		if !names[name] {
			t.Errorf("%s, which must be refused, is not in the corpus", name)
		}
	}
	for _, path := range docs {
		name := testspecs.Name(path)
		if strings.HasPrefix(name, "..") {
			name = filepath.Base(path)
		}
		t.Run(name, func(t *testing.T) {
			doc, err := spec.Load(path)
			if want, ok := corpusRefusals[name]; ok {
				if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path+": ") {
					t.Fatalf("loaded with %v; want an error naming %s and saying %q", err, path, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cat, err := toolgate.Build(doc, config.Default())
			if err != nil {
				t.Fatal(err)
			}
			sameNames(t, cat, path)
			schemas := toolSchemas(t, cat)
			// Node compiles while Go's jsonschema does; under -short, which
			// leaves out the Node clients, Go's alone.
			ajv := func() []testspecs.AjvFailure { testspecs.NodeModules(t); return nil }
			if testing.Short() {
				ajv = func() []testspecs.AjvFailure { return nil }
			} else if _, err := testspecs.NodeModulesDir(); err == nil {
				ajv = testspecs.StartAjv(t, schemas)
			}
			resolveAll(t, schemas)
			for _, f := range ajv() {
				t.Errorf("%s: %s: %s", f.Name, f.Validator, f.Error)
			}
			t.Logf("%d tools, %d schemas, %d notes", len(cat.Tools), len(schemas), len(doc.Notes()))
		})
	}
}

// toolSchemas checks every tool's name and returns its schemas by tool
// and kind.
func toolSchemas(t *testing.T, cat *toolgate.Catalog) map[string]json.RawMessage {
	schemas := map[string]json.RawMessage{}
	seen := map[string]bool{}
	for _, tool := range cat.Tools {
		if !toolgate.ValidName(tool.Name) || seen[tool.Name] {
			t.Errorf("tool name %q: invalid or not unique", tool.Name)
		}
		seen[tool.Name] = true
		if len(tool.Name) > toolgate.MaxNameLength {
			t.Errorf("tool name %q: longer than %d characters", tool.Name, toolgate.MaxNameLength)
		}
		if d := tool.Description; len(d) > 400 || strings.Contains(d, "\n|") || strings.HasPrefix(d, "|") {
			t.Errorf("%s: a description of %d bytes, or with a table: %q", tool.Name, len(d), d)
		}
		in, err := cat.InputSchema(tool)
		if err != nil {
			t.Errorf("%s: input schema: %v", tool.Name, err)
			continue
		}
		listed, err := cat.ListedInputSchema(tool)
		if err != nil {
			t.Errorf("%s: listed input schema: %v", tool.Name, err)
			continue
		}
		if len(listed) > toolgate.MaxListedSchema {
			t.Errorf("%s: a listed input schema of %d bytes, more than %d", tool.Name, len(listed), toolgate.MaxListedSchema)
		}
		if len(listed) < len(in) && !strings.Contains(string(listed), spec.BriefCutNote) && !strings.Contains(string(in), "(recursive: ") {
			// Shorter only by its descriptions, then: nothing is cut
			// without a note.
			if strings.Count(string(listed), `"type"`) != strings.Count(string(in), `"type"`) {
				t.Errorf("%s: the listed input schema is cut without a note: %s", tool.Name, listed)
			}
		}
		if strings.Contains(string(listed), spec.BriefCutNote) {
			// A listed schema that is not cut is the whole one with
			// shorter descriptions, which compiles as that one does.
			schemas[tool.Name+" input-listed"] = listed
		}
		out, err := cat.OutputSchema(tool)
		if err != nil {
			t.Errorf("%s: output schema: %v", tool.Name, err)
			continue
		}
		for kind, s := range map[string]json.RawMessage{"input": in, "output": out} {
			if s != nil {
				schemas[fmt.Sprintf("%s %s", tool.Name, kind)] = s
			}
		}
	}
	return schemas
}

// sameNames checks that another load of the document at path names its
// tools as cat does.
func sameNames(t *testing.T, cat *toolgate.Catalog, path string) {
	doc, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := toolgate.Build(doc, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for i, tool := range cat.Tools {
		if other := again.Tools[i]; tool.Name != other.Name || tool.Operation().Where != other.Operation().Where {
			t.Errorf("%s (%s) is %s (%s) on another load", tool.Name, tool.Operation().Where, other.Name, other.Operation().Where)
		}
	}
}

// resolveAll checks that Go's jsonschema reads and resolves every schema.
func resolveAll(t *testing.T, schemas map[string]json.RawMessage) {
	for key, s := range schemas {
		var js jsonschema.Schema
		if err := json.Unmarshal(s, &js); err != nil {
			t.Errorf("%s: Go's jsonschema cannot read it: %v", key, err)
			continue
		}
		if _, err := js.Resolve(nil); err != nil {
			t.Errorf("%s: Go's jsonschema refuses it: %v", key, err)
		}
	}
}
