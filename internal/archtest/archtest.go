// Package archtest checks the module's layering as a test: imports point
// down, the products never import each other, the core imports no product,
// a product's command line is reached only from its main package, and the
// main packages stay thin. The rules are docs/architecture.md's, written
// once here as data; [Check] applies them to an import graph, which the
// package's test reads from `go list`.
package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Module is the module whose packages the rules name, by their paths
// below it.
const Module = "github.com/rubicon-go/rubicon"

// A component is a package and the packages below it, at a level: a
// package may import a package of its own component, or of a component at
// a lower level. Components at the same level never import each other.
type component struct {
	path  string // below Module; "" is the root package
	level int
}

// components lists every component, most specific path first where paths
// nest. Levels, bottom up: the vocabulary; pure decisions; the core
// services and their test kit; the one store and its conformance suite;
// what both products share, and a product's own vocabulary; the products;
// the programs. A component nested in another (recall/recording in
// recall) is that one's own: only its packages import it.
var components = []component{
	{"", 0}, {"internal/input", 0}, {"internal/version", 0},
	{"retry", 1},
	{"transport", 2}, {"journal", 2}, {"ledger", 2}, {"faultserver", 2},
	{"sqlstore", 3}, {"storetest", 3}, {"internal/output", 3},
	{"console", 4}, {"internal/command", 4}, {"recall/recording", 4},
	{"recall", 5}, {"toolgate", 5}, {"internal/shopapi", 5},
	{"cmd/recall-archive", 6}, {"cmd/toolgate", 6},
	{"examples/archive", 6}, {"examples/boundary", 6}, {"examples/shop", 6},
	{"internal/release", 6},
}

// testOnly are packages that only tests may import.
var testOnly = []string{"internal/testkit", "internal/testdb", "internal/schematest", "internal/browsertest", "internal/testspecs", "internal/archtest", "internal/doccheck"}

// entryPoints are the packages that only the named importers may import:
// a product's command line is the program's, its console pages are its
// command line's.
var entryPoints = map[string][]string{
	"recall/cli":         {"cmd/recall-archive", "examples/archive"},
	"toolgate/cli":       {"cmd/toolgate"},
	"recall/consoleui":   {"recall/cli"},
	"toolgate/consoleui": {"toolgate/cli"},
}

// thinMains are the main packages that only start their product's command
// line: they import nothing of the module but it.
var thinMains = map[string]string{
	"cmd/recall-archive": "recall/cli",
	"cmd/toolgate":       "toolgate/cli",
}

// Package is one package of the graph: its path below Module and the
// module's packages it imports (outside its tests).
type Package struct {
	Path    string
	Imports []string
}

// Check returns the rules pkgs break, one line each, sorted.
func Check(pkgs []Package) []string {
	var bad []string
	for _, p := range pkgs {
		from, ok := componentOf(p.Path)
		if !ok && !isTestOnly(p.Path) {
			bad = append(bad, fmt.Sprintf("%s: in no component of the layering: add it to archtest's components", show(p.Path)))
			continue
		}
		for _, imp := range p.Imports {
			if why := breaks(p.Path, from, imp); why != "" {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", show(p.Path), show(imp), why))
			}
		}
		if only, ok := thinMains[p.Path]; ok {
			for _, imp := range p.Imports {
				if imp != only {
					bad = append(bad, fmt.Sprintf("%s imports %s: a main package starts %s and nothing else", show(p.Path), show(imp), show(only)))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// breaks says which rule the import of imp by path, of component from,
// breaks, or "".
func breaks(path string, from component, imp string) string {
	if isTestOnly(imp) && !isTestOnly(path) {
		return "it is a test kit, for tests and test kits only"
	}
	if importers, ok := entryPoints[imp]; ok && !slices.Contains(importers, path) {
		return "only " + strings.Join(mapShow(importers), " and ") + " may"
	}
	to, ok := componentOf(imp)
	switch {
	case !ok:
		return ""
	case to.path == from.path:
		return ""
	case nestedIn(to) != "" && !within(path, nestedIn(to)):
		return fmt.Sprintf("%s is %s's own: only %s's packages import it", show(to.path), nestedIn(to), nestedIn(to))
	case to.level == from.level:
		return fmt.Sprintf("%s and %s are side by side (level %d); neither imports the other", show(from.path), show(to.path), to.level)
	case to.level > from.level:
		return fmt.Sprintf("imports point down: %s is at level %d, above %s's %d", show(to.path), to.level, show(from.path), from.level)
	}
	return ""
}

// componentOf returns the component path belongs to.
func componentOf(path string) (component, bool) {
	best, found := component{}, false
	for _, c := range components {
		if within(path, c.path) && (!found || len(c.path) > len(best.path)) {
			best, found = c, true
		}
	}
	return best, found
}

// nestedIn returns the path of the component that c is nested in, whose
// packages alone may import it, or "" if it is nested in none.
func nestedIn(c component) string {
	outer := ""
	for _, o := range components {
		if o.path != "" && o.path != c.path && within(c.path, o.path) && len(o.path) > len(outer) {
			outer = o.path
		}
	}
	return outer
}

func within(path, dir string) bool {
	if dir == "" {
		return path == ""
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func isTestOnly(path string) bool {
	return slices.ContainsFunc(testOnly, func(dir string) bool { return within(path, dir) })
}

func show(path string) string {
	if path == "" {
		return "rubicon (the root)"
	}
	return path
}

func mapShow(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = show(p)
	}
	return out
}
