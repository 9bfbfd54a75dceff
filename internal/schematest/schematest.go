// Package schematest checks a command's JSON output against the JSON
// Schema that docs/schemas publishes for it, so that the documented
// contract and the program cannot drift apart. Tests only.
package schematest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Dir returns docs/schemas of the module that holds the working
// directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "schemas")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("schematest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// load reads the schema at path.
func load(path string) (*jsonschema.Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// Check fails t unless out, a command's --json output, is valid against
// docs/schemas/name (such as "recall-archive/status.json"). A schema
// refers to the shared ones beside it by relative $ref.
func Check(t testing.TB, name string, out []byte) {
	t.Helper()
	path := filepath.Join(Dir(t), filepath.FromSlash(name))
	s, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{
		BaseURI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String(),
		Loader:  func(u *url.URL) (*jsonschema.Schema, error) { return load(filepath.FromSlash(u.Path)) },
	})
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("output for %s is not JSON: %v\n%s", name, err, out)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("output does not match %s: %v\n%s", name, err, out)
	}
}
