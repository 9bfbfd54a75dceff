package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestModuleKeepsItsLayers reads the module's import graph with go list
// and fails on every rule it breaks.
func TestModuleKeepsItsLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", Module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := graph(t, out)
	if len(pkgs) < 20 {
		t.Fatalf("go list gave %d packages of the module; the test reads the wrong place", len(pkgs))
	}
	for _, bad := range Check(pkgs) {
		t.Error(bad)
	}
}

// graph decodes go list's stream of JSON objects, keeping the module's
// own packages and imports, by their paths below Module.
func graph(t *testing.T, out []byte) []Package {
	t.Helper()
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		path, ok := below(p.ImportPath)
		if !ok {
			continue
		}
		pkg := Package{Path: path}
		for _, imp := range p.Imports {
			if ip, ok := below(imp); ok {
				pkg.Imports = append(pkg.Imports, ip)
			}
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs
}

func below(importPath string) (string, bool) {
	if importPath == Module {
		return "", true
	}
	rest, ok := strings.CutPrefix(importPath, Module+"/")
	return rest, ok
}

// TestCheckFindsEveryBrokenRule: the checker is itself tested on a graph
// that breaks each rule once, and on one that breaks none.
func TestCheckFindsEveryBrokenRule(t *testing.T) {
	good := []Package{
		{Path: ""},
		{Path: "retry", Imports: []string{""}},
		{Path: "transport", Imports: []string{"", "retry"}},
		{Path: "recall/recording"},
		{Path: "recall/store", Imports: []string{"journal", "sqlstore", "recall/recording"}},
		{Path: "recall/cli", Imports: []string{"recall", "recall/consoleui", "internal/command"}},
		{Path: "cmd/recall-archive", Imports: []string{"recall/cli"}},
	}
	if bad := Check(good); len(bad) != 0 {
		t.Fatalf("a graph that keeps the rules: %q", bad)
	}
	cases := []struct {
		pkg  Package
		want string
	}{
		{Package{Path: "retry", Imports: []string{"transport"}}, "imports point down"},
		{Package{Path: "journal", Imports: []string{"recall/store"}}, "imports point down"},
		{Package{Path: "", Imports: []string{"retry"}}, "imports point down"},
		{Package{Path: "recall", Imports: []string{"toolgate/spec"}}, "side by side"},
		{Package{Path: "storetest", Imports: []string{"sqlstore"}}, "side by side"},
		{Package{Path: "recall/store", Imports: []string{"recall/cli"}}, "only cmd/recall-archive"},
		{Package{Path: "toolgate", Imports: []string{"toolgate/consoleui"}}, "only toolgate/cli"},
		{Package{Path: "cmd/toolgate", Imports: []string{"toolgate/cli", "toolgate/spec"}}, "a main package starts toolgate/cli"},
		{Package{Path: "ledger", Imports: []string{"internal/testdb"}}, "test kit"},
		{Package{Path: "toolgate", Imports: []string{"recall/recording"}}, "recall's own"},
		{Package{Path: "recall/recording", Imports: []string{"recall/store"}}, "imports point down"},
		{Package{Path: "newthing"}, "in no component"},
	}
	if bad := Check([]Package{{Path: "internal/testdb", Imports: []string{"internal/testkit"}}}); len(bad) != 0 {
		t.Errorf("a test kit importing another: %q; want nothing", bad)
	}
	for _, c := range cases {
		bad := Check([]Package{c.pkg})
		if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
			t.Errorf("%s importing %v: %q; want one line saying %q", c.pkg.Path, c.pkg.Imports, bad, c.want)
		}
	}
}
