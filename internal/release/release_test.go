package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// registrySchema is the registry's own schema of server.json.
func registrySchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "server.schema.2025-12-11.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.ID != SchemaURL {
		t.Fatalf("the schema in testdata is %s, the entry says %s", s.ID, SchemaURL)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServerJSONMeetsTheRegistrysSchema validates the entry of a release
// against the MCP registry's published schema, and the schema against an
// entry it must refuse, so that the check can fail.
func TestServerJSONMeetsTheRegistrysSchema(t *testing.T) {
	schema := registrySchema(t)
	for _, v := range []string{"v0.4.0", "v1.2.3-rc.1", "v0.0.0-check+0123456789ab"} {
		b, err := ServerJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		var entry map[string]any
		if err := json.Unmarshal(b, &entry); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(entry); err != nil {
			t.Errorf("%s: %v\n%s", v, err, b)
		}
		if entry["version"] != strings.TrimPrefix(v, "v") {
			t.Errorf("%s: version %v", v, entry["version"])
		}
	}
	bad := map[string]any{"name": "toolgate", "description": strings.Repeat("x", 101), "version": "1.0.0"}
	if err := schema.Validate(bad); err == nil {
		t.Fatal("the schema took a name without a namespace and a description past 100 characters")
	}
	if _, err := ServerJSON("1.2.3"); err == nil {
		t.Fatal("a version without its v was taken")
	}
}
