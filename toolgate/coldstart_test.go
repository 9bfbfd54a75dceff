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

// BenchmarkGitHubFirstList measures, in one process, what toolgate serve
// does before its first tools/list answer on GitHub's description: load,
// classify, build the server, list. cmd/toolgate's BenchmarkColdStart
// measures the same from process start.
func BenchmarkGitHubFirstList(b *testing.B) {
	path := testspecs.GitHub(b)
	ctx := context.Background()
	for b.Loop() {
		doc, err := spec.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		cat, err := toolgate.Build(doc, config.Default())
		if err != nil {
			b.Fatal(err)
		}
		caller, err := toolgate.NewCaller(cat, "http://127.0.0.1:1", config.Auth{}, nil, nil, nil)
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
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) != len(cat.Exposed()) {
			b.Fatalf("listed %v, %v", res, err)
		}
		cs.Close()
		ss.Wait()
	}
}
