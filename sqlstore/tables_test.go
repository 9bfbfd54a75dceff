package sqlstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlySQLStoreNamesTheCoreTables: the journal's and the ledger's
// tables are sqlstore's own. A product reaches them through the journal's
// and the ledger's API, and keeps its own tables; no code of the module
// outside sqlstore names one of the core's tables.
func TestOnlySQLStoreNamesTheCoreTables(t *testing.T) {
	t.Parallel()
	schemas, err := filepath.Glob("schema/*.sql")
	if err != nil || len(schemas) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	var tables []string
	for _, path := range schemas {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`CREATE TABLE (\w+)`).FindAllStringSubmatch(string(data), -1) {
			if !strings.HasSuffix(m[1], "_v2") {
				tables = append(tables, m[1])
			}
		}
	}
	named := regexp.MustCompile(`\b(` + strings.Join(tables, "|") + `|rubicon_schema)\b`)
	checked := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Our own package, and the comparison module with its own go.mod.
			if path == filepath.Join("..", "sqlstore") || path == filepath.Join("..", "bench") || strings.HasPrefix(d.Name(), ".") && path != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if m := named.Find(data); m != nil {
			t.Errorf("%s names the core's table %s: go through the journal's or the ledger's API, or add the view the product needs to them and to sqlstore", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d Go files checked: the walk missed the module", checked)
	}
}
