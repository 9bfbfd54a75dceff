package toolgate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// loadAndList does what toolgate serve does before its first tools/list
// answer: load the document, build the catalog, list the tools. It
// returns the size of the list, or the error that refused the document.
func loadAndList(doc []byte) (int, error) {
	d, err := spec.Parse(doc)
	if err != nil {
		return 0, err
	}
	cat, err := toolgate.Build(d, config.Default())
	if err != nil {
		return 0, err
	}
	list, err := cat.ListJSON()
	return len(list), err
}

// BenchmarkNestedDocuments loads and lists documents of nested schemas
// (testspecs.Nested) of growing size: the time per byte must not grow
// with the size.
func BenchmarkNestedDocuments(b *testing.B) {
	for _, shape := range testspecs.Shapes {
		for _, size := range []int{100 << 10, 400 << 10, 1 << 20, 2 << 20, 4 << 20} {
			doc := testspecs.Nested(shape, size, spec.MaxNesting)
			b.Run(fmt.Sprintf("%s/%dKB", shape, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					if _, err := loadAndList(doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// hostileDocuments are documents that take a loader whose time grows
// faster than their size minutes or more, at 2 MB.
func hostileDocuments() map[string][]byte {
	docs := map[string][]byte{}
	for _, shape := range testspecs.Shapes {
		docs[shape] = testspecs.Nested(shape, 2<<20, spec.MaxNesting)
	}
	// One schema nested 40,000 levels deep: refused.
	docs["deep"] = testspecs.Nested(testspecs.NestedProperties, 2<<20, 80_000)
	// A YAML mapping of 150,000 keys.
	var wide strings.Builder
	wide.WriteString("openapi: 3.0.3\ninfo: {title: wide, version: '1'}\npaths:\n  /a: {get: {responses: {'200': {description: ok}}}}\nx-wide:\n")
	for i := range 150_000 {
		fmt.Fprintf(&wide, "  k%d: v\n", i)
	}
	docs["wide YAML"] = []byte(wide.String())
	return docs
}

// TestHostileDocumentsLoadPromptly loads and lists each hostile document,
// or has it refused, well within a generous bound: a regression to
// quadratic time fails here rather than hanging a server's start.
func TestHostileDocumentsLoadPromptly(t *testing.T) {
	t.Parallel()
	for name, doc := range hostileDocuments() {
		done := make(chan error, 1)
		go func() {
			_, err := loadAndList(doc)
			done <- err
		}()
		select {
		case err := <-done:
			if refused := err != nil; refused != (name == "deep") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s (%d KB) did not load within 60 s", name, len(doc)>>10)
		}
	}
}
