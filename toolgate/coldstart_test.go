package toolgate_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/testspecs"
	"github.com/rubicon-go/rubicon/toolgate"
	"github.com/rubicon-go/rubicon/toolgate/config"
	"github.com/rubicon-go/rubicon/toolgate/spec"
)

// BenchmarkFirstList measures, in one process, what toolgate serve does
// before its first tools/list answer, on GitHub's description and
// Kubernetes' document: load, classify, build the server, list (every
// page). cmd/toolgate's BenchmarkColdStart measures the same from
// process start.
func BenchmarkFirstList(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"github", testspecs.GitHub(b)},
		{"kubernetes", testspecs.Corpus(b, "k8s-swagger.json")},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				firstList(b, c.path)
			}
		})
	}
}

func firstList(b *testing.B, path string) {
	ctx := context.Background()
	doc, err := spec.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := toolgate.Build(doc, config.Default())
	if err != nil {
		b.Fatal(err)
	}
	caller, err := toolgate.NewCaller(cat, "http://127.0.0.1:1", config.Upstream{}, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := toolgate.NewServer(cat, caller)
	if err != nil {
		b.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != len(cat.Exposed()) {
		b.Fatalf("listed %d tools of %d", n, len(cat.Exposed()))
	}
	cs.Close()
	ss.Wait()
}
