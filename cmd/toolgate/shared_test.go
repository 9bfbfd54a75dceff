package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rubicon-go/rubicon/internal/shopapi"
	"github.com/rubicon-go/rubicon/internal/testdb"
)

// sharedJournals are the journals several servers share: one SQLite file,
// one PostgreSQL database.
var sharedJournals = []struct {
	name string
	db   func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "journal.db") }},
	{"postgres", func(t *testing.T) string { return testdb.Postgres(t) }},
}

// slowUpstream serves the example API on loopback, answering each order
// placement delay after it applied it.
func slowUpstream(t *testing.T, delay time.Duration) (*shopapi.API, string) {
	t.Helper()
	api := shopapi.New()
	return api, loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			defer time.Sleep(delay) // applied at once, answered late
		}
		api.ServeHTTP(w, r)
	}))
}

// connectHTTP connects a go-sdk client named name to the server at url.
func connectHTTP(t *testing.T, name, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// resultText is the text toolgate answers a call with, its first content.
func resultText(r *mcp.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// TestGuardAcrossServers runs two toolgate serve --http processes on one
// journal, and calls the same write on both at once, by two clients: the
// journal's guard lets one through and refuses the other, as one server
// alone would, however many servers share it.
func TestGuardAcrossServers(t *testing.T) {
	const rounds = 5
	for _, sj := range sharedJournals {
		t.Run(sj.name, func(t *testing.T) {
			api, base := slowUpstream(t, 700*time.Millisecond)
			env := []string{"TOOLGATE_DB=" + sj.db(t)}
			var sessions []*mcp.ClientSession
			for i := range 2 {
				url := serveHTTP(t, env, "--http", "127.0.0.1:0", "--upstream", base)
				sessions = append(sessions, connectHTTP(t, fmt.Sprintf("agent-%d", i), url))
			}
			for round := 1; round <= rounds; round++ {
				before := api.Effects()
				// The same call on both, each round its own.
				params := &mcp.CallToolParams{Name: "createOrder", Arguments: map[string]any{"body": map[string]any{"sku": "G1", "quantity": round}}}
				results := make([]*mcp.CallToolResult, len(sessions))
				errs := make([]error, len(sessions))
				var ready, wg sync.WaitGroup
				ready.Add(len(sessions))
				for i, cs := range sessions {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ready.Done()
						ready.Wait()
						results[i], errs[i] = cs.CallTool(context.Background(), params)
					}()
				}
				wg.Wait()
				applied, refused := 0, 0
				for i, r := range results {
					if errs[i] != nil {
						t.Fatalf("round %d, server %d: %v", round, i, errs[i])
					}
					switch text := resultText(r); {
					case !r.IsError:
						applied++
					case strings.HasPrefix(text, "REFUSED: an identical call to createOrder (same arguments) is in flight. Nothing was sent."):
						refused++
					default:
						t.Errorf("round %d, server %d: %s", round, i, text)
					}
				}
				if effects := api.Effects() - before; effects != 1 || applied != 1 || refused != 1 {
					t.Fatalf("round %d: %d effects upstream, %d calls applied, %d refused; want 1, 1, 1", round, effects, applied, refused)
				}
			}
		})
	}
}
