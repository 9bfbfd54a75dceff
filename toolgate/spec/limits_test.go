package spec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// nestedBody returns a document whose one body schema nests through
// items so that the document nests depth levels in all.
func nestedBody(depth int) string {
	// The schema is the document's eighth level.
	n := depth - 8
	return `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":` +
		strings.Repeat(`{"type":"array","items":`, n) + `{"type":"string"}` + strings.Repeat(`}`, n) +
		`}}},"responses":{"200":{"description":"ok"}}}}}}`
}

// Nesting deeper than MaxNesting is refused before anything decodes it,
// recursively or not: a Go stack overflow cannot be recovered from.
func TestDeepNestingIsRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	const levels = 2_000_000
	prefix := `{"openapi":"3.0.3","paths":{"/a":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"schema":`
	doc := prefix + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "}}}}}}}}"
	_, err := spec.Parse([]byte(doc))
	want := fmt.Sprintf("the document nests %d levels deep at line 1, column %d; toolgate reads at most %d",
		levels+8, len(prefix)+spec.MaxNesting+1-8, spec.MaxNesting)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, err := spec.Parse([]byte(nestedBody(spec.MaxNesting))); err != nil {
		t.Errorf("a document nesting %d levels: %v", spec.MaxNesting, err)
	}
	if _, err := spec.Parse([]byte(nestedBody(spec.MaxNesting + 1))); err == nil || !strings.Contains(err.Error(), "nests 1001 levels deep") {
		t.Errorf("a document nesting %d levels: %v", spec.MaxNesting+1, err)
	}
	// Brackets in strings are text.
	text := strings.Repeat("[{", 100_000)
	if _, err := spec.Parse([]byte(`{"openapi":"3.0.3","info":{"title":"` + text + `\"[["},"paths":{"/a":{"get":{"responses":{}}}}}`)); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

// YAML's nesting is limited the same way, aliases followed, and so is
// what aliases expand to ("billion laughs").
func TestYAMLNestingAndAliasesAreLimited(t *testing.T) {
	t.Parallel()
	flow := "openapi: 3.0.3\npaths: " + strings.Repeat("[", 2_000_000)
	var block strings.Builder
	block.WriteString("openapi: 3.0.3\npaths:\n")
	for i := range 2000 {
		fmt.Fprintf(&block, "%s- \n", strings.Repeat(" ", i+1))
	}
	var chain strings.Builder
	chain.WriteString("openapi: 3.0.3\nx-chain:\n  a0: &a0 [x]\n")
	for i := 1; i <= 1200; i++ {
		fmt.Fprintf(&chain, "  a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	var laughs strings.Builder
	laughs.WriteString("openapi: 3.0.3\nx-lol:\n  l0: &l0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&laughs, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	for name, c := range map[string]struct{ doc, want string }{
		"flow":    {flow, "the document nests more than 10000 levels deep at line 2; toolgate reads at most 1000"},
		"block":   {block.String(), "the document nests 2001 levels deep at line 1002, column 1001; toolgate reads at most 1000"},
		"aliases": {chain.String(), "the document nests 1203 levels deep at line 205, column 9; toolgate reads at most 1000"},
		"laughs":  {laughs.String(), "the YAML document's aliases expand it to more than 64 MiB; toolgate reads at most 64 MiB"},
	} {
		_, err := spec.Parse([]byte(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got  %v\nwant %s", name, err, c.want)
		}
	}
}

// A document larger than MaxDocumentBytes is refused, a file without
// being read, and anything else once the limit is read.
func TestDocumentSizeIsLimited(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: it takes no room on the disk.
	if err := f.Truncate(spec.MaxDocumentBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = spec.Load(big)
	if want := big + ": the document is 67108865 bytes, more than the 64 MiB toolgate reads"; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if _, err := spec.Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than the 64 MiB toolgate reads") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := spec.Parse(make([]byte, spec.MaxDocumentBytes+1)); err == nil || !strings.Contains(err.Error(), "more than the 64 MiB") {
		t.Errorf("Parse: %v", err)
	}
}

// LoadContext stops when its context is done, with the context's cause,
// whether it is reading or decoding.
func TestLoadStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	interrupted := errors.New("interrupt signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupted)
	_, err := spec.LoadContext(ctx, "../../examples/shop/openapi.yaml")
	if !errors.Is(err, interrupted) || !strings.Contains(err.Error(), "openapi.yaml: loading stopped: interrupt signal received") {
		t.Errorf("cancelled before: %v", err)
	}

	// A pipe that never finishes the document.
	fifo := filepath.Join(t.TempDir(), "spec.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.WriteString(`{"openapi": "3.0.3", "paths": {`)
	ctx, cancel = context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(interrupted) })
	done := make(chan error, 1)
	go func() {
		_, err := spec.LoadContext(ctx, fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, interrupted) {
			t.Errorf("cancelled while reading: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading from a pipe did not stop within 10 s of its context")
	}

	// A document that takes a while to decode.
	doc := testspecs.Nested(testspecs.RefChain, 32<<20, spec.MaxNesting)
	ctx, cancel = context.WithCancelCause(context.Background())
	time.AfterFunc(20*time.Millisecond, func() { cancel(interrupted) })
	if _, err := spec.ParseContext(ctx, doc); !errors.Is(err, interrupted) {
		t.Errorf("cancelled while decoding: %v", err)
	}
}
