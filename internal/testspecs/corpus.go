package testspecs

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// CorpusDir returns the directory of the real API documents that the
// repository keeps for tests (toolgate/testdata/corpus).
func CorpusDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "toolgate", "testdata", "corpus")
}

// Corpus returns the path of the corpus document name, such as
// "k8s-swagger.json" or "oai-examples/v3.0_petstore.yaml".
func Corpus(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(CorpusDir(), filepath.FromSlash(name))
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("corpus document %s: %v", name, err)
	}
	return p
}

// CorpusDocuments returns the path of every document in the corpus,
// sorted, the OpenAPI Initiative's examples included.
func CorpusDocuments(tb testing.TB) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(CorpusDir(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Labels returns the path of labels.tsv, the corpus operations whose safe
// default is beyond doubt.
func Labels(tb testing.TB) string {
	tb.Helper()
	return Corpus(tb, "labels.tsv")
}

// Name is a document's path relative to the corpus, for test names.
func Name(path string) string {
	rel, err := filepath.Rel(CorpusDir(), path)
	if err != nil {
		return filepath.Base(path)
	}
	return strings.ReplaceAll(filepath.ToSlash(rel), "/", "_")
}
